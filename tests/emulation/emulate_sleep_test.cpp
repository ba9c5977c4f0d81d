// Sleep-mode speed emulation end to end: with
// FLEXMPI_EMULATE_SPEED=1.0,0.5 FLEXMPI_EMULATE_MODE=sleep rank 1's
// computation takes twice as long as its work really took, it reports the CPU
// time of a dedicated core (CPU = wall), and the CPU the process really used,
// read here from the kernel and not through flexmpi, stays well below its
// wall time: it slept. FLEXMPI_SAMPLING_INTERVAL=5.
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <ctime>
#include <numeric>
#include <sstream>
#include <vector>

#include "../support/mpi_test_util.hpp"
#include "util/statistics.hpp"

namespace flexmpi::test {
namespace {

// CPU time of the whole process (every thread, Open MPI's included).
double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

TEST(EmulateSleep, OnlyTheListedRankSleeps) {
  const SpeedEmulator& emulator = runtime().emulator();
  EXPECT_EQ(runtime().config().emulate_mode, EmulationMode::sleep);
  EXPECT_EQ(emulator.sleeps(), world_rank() == 1);
}

TEST(EmulateSleep, HalfSpeedRankComputesTwiceItsWorkOnADedicatedCoreWhileAsleep) {
  ASSERT_EQ(world_size(), 2);
  const int interval = runtime().config().sampling_interval;
  ASSERT_EQ(interval, 5);
  ASSERT_EQ(runtime().monitor().iterations_monitored() % interval, 0);
  const double dedicated_threshold = runtime().config().dedicated_threshold;

  // Rank 1's computation is compared with its emulated time, twice what its
  // work really took, not with rank 0's: a sleeping rank leaves its core
  // idle, the scheduler moves other jobs there, and they stretch its real
  // work (and so its emulated time) but not rank 0's. Other jobs share the two
  // cores: take the first of several short intervals (~0.1 s each) that meets
  // the bounds. Every rank decides from rank 1's numbers, so they agree.
  std::ostringstream attempts;
  bool passed = false;
  for (int attempt = 0; attempt < 8 && !passed; ++attempt) {
    std::vector<double> work_seconds;
    const double wall_start = wall_seconds();
    const double cpu_start = process_cpu_seconds();
    for (int i = 0; i < interval; ++i) {
      monitored_iteration([&] {
        const double start = wall_seconds();
        burn_cpu(0.01);
        work_seconds.push_back(wall_seconds() - start);
      });
    }
    // Rank 1's real work and emulated time over the interval, and the wall
    // and CPU time the process really used.
    const std::vector<double> emulated = emulated_seconds(work_seconds, 0.01, 0.5);
    std::array<double, 4> measured = {
        median(work_seconds) * interval, std::accumulate(emulated.begin(), emulated.end(), 0.0),
        wall_seconds() - wall_start, process_cpu_seconds() - cpu_start};
    MPI_Bcast(measured.data(), 4, MPI_DOUBLE, 1, XMPI_COMM_WORLD);
    const auto [typical_work, expected, used_wall, used_cpu] = measured;
    const auto& report = runtime().last_interval();
    ASSERT_TRUE(report.has_value());
    ASSERT_EQ(report->processes.size(), 2u);
    const ProcessInterval& half = report->processes[1];
    const double slowdown = half.typical_computation / typical_work;
    const double padding = half.computation() / expected;
    const double real_cpu_share = used_cpu / used_wall;
    attempts << "  interval " << report->index << ": rank 1 computation " << half.computation()
             << " s (typical: x" << slowdown << " its real work), x" << padding
             << " its emulated time (rank 0 computed " << report->processes[0].computation()
             << " s); reports CPU " << half.cpu << " s for " << half.wall << " s, really used "
             << used_cpu << " s of " << used_wall << " s (" << real_cpu_share << "); late "
             << half.emulation_late_iterations << "\n";
    // The reported CPU is the wall time: the emulated core is a dedicated one.
    EXPECT_DOUBLE_EQ(half.cpu, half.wall);
    EXPECT_FALSE(report->shared_flags(dedicated_threshold)[1]);
    // Half of rank 1's time is computation, the rest asleep; burn mode uses ~all of it.
    passed = slowdown >= 1.6 && slowdown <= 2.5 && padding >= 0.8 && padding <= 1.25 &&
             real_cpu_share <= 0.75;
  }
  EXPECT_TRUE(passed) << "expected rank 1's typical computation within [1.6, 2.5] times its "
                         "typical real work, its computation within [0.8, 1.25] times its "
                         "emulated time, and rank 1 really on the CPU for at most 0.75 of its "
                         "wall time:\n"
                      << attempts.str();
}

}  // namespace
}  // namespace flexmpi::test
