// Multi-process load balancing through the C API (thesis 5.2, Fig. 5.14):
// a row-proportional kernel on processes emulated at different speeds must
// converge to a partition proportional to those speeds, and the registered
// data must follow, element for element.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "flexmpi.h"

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

struct BalancedRun {
  int count = 0, displ = 0;
  std::vector<int> counts_seen;  // this process's count after each evaluation
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
    sink = sink + compute(x, result.count);
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
  // 8 sampling intervals of 25 iterations (~40 ms each).
  const BalancedRun result = run(200);
  int counts[2] = {0, 0};
  int mine = result.count;
  MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, XMPI_COMM_WORLD);
  EXPECT_EQ(counts[0] + counts[1], kRows);
  const double ratio = static_cast<double>(counts[0]) / counts[1];
  // 2:1 within 20 %: on the shared 2-vCPU test VMs either core's speed
  // drifts by 10-25 % over a few hundred milliseconds (docs/benchmarks.md),
  // and the balancer follows what it measures. An unbalanced run ends at 1:1.
  EXPECT_GT(ratio, 1.6) << counts[0] << " : " << counts[1];
  EXPECT_LT(ratio, 2.4) << counts[0] << " : " << counts[1];
}

}  // namespace
