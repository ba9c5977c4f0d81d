// Speed emulation: the speed list, the delay arithmetic, a
// busy wait that really occupies the CPU (burn mode: a sleep would look like
// a shared core, not a slower dedicated one) and the sleep of sleep mode,
// which must wait as long while leaving the CPU to others.
#include "emulation/speed_emulator.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "flexmpi/error.hpp"
#include "util/clock.hpp"

namespace flexmpi {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

void expect_bad_list(std::string_view text, const std::string& item) {
  SCOPED_TRACE(std::string(text));
  try {
    parse_speed_list(text);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(item));
  }
}

TEST(SpeedList, ParsesOneSpeedPerRank) {
  EXPECT_THAT(parse_speed_list("1.0,0.5"), ElementsAre(1.0, 0.5));
  EXPECT_THAT(parse_speed_list("0.25"), ElementsAre(0.25));
  EXPECT_THAT(parse_speed_list("1,1,0.75,1e-2"), ElementsAre(1.0, 1.0, 0.75, 0.01));
}

TEST(SpeedList, RejectsBadItemsNamingThem) {
  expect_bad_list("", "item 1 ''");
  expect_bad_list("1,0", "item 2 '0'");
  expect_bad_list("1,abc", "item 2 'abc'");
  expect_bad_list("1.5", "item 1 '1.5'");
  expect_bad_list("1,", "item 2 ''");
  expect_bad_list(",1", "item 1 ''");
  expect_bad_list("0.5,,0.5", "item 2 ''");
  expect_bad_list("-0.5", "item 1 '-0.5'");
  expect_bad_list("0.5x", "item 1 '0.5x'");
  expect_bad_list("1, 0.5", "item 2 ' 0.5'");
  expect_bad_list("nan", "item 1 'nan'");
  expect_bad_list("inf", "item 1 'inf'");
}

TEST(EmulationDelay, PadsTheComputationUpToTheEmulatedTime) {
  // 1 ms per unit at full speed, 100 units at speed 0.5 = 200 emulated units.
  EXPECT_DOUBLE_EQ(emulation_delay(0.1, 1e-3 * 200.0), 0.1);
  EXPECT_DOUBLE_EQ(emulation_delay(0.1, 1e-3 * 400.0), 0.3);
  // A disturbed iteration (0.15 s instead of 0.1) waits less: the total stays 0.2 s.
  EXPECT_DOUBLE_EQ(emulation_delay(0.15, 1e-3 * 200.0), 0.05);
}

TEST(EmulationDelay, IsNeverNegative) {
  EXPECT_EQ(emulation_delay(0.1, 1e-3 * 100.0), 0.0);  // full speed
  EXPECT_EQ(emulation_delay(0.5, 1e-3 * 200.0), 0.0);  // already slower than emulated
  EXPECT_EQ(emulation_delay(0.0, 0.0 * 200.0), 0.0);
  EXPECT_DOUBLE_EQ(emulation_delay(-0.1, 1e-3 * 200.0), 0.2);  // clock noise counts as 0
}

TEST(EmulationLate, OnlyWhenTheRealComputationAloneExceedsTheEmulatedTime) {
  // 1 ms per unit, 200 emulated units: the emulated iteration takes 0.2 s.
  EXPECT_FALSE(emulation_late(0.1, 1e-3 * 200.0));
  EXPECT_FALSE(emulation_late(0.2, 1e-3 * 200.0));  // just in time: nothing to wait
  EXPECT_TRUE(emulation_late(0.25, 1e-3 * 200.0));
  EXPECT_EQ(emulation_delay(0.25, 1e-3 * 200.0), 0.0);  // late: no wait either
}

TEST(EmulationMode, ParsesBurnAndSleepOnly) {
  EXPECT_EQ(parse_emulation_mode("burn"), EmulationMode::burn);
  EXPECT_EQ(parse_emulation_mode("sleep"), EmulationMode::sleep);
  for (const std::string_view bad : {"", "Sleep", "spin", "sleep ", "burn,sleep"}) {
    EXPECT_FALSE(parse_emulation_mode(bad).has_value()) << bad;
  }
}

