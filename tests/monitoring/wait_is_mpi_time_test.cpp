// Waiting is communication, not computation: a rank that
// reaches a barrier early spends the wait inside MPI, and the monitor must
// subtract it from the wall time of the monitored region.
// Runs with FLEXMPI_SAMPLING_INTERVAL=1, so every iteration is reported.
#include <gtest/gtest.h>
#include <mpi.h>

#include "../support/mpi_test_util.hpp"

namespace flexmpi::test {
namespace {

// Busy computation for `seconds` of wall time (a slow rank, not a sleeping one).
void compute_for(double seconds) {
  volatile double x = 1.0;
  const double until = MPI_Wtime() + seconds;
  while (MPI_Wtime() < until) {
    for (int i = 0; i < 1000; ++i) x = x * 0.999999 + 1e-6;
  }
}

TEST(WaitIsMpiTime, EarlyRankWaitsInsideMpiLateRankComputes) {
  ASSERT_EQ(runtime().config().sampling_interval, 1);
  const int rank = world_rank();
  const int size = world_size();
  constexpr double kWork = 0.1;

  MPI_Barrier(XMPI_COMM_WORLD);  // start together, outside the monitored region
  must(XMPI_Monitor_iter_begin(nullptr), "XMPI_Monitor_iter_begin");
  if (rank != 0) compute_for(kWork);
  const double barrier_start = MPI_Wtime();
  MPI_Barrier(XMPI_COMM_WORLD);
  const double waited = MPI_Wtime() - barrier_start;
  must(XMPI_Monitor_iter_end(nullptr), "XMPI_Monitor_iter_end");

  const auto& report = runtime().last_interval();
  ASSERT_TRUE(report.has_value());
  ASSERT_EQ(report->processes.size(), static_cast<std::size_t>(size));
  const ProcessInterval& early = report->processes[0];
  EXPECT_EQ(early.iterations, 1);
  if (rank == 0) {
    EXPECT_GE(waited, 0.5 * kWork) << "rank 0 should have waited for the others";
    EXPECT_GE(early.mpi, 0.7 * waited) << "the wait in MPI_Barrier is MPI time";
  }
  EXPECT_GE(early.wall, 0.5 * kWork);
  EXPECT_GE(early.mpi, 0.7 * early.wall);
  EXPECT_LE(early.computation(), 0.3 * early.wall)
      << "waiting must not count as computation (wall " << early.wall << " s, MPI " << early.mpi
      << " s)";
  for (int p = 1; p < size; ++p) {
    const ProcessInterval& late = report->processes[p];
    EXPECT_GE(late.computation(), 0.9 * kWork) << "rank " << p;
    EXPECT_LE(late.mpi, 0.3 * late.wall) << "rank " << p << " arrived last and barely waited";
  }
  // The balancer reads exactly this: rank 0 looks fast, the others slow.
  EXPECT_GT(report->imbalance(runtime().config().dedicated_threshold), 0.5);
}

}  // namespace
}  // namespace flexmpi::test
