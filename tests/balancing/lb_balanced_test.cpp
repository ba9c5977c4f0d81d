// With no imbalance, load balancing must move nothing: every evaluation
// leaves the block partition as it was.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>

#include "flexmpi.h"

namespace {

TEST(LoadBalancing, BalancedRunMovesNothing) {
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  constexpr int kRows = 4000;
  int count = 0, displ = 0;
  ASSERT_EQ(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), XMPI_SUCCESS);
  const int initial_count = count, initial_displ = displ;
  auto* x = static_cast<double*>(std::malloc(sizeof(double) * count));
  for (int i = 0; i < count; ++i) x[i] = displ + i;
  ASSERT_EQ(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);
  volatile double sink = 0.0;
  for (int it = 0; it < 30; ++it) {
    ASSERT_EQ(XMPI_Monitor_si_init(), XMPI_SUCCESS);
    for (int i = 0; i < count; ++i) {
      for (int k = 0; k < 300; ++k) sink = sink + x[i] * 1e-9;
    }
    MPI_Barrier(XMPI_COMM_WORLD);
    ASSERT_EQ(XMPI_Eval_lbalance(rank, nprocs, it, 30, &count, &displ, nullptr), XMPI_SUCCESS);
    EXPECT_EQ(count, initial_count) << "iteration " << it;
    EXPECT_EQ(displ, initial_displ) << "iteration " << it;
  }
  for (int i = 0; i < count; ++i) ASSERT_EQ(x[i], displ + i);
  std::free(x);
}

}  // namespace