TEST(MonotonicDeadline, AddsTheWaitAndCarriesIntoSeconds) {
  const timespec plain = monotonic_deadline(100.25, 0.5);
  EXPECT_EQ(plain.tv_sec, 100);
  EXPECT_EQ(plain.tv_nsec, 750'000'000);
  const timespec carried = monotonic_deadline(100.75, 0.5);
  EXPECT_EQ(carried.tv_sec, 101);
  EXPECT_EQ(carried.tv_nsec, 250'000'000);
  const timespec long_wait = monotonic_deadline(100.5, 2.75);
  EXPECT_EQ(long_wait.tv_sec, 103);
  EXPECT_EQ(long_wait.tv_nsec, 250'000'000);
  // A fraction that rounds to a whole second is the next second, not 1e9 ns.
  const timespec rounded = monotonic_deadline(100.9999999999, 0.0);
  EXPECT_EQ(rounded.tv_sec, 101);
  EXPECT_EQ(rounded.tv_nsec, 0);
}

TEST(SleepWait, WaitsTheTimeWithoutTheCpu) {
  const double cpu_start = cpu_seconds();
  const double wall_start = wall_seconds();
  sleep_wait(0.05);
  const double wall = wall_seconds() - wall_start;
  const double cpu = cpu_seconds() - cpu_start;
  EXPECT_GE(wall, 0.05) << "returned early";
  EXPECT_LT(wall, 1.0);  // generous: only catches a wrong conversion, not a slow machine
  EXPECT_LT(cpu, 0.2 * wall) << "sleep_wait should sleep, not spin";
}

TEST(SleepWait, NonPositiveIsANoOp) {
  const double start = wall_seconds();
  sleep_wait(0.0);
  sleep_wait(-1.0);
  EXPECT_LT(wall_seconds() - start, 0.5);
}

TEST(SpeedEmulator, OnlyAnActiveEmulationInSleepModeSleeps) {
  EXPECT_TRUE(SpeedEmulator(0.5, EmulationMode::sleep).sleeps());
  EXPECT_FALSE(SpeedEmulator(0.5, EmulationMode::burn).sleeps());
  EXPECT_FALSE(SpeedEmulator(0.5).sleeps());  // burn is the default
  EXPECT_FALSE(SpeedEmulator(1.0, EmulationMode::sleep).sleeps());
  const std::vector<SpeedFunction> speeds = parse_speed_list("1.0,0.5");
  EXPECT_TRUE(SpeedEmulator::for_rank(speeds, 1, nullptr, EmulationMode::sleep).sleeps());
  EXPECT_FALSE(SpeedEmulator::for_rank(speeds, 0, nullptr, EmulationMode::sleep).sleeps());
  EXPECT_FALSE(SpeedEmulator::for_rank(speeds, 5, nullptr, EmulationMode::sleep).sleeps());
}

// One stretch of real computation of `cpu_seconds` CPU time, as the
// emulator sees it: it starts, the process computes, and (unless the
// iteration ends) it enters MPI.
void compute(SpeedEmulator& emulator, double cpu_seconds) {
  emulator.computation_starts();
  burn_cpu(cpu_seconds);
}

TEST(SpeedEmulator, BurnModeSpinsEachStretchsCpuTimeOverSpeed) {
  // Speed 0.5: a stretch of 4 ms of CPU time is followed by 4 ms more in
  // the MPI call that ends it, a stretch of 6 ms by 6 ms at the iteration's end.
  SpeedEmulator half(0.5);
  compute(half, 0.004);
  double cpu_start = cpu_seconds();
  half.before_communication(0.0);  // burn mode does not look at the wall time
  const double first = cpu_seconds() - cpu_start;
  EXPECT_GE(first, 0.004);
  EXPECT_LT(first, 0.008);
  half.before_communication(0.0);  // a nested MPI call: no stretch ended
  compute(half, 0.006);
  cpu_start = cpu_seconds();
  EXPECT_FALSE(half.slow_down(0.0));  // burn mode is never late
  const double second = cpu_seconds() - cpu_start;
  EXPECT_GE(second, 0.006 - (first - 0.004));  // the first spin's overshoot is a credit
  EXPECT_LT(second, 0.010);
}

