// Speed emulation (SPEC section 6): the speed list, the delay arithmetic, a
// busy wait that really occupies the CPU (burn mode: a sleep would look like
// a shared core, not a slower dedicated one) and the sleep of sleep mode,
// which must wait as long while leaving the CPU to others.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "emulation/speed_emulator.hpp"
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
  EXPECT_DOUBLE_EQ(emulation_delay(0.1, 1e-3, 200.0), 0.1);
  EXPECT_DOUBLE_EQ(emulation_delay(0.1, 1e-3, 400.0), 0.3);
  // A disturbed iteration (0.15 s instead of 0.1) waits less: the total stays 0.2 s.
  EXPECT_DOUBLE_EQ(emulation_delay(0.15, 1e-3, 200.0), 0.05);
}

TEST(EmulationDelay, IsNeverNegative) {
  EXPECT_EQ(emulation_delay(0.1, 1e-3, 100.0), 0.0);  // full speed
  EXPECT_EQ(emulation_delay(0.5, 1e-3, 200.0), 0.0);  // already slower than emulated
  EXPECT_EQ(emulation_delay(0.0, 0.0, 200.0), 0.0);
  EXPECT_DOUBLE_EQ(emulation_delay(-0.1, 1e-3, 200.0), 0.2);  // clock noise counts as 0
}

