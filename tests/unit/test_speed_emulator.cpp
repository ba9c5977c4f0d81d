// Speed emulation (SPEC section 6): the speed list, the delay arithmetic and
// a busy wait that really occupies the CPU (a sleep would look like a shared
// core, not a slower dedicated one).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "emulation/speed_emulator.hpp"
#include "monitoring/clock.hpp"

namespace flexmpi {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

void expect_bad_list(std::string_view text, const std::string& item) {
  SCOPED_TRACE(std::string(text));
  try {
    parse_speed_list(text);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
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

TEST(EmulationDelay, IsTimeTimesInverseSpeedMinusOne) {
  EXPECT_DOUBLE_EQ(emulation_delay(0.1, 0.5), 0.1);
  EXPECT_DOUBLE_EQ(emulation_delay(0.1, 0.25), 0.3);
  EXPECT_DOUBLE_EQ(emulation_delay(2.0, 0.8), 0.5);
  EXPECT_DOUBLE_EQ(emulation_delay(1.0, 0.1), 9.0);
}

TEST(EmulationDelay, IsZeroAtFullSpeedOrWithoutComputation) {
  EXPECT_EQ(emulation_delay(0.1, 1.0), 0.0);
  EXPECT_EQ(emulation_delay(0.0, 0.5), 0.0);
  EXPECT_EQ(emulation_delay(-0.1, 0.5), 0.0);  // clock noise must not give a negative delay
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
  EXPECT_THROW(SpeedEmulator(0.0), std::invalid_argument);
  EXPECT_THROW(SpeedEmulator(-0.5), std::invalid_argument);
  EXPECT_THROW(SpeedEmulator(1.5), std::invalid_argument);
  EXPECT_THROW(SpeedEmulator(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

TEST(SpeedEmulator, FullSpeedDoesNotWait) {
  const double start = wall_seconds();
  SpeedEmulator(1.0).slow_down(5.0);
  EXPECT_LT(wall_seconds() - start, 1.0);
}

TEST(SpeedEmulator, HalfSpeedWaitsAsLongAsTheComputation) {
  const double start = wall_seconds();
  SpeedEmulator(0.5).slow_down(0.03);
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
