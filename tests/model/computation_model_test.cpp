// Computation cost (thesis 5.3.1, eq. 5.3): extrapolation, the work profile
// (good and bad files), the run-time correction, spreading work over a
// candidate partition, per-process times.
#include "model/computation_model.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

// Two lines as the trace writes them (fields the profile does not read included).
constexpr const char* kTrace =
    R"({"interval":0,"first_iteration":0,"iterations":10,"nprocs":2,"metric":"work",)"
    R"("metric_count":[100,300],"speed":[1,1],"decision":"none","partition":[50,50]})"
    "\n\n"
    R"({"interval":1,"iterations":20,"metric_count":[400,400],"partition_before":[50,50],)"
    R"("partition":[60,40],"decision":"rebalance"})"
    "\n";

WorkProfile parse(const std::string& text) {
  std::istringstream in(text);
  return WorkProfile::parse(in, "trace.jsonl");
}

// Expects parse(text) to fail with a bad_config error naming `needle`.
void expect_error(const std::string& text, const std::string& needle) {
  try {
    parse(text);
    FAIL() << "no error for " << text;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), Errc::bad_config);
    EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
  }
}

TEST(ComputationModel, ExtrapolationIsLinear) {
  const std::vector<double> rising = {100, 110, 120, 130};
  EXPECT_NEAR(extrapolate(rising), 140, 1e-9);
  EXPECT_NEAR(extrapolate(rising, 2), 140, 1e-9);
  EXPECT_DOUBLE_EQ(extrapolate(std::vector<double>{7}), 7);
  // The window: only the last 3 (flat) values count.
  EXPECT_NEAR(extrapolate(std::vector<double>{0, 50, 50, 50}, 3), 50, 1e-9);
  EXPECT_DOUBLE_EQ(extrapolate(std::vector<double>{10, 1}), 0.0);  // never below 0
  EXPECT_THROW(extrapolate(std::vector<double>{}), Error);
  EXPECT_THROW(extrapolate(std::vector<double>{1, -1}), Error);
  EXPECT_THROW(extrapolate(std::vector<double>{1}, 0), Error);
}

TEST(ComputationModel, WorkProfileFromATrace) {
  const WorkProfile profile = parse(kTrace);
  ASSERT_EQ(profile.intervals().size(), 2u);
  const ProfiledInterval* one = profile.find(1);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->iterations, 20);
  EXPECT_DOUBLE_EQ(one->total(), 800);
  EXPECT_EQ(one->rows, (std::vector<std::int64_t>{50, 50}));  // partition_before, not after
  EXPECT_EQ(profile.find(0)->rows, (std::vector<std::int64_t>{50, 50}));
  EXPECT_EQ(profile.find(2), nullptr);
}

TEST(ComputationModel, BadProfilesNameFileLineAndKey) {
  expect_error("", "no interval");
  expect_error(std::string(kTrace) + "{\"interval\": 2,", "trace.jsonl:4: key '(line)': not valid");
  expect_error(R"({"iterations":1,"metric_count":[1],"partition":[1]})",
               "trace.jsonl:1: key 'interval'");
  expect_error(R"({"interval":0,"iterations":0,"metric_count":[1],"partition":[1]})",
               "key 'iterations'");
  expect_error(R"({"interval":0,"iterations":1,"metric_count":[-1],"partition":[1]})",
               "key 'metric_count'");
  expect_error(R"({"interval":0,"iterations":1,"metric_count":[1,2],"partition":[1]})",
               "key 'partition'");
  // A key twice in a record: which interval is meant? (the parser kept the last)
  expect_error(R"({"interval":0,"interval":5,"iterations":1,"metric_count":[1]})",
               "trace.jsonl:1: key 'interval': given twice in one object");
  // The same key in two objects is no duplicate.
  EXPECT_NO_THROW(parse(R"({"interval":0,"iterations":1,"metric_count":[1],"x":{"interval":1}})"));
  // A static run's trace has no partition: the totals are all a profile needs.
  EXPECT_TRUE(parse(R"({"interval":0,"iterations":1,"metric_count":[1,2]})").find(0)->rows.empty());
  try {
    WorkProfile::load("/nonexistent/trace.jsonl");
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/trace.jsonl"), std::string::npos);
  }
  const std::string path = std::string(FLEXMPI_MODEL_TEST_DIR) + "/profile.jsonl";
  std::ofstream(path) << kTrace;
  EXPECT_EQ(WorkProfile::load(path).intervals().size(), 2u);
}