TEST(EmulationLate, OnlyWhenTheRealComputationAloneExceedsTheEmulatedTime) {
  // 1 ms per unit, 200 emulated units: the emulated iteration takes 0.2 s.
  EXPECT_FALSE(emulation_late(0.1, 1e-3, 200.0));
  EXPECT_FALSE(emulation_late(0.2, 1e-3, 200.0));  // just in time: nothing to wait
  EXPECT_TRUE(emulation_late(0.25, 1e-3, 200.0));
  EXPECT_EQ(emulation_delay(0.25, 1e-3, 200.0), 0.0);  // late: no wait either
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

// Both modes pad to the same target and flag the same late iterations: only
// the way of waiting differs. At speed 0.5 the target is twice the median.
TEST(SpeedEmulator, BothModesPadToTheSameTargetAndFlagLateIterations) {
  for (const EmulationMode mode : {EmulationMode::burn, EmulationMode::sleep}) {
    SCOPED_TRACE(mode == EmulationMode::sleep ? "sleep" : "burn");
    SpeedEmulator half(0.5, mode);
    for (int i = 0; i < 3; ++i) {
      const double start = wall_seconds();
      EXPECT_FALSE(half.slow_down(0.01));
      EXPECT_GE(wall_seconds() - start, 0.01);  // padded to 2 x 0.01 s
    }
    // Median 0.01 s, target 0.02 s: an iteration that computed 0.03 s is late
    // and waits nothing; one of 0.015 s is on time again.
    const double start = wall_seconds();
    EXPECT_TRUE(half.slow_down(0.03));
    EXPECT_LT(wall_seconds() - start, 0.02);  // t (1/s - 1) would wait 0.03 s
    EXPECT_FALSE(half.slow_down(0.015));
  }
}

TEST(SpeedEmulator, SleepModeLeavesTheCpu) {
  SpeedEmulator half(0.5, EmulationMode::sleep);
  const double cpu_start = cpu_seconds();
  const double wall_start = wall_seconds();
  half.slow_down(0.05);
  const double wall = wall_seconds() - wall_start;
  EXPECT_GE(wall, 0.05);
  EXPECT_LT(cpu_seconds() - cpu_start, 0.2 * wall);
}

TEST(UnitTimeEstimate, IsTheMedianPerUnitTimeOfTheRecentIterations) {
  UnitTimeEstimate estimate;
  EXPECT_EQ(estimate.unit_seconds(), 0.0);
  estimate.add(0.10, 100.0);
  EXPECT_DOUBLE_EQ(estimate.unit_seconds(), 1e-3);
  estimate.add(0.30, 100.0);  // a disturbed iteration
  estimate.add(0.11, 100.0);
  EXPECT_DOUBLE_EQ(estimate.unit_seconds(), 1.1e-3);  // the outlier does not move the median
  estimate.add(0.12, 100.0);
  EXPECT_DOUBLE_EQ(estimate.unit_seconds(), 1.1e-3);  // even count: the lower of the middle pair
}

TEST(UnitTimeEstimate, StartsAfreshWhenTheWorkChanges) {
  UnitTimeEstimate estimate;
  for (int i = 0; i < 5; ++i) estimate.add(0.1, 100.0);
  estimate.add(0.1 * 2.0, 150.0);  // 1.33 ms per unit on the new block
  EXPECT_NEAR(estimate.unit_seconds(), 0.2 / 150.0, 1e-15);
  estimate.add(0.2, 150.5);  // within 1 %: the same block
  EXPECT_NEAR(estimate.unit_seconds(), 0.2 / 150.5, 1e-15);
}

TEST(UnitTimeEstimate, KeepsOnlyTheLastWindowOfIterations) {
  UnitTimeEstimate estimate;
  for (std::size_t i = 0; i < UnitTimeEstimate::kWindow; ++i) estimate.add(1.0, 1.0);
  for (std::size_t i = 0; i < UnitTimeEstimate::kWindow / 2 + 1; ++i) estimate.add(2.0, 1.0);
  EXPECT_DOUBLE_EQ(estimate.unit_seconds(), 2.0);
}

TEST(UnitTimeEstimate, UnknownWorkIsOneUnitPerIteration) {
  UnitTimeEstimate estimate;
  estimate.add(0.25, 0.0);
  EXPECT_DOUBLE_EQ(estimate.unit_seconds(), 0.25);
}

TEST(UnitTimeEstimate, UncontendedIsTheLeastPerUnitTimeWhateverTheWork) {
  UnitTimeEstimate estimate(UnitTimeEstimate::Reference::uncontended);
  EXPECT_EQ(estimate.unit_seconds(), 0.0);
  estimate.add(0.30, 100.0);  // waited for a core
  estimate.add(0.20, 100.0);
  estimate.add(0.25, 100.0);
  EXPECT_DOUBLE_EQ(estimate.unit_seconds(), 2e-3);  // the median would be 2.5 ms
  estimate.add(0.45, 150.0);  // a new block, its first iteration waiting: the core is the same
  EXPECT_DOUBLE_EQ(estimate.unit_seconds(), 2e-3);
}

TEST(UnitTimeEstimate, UncontendedIgnoresASlowSpellAndAFastOutlier) {
  UnitTimeEstimate estimate(UnitTimeEstimate::Reference::uncontended);
  for (int i = 0; i < 100; ++i) estimate.add(1.0, 1.0);
  for (int i = 0; i < 400; ++i) estimate.add(2.0, 1.0);  // the VM slower for a long while
  EXPECT_DOUBLE_EQ(estimate.unit_seconds(), 1.0);        // the emulated PE is not
  estimate.add(0.1, 1.0);                                // work reported larger than was done, once
  EXPECT_DOUBLE_EQ(estimate.unit_seconds(), 1.0);
  // A whole window slower: the PE follows.
  for (std::size_t i = 0; i < UnitTimeEstimate::kUncontendedWindow; ++i) estimate.add(2.0, 1.0);
  EXPECT_DOUBLE_EQ(estimate.unit_seconds(), 2.0);
}

TEST(UnitTimeEstimate, GivenKeepsItsTimeWhateverTheIterationsMeasure) {
  UnitTimeEstimate estimate = UnitTimeEstimate::given(2e-3);
  EXPECT_DOUBLE_EQ(estimate.unit_seconds(), 2e-3);  // before any iteration, too
  estimate.add(0.5, 100.0);                         // a contended iteration: 5 ms per unit
  estimate.add(0.1, 100.0);                         // a fast one: 1 ms per unit
  EXPECT_DOUBLE_EQ(estimate.unit_seconds(), 2e-3);
  for (const double bad : {0.0, -1e-3, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    EXPECT_THROW((void)UnitTimeEstimate::given(bad), Error);
  }
}

TEST(SpeedEmulator, AFixedUnitTimePadsToWorkTimesUnitOverSpeed) {
  // Speed 0.5, 100 units of 0.1 ms: 20 ms emulated whatever the iteration
  // computed. A first, contended iteration of 19 ms waits 1 ms more (measured,
  // its own time would have made the target 38 ms: 19 ms more).
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
}

TEST(SpeedEmulator, SleepModeTargetsTheUncontendedTime) {
  // Speed 0.5, one unit per iteration: a contended iteration (3 ms of work)
  // after an uncontended one (1 ms) is padded to 2 ms, not to the median's 6 ms.
  SpeedEmulator sleeping(0.5, EmulationMode::sleep);
  sleeping.slow_down(0.001, 1.0);
  const double start = wall_seconds();
  EXPECT_TRUE(sleeping.slow_down(0.003, 1.0));  // longer than its emulated time: late
  EXPECT_LT(wall_seconds() - start, 0.001);
}

TEST(SpeedEmulator, EachStretchOfComputationIsPaddedByItsOwnSlowdown) {
  // Speed 0.5, 100 units of 0.1 ms: a 20 ms target per iteration. The
  // iteration computes 4 ms, enters MPI (4 ms of padding), computes 6 ms
  // more and enters MPI again (6 ms), then ends: nothing is left to pad.
  SpeedEmulator half(SpeedFunction(0.5), [] { return 100.0; });
  half.fix_unit_seconds(1e-4);
  double start = wall_seconds();
  half.before_communication(0.004);
  const double first = wall_seconds() - start;
  EXPECT_GE(first, 0.004);
  EXPECT_LT(first, 0.010);
  start = wall_seconds();
  half.before_communication(0.004 + first + 0.006);
  const double second = wall_seconds() - start;
  EXPECT_GE(second, 0.005);  // the first pad's late wake-up is a credit
  EXPECT_LT(second, 0.012);
  start = wall_seconds();
  EXPECT_FALSE(half.slow_down(0.004 + first + 0.006 + second, 100.0));  // 10 ms of real work
  EXPECT_LT(wall_seconds() - start, 0.003);
}

TEST(SpeedEmulator, AStretchIsNeverPaddedPastTheIterationsTarget) {
  // A stretch disturbed to 15 ms of a 20 ms target pads 5 ms, not 15: the
  // disturbance is not multiplied by 1/s (issue 11).
  SpeedEmulator half(SpeedFunction(0.5), [] { return 100.0; });
  half.fix_unit_seconds(1e-4);
  const double start = wall_seconds();
  half.before_communication(0.015);
  const double waited = wall_seconds() - start;
  EXPECT_GE(waited, 0.005);
  EXPECT_LT(waited, 0.012);
  // The real work, 15 ms, is within the target: not late; the end pads nothing more.
  EXPECT_FALSE(half.slow_down(0.015 + waited, 100.0));
}

TEST(SpeedEmulator, NoPaddingBeforeTheFirstIterationGivesATarget) {
  SpeedEmulator half(0.5);
  const double start = wall_seconds();
  half.before_communication(0.05);  // no unit time yet: the end of the iteration pads
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

TEST(SpeedEmulator, HalfSpeedWaitsAsLongAsTheComputation) {
  const double start = wall_seconds();
  SpeedEmulator half(0.5);
  half.slow_down(0.03);
  const double waited = wall_seconds() - start;
  EXPECT_GE(waited, 0.03);
  EXPECT_LT(waited, 2.0);  // generous: only catches a wrong formula, not a slow machine
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