TEST(SpeedEmulator, TheWorkUnitsDoNotChangeTheEmulatedTime) {
  // The same real work, reported as 10 or as 10,000 units (two workload
  // models): the same wait.
  for (const double units : {10.0, 10'000.0}) {
    SCOPED_TRACE(units);
    SpeedEmulator half(
        SpeedFunction(0.5), [units] { return units; }, EmulationMode::sleep);
    const double start = wall_seconds();
    compute(half, 0.005);
    const double work = wall_seconds() - start;
    EXPECT_FALSE(half.slow_down(work));
    const double emulated = wall_seconds() - start;
    EXPECT_GE(emulated, 0.010);
    // Unless other jobs made the work itself take longer than 10 ms.
    if (work < 0.008) {
      EXPECT_LT(emulated, 0.018);
    }
  }
}

TEST(SpeedEmulator, SleepModePadsTheComputationToItsCpuTimeOverSpeed) {
  SpeedEmulator half(0.5, EmulationMode::sleep);
  const double wall_start = wall_seconds();
  compute(half, 0.01);
  const double cpu_start = cpu_seconds();
  EXPECT_FALSE(half.slow_down(wall_seconds() - wall_start));
  const double wall = wall_seconds() - wall_start;
  EXPECT_GE(wall, 0.02);
  EXPECT_LT(wall, 0.03);
  EXPECT_LT(cpu_seconds() - cpu_start, 0.005) << "sleep mode should sleep, not spin";
}

TEST(SpeedEmulator, SleepModeAbsorbsTheWaitForACore) {
  // 5 ms of CPU time that took 8 ms (the process waited for a core): padded
  // to 10 ms, not by 8 ms; 2 ms that took 10 ms: late, no wait.
  SpeedEmulator half(0.5, EmulationMode::sleep);
  compute(half, 0.005);
  double start = wall_seconds();
  EXPECT_FALSE(half.slow_down(0.008));
  double waited = wall_seconds() - start;
  EXPECT_GE(waited, 0.002);
  EXPECT_LT(waited, 0.006);
  compute(half, 0.002);
  start = wall_seconds();
  EXPECT_TRUE(half.slow_down(0.010));
  EXPECT_LT(wall_seconds() - start, 0.001);
}

TEST(SpeedEmulator, AFixedUnitTimePadsToWorkTimesUnitOverSpeed) {
  // Speed 0.5, 100 units of 0.1 ms: 20 ms emulated whatever the iteration
  // computed. An iteration of 19 ms waits 1 ms more.
  SpeedEmulator sleeping(0.5, EmulationMode::sleep);
  sleeping.fix_unit_seconds(1e-4);
  double start = wall_seconds();
  EXPECT_FALSE(sleeping.slow_down(0.019, 100.0));
  const double waited = wall_seconds() - start;
  EXPECT_GE(waited, 0.001);
  EXPECT_LT(waited, 0.012);
  start = wall_seconds();
  EXPECT_TRUE(sleeping.slow_down(0.025, 100.0));  // beyond the 20 ms: late, no wait
  EXPECT_LT(wall_seconds() - start, 0.005);
  for (const double bad : {0.0, -1e-3, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    EXPECT_THROW(sleeping.fix_unit_seconds(bad), Error);
  }
}

TEST(SpeedEmulator, AFixedUnitTimeStillPadsEachStretchWhereItComputes) {
  // A 20 ms target: a stretch of 4 ms of CPU time is padded to 8 ms when it
  // enters MPI, and the iteration's end pads the rest of the 20 ms.
  SpeedEmulator half(
      SpeedFunction(0.5), [] { return 100.0; }, EmulationMode::sleep);
  half.fix_unit_seconds(1e-4);
  const double start = wall_seconds();
  compute(half, 0.004);
  half.before_communication(wall_seconds() - start);
  const double first = wall_seconds() - start;
  EXPECT_GE(first, 0.008);
  EXPECT_LT(first, 0.014);
  EXPECT_FALSE(half.slow_down(wall_seconds() - start));
  const double whole = wall_seconds() - start;
  EXPECT_GE(whole, 0.020);
  EXPECT_LT(whole, 0.028);
}

TEST(SpeedEmulator, AStretchIsNotPaddedByTheTimeItWaited) {
  // A stretch of 2 ms of CPU time that took 15 ms of wall time (preempted)
  // pads nothing before its MPI call: its emulated time, 4 ms, is behind it.
  SpeedEmulator half(0.5, EmulationMode::sleep);
  compute(half, 0.002);
  const double start = wall_seconds();
  half.before_communication(0.015);
  EXPECT_LT(wall_seconds() - start, 0.001);
}

TEST(SpeedEmulator, AnMpiCallOutsideAStretchPadsNothing) {
  SpeedEmulator half(0.5);
  const double start = wall_seconds();
  half.before_communication(0.05);  // no stretch started: not the iteration's computation
  EXPECT_FALSE(half.slow_down(0.05));
  EXPECT_LT(wall_seconds() - start, 0.02);
}

TEST(SpeedEmulator, ForRankPicksTheRanksSpeedAndFullSpeedPastTheList) {
  const std::vector<double> speeds = {1.0, 0.5, 0.25};
  EXPECT_FALSE(SpeedEmulator::for_rank(speeds, 0).active());
  EXPECT_DOUBLE_EQ(SpeedEmulator::for_rank(speeds, 1).speed(), 0.5);
  EXPECT_TRUE(SpeedEmulator::for_rank(speeds, 1).active());
  EXPECT_DOUBLE_EQ(SpeedEmulator::for_rank(speeds, 2).speed(), 0.25);
  EXPECT_DOUBLE_EQ(SpeedEmulator::for_rank(speeds, 3).speed(), 1.0);
  EXPECT_FALSE(SpeedEmulator::for_rank(speeds, 3).active());
  EXPECT_FALSE(SpeedEmulator::for_rank(speeds, 1000).active());
  EXPECT_FALSE(SpeedEmulator::for_rank({}, 0).active());
  EXPECT_FALSE(SpeedEmulator::for_rank(speeds, -1).active());
}

TEST(SpeedEmulator, DefaultIsInactive) {
  EXPECT_FALSE(SpeedEmulator().active());
  EXPECT_DOUBLE_EQ(SpeedEmulator().speed(), 1.0);
}

TEST(SpeedEmulator, RejectsSpeedsOutsideZeroOne) {
  EXPECT_THROW(SpeedEmulator(0.0), Error);
  EXPECT_THROW(SpeedEmulator(-0.5), Error);
  EXPECT_THROW(SpeedEmulator(1.5), Error);
  EXPECT_THROW(SpeedEmulator(std::numeric_limits<double>::quiet_NaN()), Error);
}

TEST(SpeedEmulator, FullSpeedDoesNotWait) {
  const double start = wall_seconds();
  SpeedEmulator full(1.0);
  full.slow_down(5.0);
  EXPECT_LT(wall_seconds() - start, 1.0);
}

TEST(BurnCpu, UsesAtLeastTheCpuTimeAsked) {
  const double start = cpu_seconds();
  const double burned = burn_cpu(0.02);
  EXPECT_GE(burned, 0.02);
  EXPECT_GE(cpu_seconds() - start, 0.02);
  EXPECT_LT(burned, 0.5);  // generous: only catches a wrong unit
  EXPECT_EQ(burn_cpu(0.0), 0.0);
  EXPECT_EQ(burn_cpu(-1.0), 0.0);
}

// CPU share (CPU time / wall time) a plain computation gets right now.
double computation_share(double seconds) {
  volatile double x = 1.0;
  const double cpu_start = cpu_seconds();
  const double wall_start = wall_seconds();
  while (wall_seconds() < wall_start + seconds) x = x * 0.999999 + 1e-6;
  return (cpu_seconds() - cpu_start) / (wall_seconds() - wall_start);
}

TEST(BusyWait, BurnsCpuForTheWholeWait) {
  // Other jobs share the two cores: accept the best of several attempts, and
  // on a busy core compare with what a plain computation gets. A sleeping
  // implementation fails every attempt (CPU time ~ 0).
  std::string attempts;
  bool passed = false;
  for (int attempt = 0; attempt < 10 && !passed; ++attempt) {
    const double available = computation_share(0.02);
    const double cpu_start = cpu_seconds();
    const double wall_start = wall_seconds();
    busy_wait(0.05);
    const double wall = wall_seconds() - wall_start;
    const double cpu = cpu_seconds() - cpu_start;
    EXPECT_GE(wall, 0.05) << "returned early";
    attempts += "  CPU/wall " + std::to_string(cpu / wall) + " (a computation got " +
                std::to_string(available) + ")\n";
    // On a crowded core a long spin gets less than the short computation
    // before it; a sleep gets almost nothing.
    passed = cpu >= 0.8 * wall || cpu >= 0.5 * available * wall;
  }
  EXPECT_TRUE(passed) << "busy_wait should spin, not sleep:\n" << attempts;
}

TEST(BusyWait, NonPositiveIsANoOp) {
  const double start = wall_seconds();
  busy_wait(0.0);
  busy_wait(-1.0);
  EXPECT_LT(wall_seconds() - start, 0.5);
}

}  // namespace
}  // namespace flexmpi
