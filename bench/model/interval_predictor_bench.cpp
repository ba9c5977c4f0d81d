// bench-model-predictor: the cost of evaluating one candidate configuration
// with IntervalPredictor (thesis eq. 5.2); the target is <= 10 us
// for 64 processes, so that AMP can evaluate hundreds per sampling interval).
// Google Benchmark; the argument is the process count of the candidates.
#include <benchmark/benchmark.h>

#include <vector>

#include "model/interval_predictor.hpp"

namespace {

using namespace flexmpi;

// A Jacobi-like interval on `p` processes: a halo exchange, an allreduce of
// the residual, and a block of rows per process with uneven work.
CurrentState jacobi_state(int p) {
  CurrentState s;
  for (int i = 0; i < p; ++i) {
    s.rows.push_back(1000 + i);
    s.work.push_back(1e6 * (1 + i % 3));
  }
  s.next_work = 2e6 * p;
  s.comm = {{Routine::send_recv, p, 200, 200 * 8192.0, 200 * 8192.0},
            {Routine::allreduce, p, 100, 800, 800},
            {Routine::bcast, p, 1, 64, 0}};
  s.lambda = 1.1;
  return s;
}

// Candidates alternate between staying on p and growing to p + 1 (one spawned,
// rows re-split), as a policy scanning configurations would.
void BM_PredictCandidate(benchmark::State& bench) {
  const int p = static_cast<int>(bench.range(0));
  MachineProfile profile = MachineProfile::defaults();
  profile.intra_node.bands = {{4096, 5e-7, 3e-10}, {1 << 20, 2e-6, 1e-10}, {0, 0, 3e-10}};
  const CurrentState state = jacobi_state(p);
  std::int64_t total = 0;
  for (std::int64_t rows : state.rows) total += rows;
  std::vector<Candidate> candidates;
  for (int q : {p, p + 1}) {
    Candidate c;
    for (int i = 0; i < q; ++i) {
      c.speeds.push_back(1e6 * (1 + i % 4));
      c.rows.push_back(total / q + (i < total % q ? 1 : 0));
    }
    c.spawned = q - p;
    c.busiest_bytes = 8.0 * 1000 * 8192;
    c.busiest_messages = 2;
    candidates.push_back(c);
  }
  const IntervalPredictor predictor(profile, MpiLibrary::open_mpi, state);
  std::size_t k = 0;
  for (auto _ : bench) {
    benchmark::DoNotOptimize(predictor.predict(candidates[k++ & 1]).total());
  }
  bench.SetItemsProcessed(bench.iterations());
}
BENCHMARK(BM_PredictCandidate)->Arg(4)->Arg(16)->Arg(64)->Arg(256);

}  // namespace

BENCHMARK_MAIN();
