// Multi-process load balancing through the C API (thesis 5.2, Fig. 5.14):
// a row-proportional kernel on processes emulated at different speeds must
// converge to a partition proportional to those speeds, and the registered
// data must follow, element for element.
//
// "Those speeds" are what the processes run at: burn mode emulates a
// fraction of the process's own core (docs/reference/behaviour.md, Emulation), and the two vCPUs of
// the test VMs differ by up to 1.7x in speed from one run to the next (the
// real time per row of the same kernel: 1.3 to 2.2 us on rank 0, 10 runs). The test therefore times
// its kernel on each core and expects the partition those real times and the emulated speeds give;
// a fixed 2:1 failed about once per CI run.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "flexmpi.h"
#include "util/statistics.hpp"

namespace {

constexpr int kRows = 3000;

// Work proportional to the rows held: ~8 us per row on this machine, so a
// sampling interval (~40 ms) is long against scheduler noise.
double compute(const double* x, int count) {
  double sum = 0.0;
  for (int i = 0; i < count; ++i) {
    for (int k = 0; k < 1600; ++k) sum += x[i] * 1e-9 * k;
  }
  return sum;
}

constexpr double kEmulatedSpeed[2] = {1.0, 0.5};  // FLEXMPI_EMULATE_SPEED, set by CTest

struct BalancedRun {
  int count = 0, displ = 0;
  std::vector<int> counts_seen;        // this process's count after each evaluation
  std::vector<double> real_row_times;  // the kernel's real seconds per row, per iteration
};

// Runs `iterations` monitored iterations of the kernel with balancing,
// checking after every redistribution that each element is its global index.
BalancedRun run(int iterations) {
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  BalancedRun result;
  EXPECT_EQ(XMPI_Get_wsize(rank, nprocs, kRows, &result.count, &result.displ), XMPI_SUCCESS);
  auto* x = static_cast<double*>(std::malloc(sizeof(double) * result.count));
  for (int i = 0; i < result.count; ++i) x[i] = result.displ + i;
  EXPECT_EQ(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);
  volatile double sink = 0.0;
  for (int it = 0; it < iterations; ++it) {
    EXPECT_EQ(XMPI_Monitor_si_init(), XMPI_SUCCESS);
    const double start = MPI_Wtime();  // the emulation pads after the kernel, in the library
    sink = sink + compute(x, result.count);
    result.real_row_times.push_back((MPI_Wtime() - start) / std::max(result.count, 1));
    double total = 0.0;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    EXPECT_EQ(
        XMPI_Eval_lbalance(rank, nprocs, it, iterations, &result.count, &result.displ, nullptr),
        XMPI_SUCCESS)
        << XMPI_Last_error_message();
    result.counts_seen.push_back(result.count);
    for (int i = 0; i < result.count; ++i) {
      if (x[i] != result.displ + i) {
        ADD_FAILURE() << "element " << result.displ + i << " holds " << x[i] << " after iteration "
                      << it;
        break;
      }
    }
  }
  std::free(x);
  return result;
}

TEST(LoadBalancing, ConvergesToTheEmulatedSpeeds) {
  // FLEXMPI_EMULATE_SPEED=1.0,0.5 (set by CTest): rank 1 is a half-speed core.
  // 16 sampling intervals of 25 iterations (~40 ms each). The first move
  // comes from two intervals of start-up (imbalance 0.20-0.73 measured in CI,
  // 1670:1330 to 2213:787) and the next needs a full FLEXMPI_LB_WINDOW on the
  // new blocks: 8 intervals left it one chance to correct, at the last
  // interval, and the test failed about once per CI run; 16 leave two.
  const BalancedRun result = run(400);
  int counts[2] = {0, 0};
  int mine = result.count;
  MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, XMPI_COMM_WORLD);
  EXPECT_EQ(counts[0] + counts[1], kRows);
  // The emulated time per row of each process (its core's real time over
  // its emulated speed) over what the last move was decided on: up to a
  // FLEXMPI_LB_WINDOW (5 intervals) before it. A balanced partition gives
  // each process rows in inverse proportion to it. (Judged on the last
  // intervals instead, a run whose cores changed speed after the last move
  // failed: the balancer waits for a window's evidence, by design.) No move:
  // the last 5 intervals, which an unbalanced 1:1 fails.
  const auto& times = result.real_row_times;
  std::size_t end = times.size();  // the iterations the last move was decided on: [0, end)
  int before = kRows / 2;          // every process starts with an equal block
  for (std::size_t it = 0; it < result.counts_seen.size(); ++it) {
    if (result.counts_seen[it] != before) end = it + 1;
    before = result.counts_seen[it];
  }
  const std::size_t begin = end > 125 ? end - 125 : 0;
  const std::vector<double> last(times.begin() + static_cast<std::ptrdiff_t>(begin),
                                 times.begin() + static_cast<std::ptrdiff_t>(end));
  double emulated_row_time[2] = {0.0, 0.0};
  int rank = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  const double own = flexmpi::median(last) / kEmulatedSpeed[rank];
  MPI_Allgather(&own, 1, MPI_DOUBLE, emulated_row_time, 1, MPI_DOUBLE, XMPI_COMM_WORLD);
  const double expected = emulated_row_time[1] / emulated_row_time[0];
  const double ratio = static_cast<double>(counts[0]) / counts[1];
  // Within 20 %: either core's speed drifts by 10-25 % over a few hundred
  // milliseconds (docs/design/emulation.md), and a window's median is not one
  // iteration's. On equal cores the expectation is 2:1.
  EXPECT_GT(ratio, expected / 1.2) << counts[0] << " : " << counts[1] << ", expected " << expected
                                   << " : 1, judged on iterations before " << end;
  EXPECT_LT(ratio, expected * 1.2) << counts[0] << " : " << counts[1] << ", expected " << expected
                                   << " : 1, judged on iterations before " << end;
}

}  // namespace