// A metric_count of 1e308 was accepted and failed mid-run inside AMP
// ("expected finite seconds >= 0, got inf"); an interval of 10^12 wrapped in
// an int. Each is refused at load, naming the line, the key and the range.
TEST(ComputationModel, OutOfRangeProfileNumbersAreRefusedWithTheirRange) {
  const std::string tail = R"(,"partition":[1]})";
  expect_error(R"({"interval":0,"iterations":1,"metric_count":[1e308])" + tail,
               "trace.jsonl:1: key 'metric_count': expected a number from 0 to 1e+18, got 1e+308");
  expect_error(R"({"interval":1000000000000,"iterations":1,"metric_count":[1])" + tail,
               "key 'interval': expected an integer from 0 to 2147483647, got 1000000000000");
  expect_error(R"({"interval":0,"iterations":-2,"metric_count":[1])" + tail,
               "key 'iterations': expected an integer from 1 to 2147483647, got -2");
  expect_error(R"({"interval":0,"iterations":1,"metric_count":[1],"wall_time":[1e10]})",
               "key 'wall_time': expected a number from 0 to 1000000000");
  expect_error(R"({"interval":0,"iterations":1,"metric_count":[1],"speed":[1e19]})", "key 'speed'");
  expect_error(R"({"interval":0,"iterations":1,"metric_count":[1],"partition":[3e9]})",
               "key 'partition': expected an integer from 0 to 2147483647");
  expect_error(R"({"interval":0,"iterations":1,"metric_count":[1],"partition":[0.5]})",
               "key 'partition'");
  // The largest accepted work still gives finite totals.
  EXPECT_DOUBLE_EQ(
      parse(R"({"interval":0,"iterations":1,"metric_count":[1e18,1e18]})").find(0)->total(), 2e18);
}

TEST(ComputationModel, ProfileCorrectionBeyondTheThreshold) {
  const WorkProfile profile = parse(kTrace);
  ProfileCorrection correction;  // 5 %
  EXPECT_DOUBLE_EQ(profiled_work(profile, 1, 20, correction), 800);
  EXPECT_DOUBLE_EQ(profiled_work(profile, 1, 10, correction), 400);  // per iteration x 10
  correction.observe(400, 416);                                      // 4 %: noise, no correction
  EXPECT_DOUBLE_EQ(correction.factor(), 1.0);
  correction.observe(400, 480);  // 20 % more work than profiled
  EXPECT_DOUBLE_EQ(correction.factor(), 1.2);
  EXPECT_DOUBLE_EQ(profiled_work(profile, 1, 20, correction), 960);
  correction.observe(0, 10);  // nothing profiled: factor kept
  EXPECT_DOUBLE_EQ(correction.factor(), 1.2);
  EXPECT_THROW(profiled_work(profile, 5, 20, correction), Error);
  EXPECT_THROW(profiled_work(profile, 1, 0, correction), Error);
  EXPECT_THROW(correction.observe(-1, 1), Error);
  EXPECT_THROW(ProfileCorrection(-0.1), Error);
}

TEST(ComputationModel, ProfiledStepsFollowTheProfileToTheEnd) {
  // No wall time, speed or MPI time traced: the work as it is, nothing else.
  const WorkProfile profile =
      parse(std::string(kTrace) + R"({"interval":2,"iterations":10,"metric_count":[800,800]})"
                                  "\n"
                                  R"({"interval":3,"iterations":30,"metric_count":[300,300]})");
  const std::vector<ProfiledStep> steps = profiled_steps(profile, 1);
  ASSERT_EQ(steps.size(), 3u);  // interval 1 itself, then 2 and 3
  EXPECT_DOUBLE_EQ(steps[1].work_per_iteration, 160.0);
  EXPECT_EQ(steps[2].iterations, 30);
  EXPECT_EQ(steps[2].processes, 2);
  EXPECT_DOUBLE_EQ(steps[2].work_per_iteration, 20.0);
  for (const ProfiledStep& step : steps) {
    EXPECT_DOUBLE_EQ(step.inefficiency, 1.0);
    EXPECT_DOUBLE_EQ(step.overhead_seconds, 0.0);
  }
  EXPECT_TRUE(profiled_steps(profile, 7).empty());   // not profiled
  EXPECT_EQ(profiled_steps(profile, 3).size(), 1u);  // nothing after it
  EXPECT_DOUBLE_EQ(profile.traced_seconds(), 0.0);   // no wall time traced
}

