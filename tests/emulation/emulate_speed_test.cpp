// Speed emulation end to end: with
// FLEXMPI_EMULATE_SPEED=1.0,0.5 rank 1 behaves like a core of half the
// speed: the same computation takes it twice the CPU time, spent on the CPU
// (busy, not asleep), and so about twice as long where it has its core to
// itself. FLEXMPI_SAMPLING_INTERVAL=5.
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <sstream>

#include "../support/mpi_test_util.hpp"
#include "util/clock.hpp"

namespace flexmpi::test {
namespace {

TEST(EmulateSpeed, OnlyTheListedRankIsSlowedDown) {
  const SpeedEmulator& emulator = runtime().emulator();
  if (world_rank() == 1) {
    EXPECT_TRUE(emulator.active());
    EXPECT_DOUBLE_EQ(emulator.speed(), 0.5);
  } else {
    EXPECT_FALSE(emulator.active());
  }
}

TEST(EmulateSpeed, HalfSpeedRankComputesTwiceAsLongOnTheCpu) {
  ASSERT_EQ(world_size(), 2);
  const int interval = runtime().config().sampling_interval;
  ASSERT_EQ(interval, 5);
  ASSERT_EQ(runtime().monitor().iterations_monitored() % interval, 0);

  // Other jobs share the two cores (Open MPI pins each rank to one, and so
  // do theirs): take the first of several short intervals (~0.15 s each)
  // that meets the bounds. Every rank decides from the same numbers, so they
  // agree on when to stop.
  std::ostringstream attempts;
  bool passed = false;
  for (int attempt = 0; attempt < 8 && !passed; ++attempt) {
    // What the computation itself got of this core, to tell a busy wait
    // slowed by other jobs from a sleeping one.
    std::array<double, 2> computed = {0.0, 0.0};  // wall, CPU
    for (int i = 0; i < interval; ++i) {
      must(XMPI_Monitor_iter_begin(nullptr), "XMPI_Monitor_iter_begin");
      const double wall_start = wall_seconds(), cpu_start = cpu_seconds();
      burn_cpu(0.01);
      computed[0] += wall_seconds() - wall_start;
      computed[1] += cpu_seconds() - cpu_start;
      must(XMPI_Monitor_iter_end(nullptr), "XMPI_Monitor_iter_end");
    }
    MPI_Bcast(computed.data(), 2, MPI_DOUBLE, 1, XMPI_COMM_WORLD);  // rank 1's
    const auto& report = runtime().last_interval();
    ASSERT_TRUE(report.has_value());
    ASSERT_EQ(report->processes.size(), 2u);
    const ProcessInterval& full = report->processes[0];
    const ProcessInterval& half = report->processes[1];
    const double ratio = half.computation() / full.computation();
    const double cpu_ratio = half.cpu / computed[1];
    const double cpu_share = half.cpu / half.wall;
    // CPU share of rank 1 outside its computation: the emulation's busy wait.
    const double wait_share = (half.cpu - computed[1]) / (half.wall - computed[0]);
    const double compute_share = computed[1] / computed[0];
    attempts << "  interval " << report->index << ": computation " << full.computation() << " s vs "
             << half.computation() << " s (ratio " << ratio << "); rank 1 CPU " << half.cpu
             << " s for work of " << computed[1] << " s (ratio " << cpu_ratio << "), CPU/wall "
             << cpu_share << ", busy wait " << wait_share << " vs computation " << compute_share
             << "\n";
    // On a crowded core the scheduler gives a long-running spin less than the
    // computation before it got; a sleep would get almost nothing.
    const bool busy = cpu_share >= 0.85 || wait_share >= 0.5 * compute_share;
    // Its core shared with other jobs, the slower core is slower still: the
    // wall-time ratio is bounded only where rank 1 had its core.
    const bool wall_as_cpu = cpu_share < 0.85 || (ratio >= 1.6 && ratio <= 2.5);
    passed = cpu_ratio >= 1.7 && cpu_ratio <= 2.5 && busy && wall_as_cpu;
  }
  EXPECT_TRUE(passed) << "expected rank 1's CPU time within [1.7, 2.5] times its work's, rank 1 "
                         "on the CPU while slowed down (CPU >= 0.85 wall or, on a shared core, "
                         "the busy wait getting >= 0.5 of the computation's CPU share), and a "
                         "computation ratio in [1.6, 2.5] where rank 1 had its core:\n"
                      << attempts.str();
}

}  // namespace
}  // namespace flexmpi::test