TEST(ComputationModel, ProfiledStepsSplitTheTimeRescaleSpeedAndSmooth) {
  // Six intervals of 10 iterations on 2 processes: work per iteration w,
  // summed speed S, least MPI time m per iteration, and a wall time of
  // e x w / S + m per iteration.
  const std::vector<double> w = {20, 20, 40, 40, 80, 80}, S = {200, 200, 200, 200, 400, 400},
                            e = {1.0, 1.0, 1.0, 9.0, 1.0, 1.0},
                            m = {0.001, 0.001, 0.001, 0.001, 0.002, 0.002};
  std::string trace;
  const auto text = [](double value) { return std::to_string(value); };
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double wall = (e[i] * w[i] / S[i] + m[i]) * 10;
    trace += "{\"interval\":" + std::to_string(i) + ",\"iterations\":10,\"metric_count\":[" +
             text(w[i] * 5) + "," + text(w[i] * 5) + "],\"speed\":[" + text(S[i] / 2) + "," +
             text(S[i] / 2) + "],\"wall_time\":[" + text(wall) + ",0],\"mpi_time\":[" +
             text(m[i] * 10 + 0.5) + "," + text(m[i] * 10) + "]}\n";
  }
  const WorkProfile profile = parse(trace);
  EXPECT_DOUBLE_EQ(profile.find(4)->speed, 400.0);
  EXPECT_DOUBLE_EQ(profile.find(4)->least_mpi, 0.02);
  const std::vector<ProfiledStep> steps = profiled_steps(profile, 0);
  ASSERT_EQ(steps.size(), 6u);
  // The one slow interval (9) is no forecast: the median of five is 1.
  for (const ProfiledStep& step : steps) EXPECT_NEAR(step.inefficiency, 1.0, 1e-4);
  // Overhead: medians of the neighbourhood.
  EXPECT_NEAR(steps[0].overhead_seconds, 0.001, 1e-9);
  EXPECT_NEAR(steps[4].overhead_seconds, 0.0015, 1e-9);
  EXPECT_NEAR(steps[5].overhead_seconds, 0.002, 1e-9);
  // Work in the units of interval 0's speed (median 200): interval 4's
  // neighbourhood ran at a median of 300, interval 5's at 400.
  EXPECT_NEAR(steps[3].work_per_iteration, 40.0, 1e-9);
  EXPECT_NEAR(steps[4].work_per_iteration, 80.0 * 200.0 / 300.0, 1e-9);
  EXPECT_NEAR(steps[5].work_per_iteration, 80.0 * 200.0 / 400.0, 1e-9);
  // From interval 5 on: its own speed is the unit.
  EXPECT_NEAR(profiled_steps(profile, 5).front().work_per_iteration, 80.0, 1e-9);
}

TEST(ComputationModel, SpreadWorkOverACandidatePartition) {
  // Measured: 100 rows of density 1, then 100 of density 3 (work 100, 300).
  const std::vector<double> work = {100, 300};
  const std::vector<std::int64_t> measured = {100, 100};
  std::vector<double> out(3);
  spread_work(800, work, measured, std::vector<std::int64_t>{150, 0, 50}, out);
  // 100 x 1 + 50 x 3 = 250 and 50 x 3 = 150 of 400, scaled to 800.
  EXPECT_DOUBLE_EQ(out[0], 500);
  EXPECT_DOUBLE_EQ(out[1], 0);
  EXPECT_DOUBLE_EQ(out[2], 300);
  // Nothing measured: uniform.
  std::vector<double> two(2);
  spread_work(10, std::vector<double>{0, 0}, measured, std::vector<std::int64_t>{50, 150}, two);
  EXPECT_DOUBLE_EQ(two[0], 2.5);
  EXPECT_THROW(spread_work(1, work, measured, std::vector<std::int64_t>{100, 99}, two), Error);
  EXPECT_THROW(spread_work(1, work, measured, std::vector<std::int64_t>{100}, two), Error);
  EXPECT_THROW(spread_work(-1, work, measured, std::vector<std::int64_t>{100, 100}, two), Error);
}

TEST(ComputationModel, Eq53PerProcess) {
  const ComputationTime t =
      computation_time(std::vector<double>{100, 300}, std::vector<double>{100, 200});
  EXPECT_DOUBLE_EQ(t.slowest, 1.5);
  EXPECT_DOUBLE_EQ(t.balanced, 400.0 / 300.0);  // eq. 5.3 as printed
  EXPECT_DOUBLE_EQ(computation_time(std::vector<double>{0}, std::vector<double>{0}).slowest, 0.0);
  EXPECT_THROW(computation_time(std::vector<double>{1}, std::vector<double>{0}), Error);
  EXPECT_THROW(computation_time(std::vector<double>{1}, std::vector<double>{1, 2}), Error);
  EXPECT_THROW(computation_time(std::vector<double>{-1}, std::vector<double>{1}), Error);
}

}  // namespace
}  // namespace flexmpi
