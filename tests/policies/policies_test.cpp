// The policy registry and the smp policy's schedule (thesis 5.4.1): unknown
// names are refused with the known ones, schedule files parse or name the line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "core/settings.hpp"
#include "flexmpi/error.hpp"
#include "model/machine_profile.hpp"
#include "model/reconfiguration_cost.hpp"
#include "policies/amp/amp_policy.hpp"
#include "policies/hpmp/hpmp_policy.hpp"
#include "policies/policy.hpp"
#include "policies/run_learning.hpp"
#include "policies/schedule.hpp"

namespace flexmpi {
namespace {

using ::testing::HasSubstr;

TEST(PolicyRegistry, EveryRegisteredNameMakesItsPolicy) {
  Config config;
  config.strategy_settings.set("FLEXMPI_GOAL", "60", 60.0);  // amp needs a goal
  for (const PolicyDescriptor& descriptor : policies()) {
    const auto policy = make_policy(descriptor.name, config);
    ASSERT_NE(policy, nullptr);
    EXPECT_EQ(policy->name(), descriptor.name);
    EXPECT_FALSE(descriptor.help.empty());
  }
}

TEST(PolicyRegistry, UnknownNameIsRefusedWithTheKnownOnes) {
  try {
    (void)make_policy("greedy", Config{});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_THAT(e.what(), HasSubstr("'greedy'"));
    EXPECT_THAT(e.what(), HasSubstr(policy_names()));
  }
  EXPECT_THAT(policy_names(), HasSubstr("none, lb, smp, hpmp"));
  EXPECT_TRUE(make_policy("hpmp", Config{})->uses_resources());
  EXPECT_THAT(policy_names(), HasSubstr("amp"));
}

TEST(Schedule, ParsesActionsInIterationOrder) {
  const auto actions = parse_schedule(
      "# comment\n\n300 remove 1 C1  # back\n100 spawn 2\n100 spawn 1 C7\n", "s.txt");
  ASSERT_EQ(actions.size(), 3u);
  EXPECT_EQ(actions[0], (ScheduledAction{100, true, 2, ""}));
  EXPECT_EQ(actions[1], (ScheduledAction{100, true, 1, "C7"}));  // stable: file order kept
  EXPECT_EQ(actions[2], (ScheduledAction{300, false, 1, "C1"}));
}

TEST(Schedule, BadLinesAreRefusedNamingTheLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"x spawn 1", "iteration"},
      {"-5 spawn 1", "iteration"},
      {"10 grow 1", "action 'grow'"},
      {"10 spawn", "count"},
      {"10 spawn 0", "count"},
      {"10 spawn 2x", "count"},
      {"10 spawn 1 C1 extra", "'extra'"},
      {"10 spawn 99999999999", "count '99999999999' is not a number from 1 to 2147483647"},
      {"99999999999999999999 spawn 1", "iteration '99999999999999999999' is not a number >= 0"},
      {"\xef\xbb\xbf"
       "10 spawn 1",
       "iteration '\\xef\\xbb\\xbf10'"},
  };
  for (const auto& [line, what] : cases) {
    SCOPED_TRACE(line);
    try {
      (void)parse_schedule(std::string("# first\n") + line + "\n", "plan.txt");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::bad_config);
      EXPECT_THAT(e.what(), HasSubstr("plan.txt line 2"));
      EXPECT_THAT(e.what(), HasSubstr(what));
      EXPECT_THAT(e.what(), HasSubstr("spawn|remove"));
    }
  }
}

// The parser is one pass over the text (a 50 MB schedule took
// 54 s); the timing is in docs/results.md, this checks the pass.
TEST(Schedule, ManyLinesInAnyOrderAndLayout) {
  std::string text;
  constexpr int kLines = 20000;
  for (int i = kLines - 1; i >= 0; --i) {
    text += std::to_string(i) + (i % 2 == 0 ? "\tspawn  1" : " remove 1 C1 # note") + "\n";
  }
  text += "   \n# last line without a newline\n7 spawn 3";
  const auto actions = parse_schedule(text, "big.txt");
  ASSERT_EQ(actions.size(), kLines + 1u);
  for (int i = 0; i < kLines; ++i) {
    EXPECT_EQ(actions[i + (i > 7 ? 1 : 0)].iteration, i);
  }
  EXPECT_EQ(actions[8], (ScheduledAction{7, true, 3, ""}));  // after the file's other 7
  EXPECT_EQ(actions[1], (ScheduledAction{1, false, 1, "C1"}));
}

TEST(Schedule, ConfigReadsTheFileOnceIntoTypedActions) {
  const std::string path = ::testing::TempDir() + "flexmpi_schedule_test.txt";
  std::ofstream(path) << "20 spawn 2\n40 remove 1\n";
  const Config config = load_config(
      [&](const char* name) -> const char* {
        return std::string(name) == "FLEXMPI_SCHEDULE" ? path.c_str() : nullptr;
      },
      {"FLEXMPI_SCHEDULE"});
  const auto* schedule =
      config.strategy_settings.find<std::vector<ScheduledAction>>("FLEXMPI_SCHEDULE");
  ASSERT_NE(schedule, nullptr);
  ASSERT_EQ(schedule->size(), 2u);
  EXPECT_EQ((*schedule)[1], (ScheduledAction{40, false, 1, ""}));
  EXPECT_EQ(config.strategy_settings.text("FLEXMPI_SCHEDULE"), path);
}

TEST(Schedule, ConfigRefusesAMissingOrBadFileNamingTheVariable) {
  const std::string bad = ::testing::TempDir() + "flexmpi_bad_schedule.txt";
  std::ofstream(bad) << "20 spawn lots\n";
  for (const std::string& path : {std::string("/nonexistent/schedule.txt"), bad}) {
    SCOPED_TRACE(path);
    try {
      (void)load_config(
          [&](const char* name) -> const char* {
            return std::string(name) == "FLEXMPI_SCHEDULE" ? path.c_str() : nullptr;
          },
          {"FLEXMPI_SCHEDULE"});
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::bad_config);
      EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_SCHEDULE"));
      EXPECT_THAT(e.what(), HasSubstr(path));
    }
  }
}

// HPMP's spawning step (thesis 5.4.2, Alg. 7), without MPI: a process of
// class F (speed 100 work/s) and one of S (50 work/s), 10 iterations each in
// the interval; F is twice as fast as S in the node-class file.
struct HpmpFixture {
  IntervalReport report;
  ResourceView view;
  std::vector<NodeClass> classes{{"F", 2.0, 0.4, 0.0}, {"S", 1.0, 0.1, 0.0}};
  RedistributionCost price;
  MachineProfile profile = MachineProfile::defaults();

  HpmpFixture() {
    for (const double metric : {100.0, 50.0}) {
      ProcessInterval p;
      p.iterations = 10;
      p.wall = 1.0;
      p.cpu = 1.0;
      p.metric = metric;
      report.processes.push_back(p);
    }
    view.classes = {{"F", 2, 1, 0, 0.4}, {"S", 2, 1, 0, 0.1}};
    view.process_classes = {"F", "S"};
  }
  std::optional<HpmpPlan> plan(int max_procs, long long remaining) const {
    return hpmp_plan(
        HpmpSituation{report, view, classes, price, profile, max_procs, remaining, 1e6, 0.05});
  }
};

TEST(HpmpPolicy, SpawnsOnTheClassesPredictedFastestAndRecordsEveryCandidate) {
  const HpmpFixture f;
  const auto plan = f.plan(0, 100);
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->offers.size(), 2u);
  EXPECT_DOUBLE_EQ(plan->offers[0].speed, 100.0);  // the mean measured speed of the class
  EXPECT_DOUBLE_EQ(plan->offers[1].speed, 50.0);
  EXPECT_DOUBLE_EQ(plan->work_per_iteration, 15.0);
  EXPECT_DOUBLE_EQ(plan->current_speed, 150.0);
  // s = 0: 100 x 15 / 150; s = 1 (F): 100 x 15 / 250 + spawn + data; s = 2: 15 / 300.
  ASSERT_EQ(plan->decision.considered.size(), 3u);
  EXPECT_DOUBLE_EQ(plan->decision.considered[0].predicted_seconds, 10.0);
  const double one = 6.0 + spawn_cost(f.profile, 1) + f.price.predict(1e6 * 100.0 / 250.0);
  EXPECT_DOUBLE_EQ(plan->decision.considered[1].predicted_seconds, one);
  EXPECT_EQ(plan->decision.considered[1].delta, (std::vector<int>{1, 0}));
  EXPECT_EQ(plan->decision.delta, (std::vector<int>{1, 1}));
  EXPECT_EQ(plan->spawn_classes(), (std::vector<std::string>{"F", "S"}));
  const nlohmann::json record = plan->to_json();
  EXPECT_EQ(record["considered"].size(), 3u);
  EXPECT_EQ(record["offers"][0]["name"], "F");
}

// Eq. 5.1's communication term: an interval of 10 iterations with 10
// Alltoalls of 1 MB each on the 2 processes, replayed on each candidate's
// count (an added process makes every Alltoall dearer) and added to the
// computation of each candidate HPMP considers.
TEST(HpmpPolicy, CommunicationOnTheCandidateCountIsPriced) {
  const HpmpFixture f;
  CommunicationReplay replay;
  replay.ops = {{Routine::alltoall, 2, 10, 10e6, 10e6}};
  replay.processes = 2;
  replay.iterations = 10;
  replay.library = MpiLibrary::open_mpi;
  replay.link = f.profile.link(false);
  HpmpSituation situation{f.report, f.view, f.classes, f.price, f.profile, 0, 100, 1e6, 0.05};
  situation.communication = &replay;
  const auto plan = hpmp_plan(situation);
  ASSERT_TRUE(plan.has_value());
  for (const auto& candidate : plan->decision.considered) {
    int processes = 2;
    for (const int d : candidate.delta) processes += d;
    const double computation =
        100 * 15.0 / (150.0 + 100.0 * candidate.delta[0] + 50.0 * candidate.delta[1]);
    EXPECT_GT(candidate.predicted_seconds,
              computation + 100 * replay.per_iteration(processes) - 1e-9);
  }
  // 1 MB Alltoalls cost more on 4 processes than on 2 (each sends 3 pieces).
  EXPECT_GT(replay.per_iteration(4), replay.per_iteration(2));
  EXPECT_DOUBLE_EQ(replay.per_iteration(1), 0.0);  // a lone process sends nothing
}

TEST(HpmpPolicy, MaxProcsCapsTheFreePesFastestFirst) {
  const HpmpFixture f;
  const auto plan = f.plan(3, 100);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->offers[0].free_pes, 1);
  EXPECT_EQ(plan->offers[1].free_pes, 0);
  EXPECT_EQ(plan->decision.delta, (std::vector<int>{1, 0}));
  EXPECT_FALSE(f.plan(2, 100).has_value());  // at FLEXMPI_MAX_PROCS
}

TEST(HpmpPolicy, KeepsTheProcessesWhenTheSpawnCostsMoreThanItGains) {
  const HpmpFixture f;
  const auto plan = f.plan(0, 1);  // one iteration left: 0.1 s, a spawn costs more
  ASSERT_TRUE(plan.has_value());
  EXPECT_FALSE(plan->decision.changes());
  EXPECT_TRUE(plan->spawn_classes().empty());
}

TEST(HpmpPolicy, AnUnmeasuredClassGetsItsRelativeSpeedOfTheMeasuredOnes) {
  HpmpFixture f;
  f.view.classes = {{"F", 1, 0, 0, 0.4}, {"S", 2, 2, 0, 0.1}};
  f.view.process_classes = {"S", "S"};
  f.report.processes[0].metric = 50.0;
  const auto plan = f.plan(0, 100);
  ASSERT_TRUE(plan.has_value());
  // S measured at 50 and of relative speed 0.5: a PE of F does 100.
  EXPECT_DOUBLE_EQ(plan->offers[0].speed, 100.0);
  EXPECT_EQ(plan->offers[1].free_pes, 0);
  EXPECT_EQ(plan->decision.delta, (std::vector<int>{1, 0}));
}

// The trace's "prediction" is the remaining run the decision compared, by
// phase (model/run_predictor.hpp): here the chosen spawn of one F and one S.
TEST(HpmpPolicy, TheTracedPredictionIsTheOneTheDecisionUsed) {
  const HpmpFixture f;
  const auto plan = f.plan(0, 100);
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->decision.delta, (std::vector<int>{1, 1}));
  const RunPrediction& predicted = plan->prediction;
  EXPECT_EQ(predicted.seconds, plan->decision.predicted_seconds);
  EXPECT_DOUBLE_EQ(predicted.iteration.computation, 15.0 / 300.0);
  EXPECT_DOUBLE_EQ(predicted.iteration.communication, 0.0);
  EXPECT_DOUBLE_EQ(predicted.iterations_seconds, 100 * 15.0 / 300.0);
  EXPECT_DOUBLE_EQ(predicted.reconfiguration, spawn_cost(f.profile, 2));
  EXPECT_DOUBLE_EQ(predicted.redistribution, f.price.predict(1e6 * 150.0 / 300.0));
  EXPECT_EQ(plan->to_json()["prediction"]["seconds"].get<double>(), predicted.seconds);
}

TEST(HpmpPolicy, NothingToPlanWithoutIdlePesOrMeasurements) {
  HpmpFixture f;
  f.view.classes = {{"F", 1, 1, 0, 0.4}, {"S", 1, 1, 0, 0.1}};
  EXPECT_FALSE(f.plan(0, 100).has_value());
  HpmpFixture unmeasured;
  for (ProcessInterval& p : unmeasured.report.processes) p.metric = 0.0;
  EXPECT_FALSE(unmeasured.plan(0, 100).has_value());
}

// AMP's planning step (thesis 5.4.3, Alg. 8), on HPMP's fixture: with no
// change the remaining 100 iterations are predicted 100 x 15 / 150 = 10 s.
std::optional<AmpPlan> amp(const HpmpFixture& f, double goal, double elapsed,
                           long long remaining = 100,
                           AmpConstraint constraint = AmpConstraint::efficiency) {
  return amp_plan(
      OfferSituation{f.report, f.view, f.classes, f.price, f.profile, 0, remaining, 1e6, 0.05},
      goal, elapsed, 0.01, constraint);
}

TEST(AmpPolicy, TheTracedPredictionIsTheOneTheDecisionUsed) {
  const HpmpFixture f;
  for (const double goal : {10.0, 8.0}) {  // kept, and a spawn to meet 8 s
    const auto plan = amp(f, goal, 0.0);
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->prediction.seconds, plan->decision.predicted_seconds) << goal;
    EXPECT_EQ(plan->to_json()["prediction"]["seconds"].get<double>(), plan->prediction.seconds);
  }
}

TEST(AmpPolicy, CorrectionIsMeasuredOverTheBalancedModel) {
  HpmpFixture f;  // two processes, 10 iterations, 1 s of computation each
  const OfferSituation situation{f.report, f.view, f.classes, f.price, f.profile,
                                 0,        100,    1e6,       0.05};
  // Modelled: W / S = 15 / 150 = 0.1 s per iteration.
  EXPECT_DOUBLE_EQ(measured_over_modelled(situation, 1.25).value(), 1.25);
  // An imbalanced interval: S computes its 50 in half the time (speed 100),
  // so the balanced model is 15 / 200 = 0.075 s and the interval's 0.1 s per
  // iteration is 4/3 of it: the imbalance a settled interval keeps counts.
  f.report.processes[1].wall = 0.5;
  f.report.processes[1].cpu = 0.5;
  EXPECT_DOUBLE_EQ(measured_over_modelled(situation, 1.0).value(), 0.1 / 0.075);
  // Nothing measured: no correction.
  EXPECT_FALSE(measured_over_modelled(situation, 0.0).has_value());
  f.report.processes.clear();
  EXPECT_FALSE(measured_over_modelled(situation, 1.0).has_value());
}

TEST(AmpPolicy, WithAProfileComputationAndOverheadAreCorrectedApart) {
  HpmpFixture f;                    // two processes, 10 iterations
  f.report.processes[0].mpi = 0.2;  // the least in MPI: 0.02 s per iteration
  f.report.processes[1].mpi = 0.3;
  OfferSituation situation{f.report, f.view, f.classes, f.price, f.profile, 0, 100, 1e6, 0.05};
  EXPECT_FALSE(overhead_beyond_modelled(situation, 1.25).has_value());  // no profile
  // Profiled: computation 1.5 x W / S, overhead 0.01 s per iteration.
  situation.profiled_steps = {{10, 2, 15.0, 1.5, 0.01}};
  const double speed = build_class_offers(situation).value().current_speed;
  // 1.25 s over 10 iterations: 0.02 s of overhead, 0.105 s of computation.
  EXPECT_NEAR(measured_over_modelled(situation, 1.25).value(), 0.105 / (1.5 * 15.0 / speed), 1e-12);
  EXPECT_NEAR(overhead_beyond_modelled(situation, 1.25).value(), 0.01, 1e-12);
  situation.profiled_steps.front().overhead_seconds = 0.03;
  EXPECT_NEAR(overhead_beyond_modelled(situation, 1.25).value(), -0.01, 1e-12);
}

TEST(AmpPolicy, TheCorrectionOfACountIsItsOwnInterpolatedOrTheRisingTrend) {
  const HpmpFixture f;
  OfferSituation situation{f.report, f.view, f.classes, f.price, f.profile, 0, 100, 1e6, 0.05};
  EXPECT_DOUBLE_EQ(iteration_correction_at(situation, 5), 1.0);  // none measured
  situation.iteration_corrections = {{2, 1.1}, {6, 1.5}};
  EXPECT_DOUBLE_EQ(iteration_correction_at(situation, 2), 1.1);
  EXPECT_DOUBLE_EQ(iteration_correction_at(situation, 3), 1.2);
  EXPECT_DOUBLE_EQ(iteration_correction_at(situation, 6), 1.5);
  EXPECT_DOUBLE_EQ(iteration_correction_at(situation, 1), 1.1);  // below: the nearest
  EXPECT_DOUBLE_EQ(iteration_correction_at(situation, 9), 1.8);  // above: the rising trend
  EXPECT_DOUBLE_EQ(correction_at(situation.iteration_corrections, 9, false), 1.5);  // or flat
  situation.iteration_corrections = {{2, 1.5}, {6, 1.1}};
  EXPECT_DOUBLE_EQ(iteration_correction_at(situation, 9), 1.1);  // never a falling one
  situation.iteration_corrections = {{2, 1.1}, {6, 1.5}};
  // The prediction applies the new count's: one F spawned makes 3 processes.
  const ClassOffers offers = build_class_offers(situation).value();
  EXPECT_DOUBLE_EQ(CandidatePredictor(situation, offers).seconds({0, 0}), 10.0 * 1.1);
  situation.iteration_corrections = {};
  const double uncorrected = CandidatePredictor(situation, offers).seconds({1, 0});
  situation.iteration_corrections = {{2, 1.1}, {6, 1.5}};
  const double reconfiguration = spawn_cost(f.profile, 1) + f.price.predict(1e6 * 100.0 / 250.0);
  EXPECT_NEAR(CandidatePredictor(situation, offers).seconds({1, 0}),
              (uncorrected - reconfiguration) * 1.2 + reconfiguration, 1e-12);
  // An irregular program's profile (profiled_steps): the interval measured,
  // then 10 iterations of twice its work and 30 of the same work that ran
  // 3 times longer than the model in the profiled run. Scaled to the 100
  // iterations left: (10 x 2 + 30 x 3) / 40 x 100 x 0.1 s.
  // Per iteration: 10 x (2 x 0.1 s + 0.01 s) + 30 x 3 x 0.1 s over 40.
  situation.iteration_corrections = {};
  const double work = offers.work_per_iteration;
  situation.profiled_steps = {
      {5, 2, work, 1.5, 0.0}, {10, 2, 2 * work, 1.0, 0.01}, {30, 2, work, 3.0, 0.0}};
  EXPECT_NEAR(CandidatePredictor(situation, offers).seconds({0, 0}), (2.1 + 9.0) / 40.0 * 100.0,
              1e-12);
  // The computation corrected, the overhead offset at the count (never below 0).
  situation.iteration_corrections = {{2, 2.0}};
  situation.overhead_offsets = {{2, -0.005}};
  EXPECT_DOUBLE_EQ(overhead_offset_at(situation, 9), -0.005);  // the nearest, no trend
  EXPECT_NEAR(CandidatePredictor(situation, offers).seconds({0, 0}),
              (10 * (2 * 0.2 + 0.005) + 30 * 2 * 0.3) / 40.0 * 100.0, 1e-12);
  situation.overhead_offsets = {};
  // Nothing profiled after the interval measured: like it to the end.
  situation.profiled_steps = {{5, 2, work, 1.5, 0.01}};
  EXPECT_NEAR(CandidatePredictor(situation, offers).seconds({0, 0}), (2 * 0.15 + 0.01) * 100.0,
              1e-12);
}

TEST(RunLearning, LearnsOnRepresentativeIntervalsAndIsReadyOnMeasuredCounts) {
  HpmpFixture f;  // two processes; the balanced model: 0.1 s per iteration
  OfferSituation situation{f.report, f.view, f.classes, f.price, f.profile, 0, 100, 1e6, 0.05};
  RunLearning learning;
  const auto interval = [&](double seconds, bool after_change) {
    for (ProcessInterval& p : f.report.processes) {  // 1 s of computation, the rest MPI
      p.wall = seconds;
      p.cpu = seconds;
      p.mpi = seconds - 1.0;
    }
    learning.observe(f.report, after_change);
    learning.learn_and_apply(situation);
  };
  interval(1.5, false);  // the start's equal blocks: nothing learnt
  EXPECT_FALSE(learning.ready());
  EXPECT_TRUE(situation.iteration_corrections.empty());
  learning.after_balancing(true);
  interval(1.5, false);  // the balancer still waits to confirm
  EXPECT_FALSE(learning.ready());
  learning.after_balancing(false);
  f.report.processes[1].redistribution_seconds = 0.2;
  interval(1.5, false);  // rows moved just before: not representative
  EXPECT_FALSE(learning.ready());
  EXPECT_TRUE(situation.iteration_corrections.empty());
  f.report.processes[1].redistribution_seconds = 0.0;
  interval(1.2, false);
  EXPECT_TRUE(learning.ready());
  EXPECT_EQ(situation.iteration_corrections, (std::map<int, double>{{2, 1.2}}));
  interval(1.2, true);  // right after a change: no plan, nothing learnt
  EXPECT_FALSE(learning.ready());
  f.report.processes.push_back(f.report.processes[1]);  // a third: learnt when first representative
  f.view.process_classes.push_back("S");
  learning.after_balancing(true);  // the change unbalanced the blocks: judged first
  interval(1.3, false);
  EXPECT_FALSE(learning.ready());
  EXPECT_FALSE(situation.iteration_corrections.contains(3));
  learning.after_balancing(false);
  interval(1.0, false);
  EXPECT_TRUE(learning.ready());
  f.report.processes.push_back(f.report.processes[1]);
  f.view.process_classes.push_back("S");
  learning.after_balancing(false);
  learning.observe(f.report, true);  // a spawned fourth: not measured, not ready
  EXPECT_FALSE(learning.ready());
  RunLearning imported;  // a spawned process
  imported.from_json(learning.to_json());
  EXPECT_EQ(imported.to_json(), learning.to_json());
  EXPECT_EQ(imported.iteration_corrections().size(), 2u);
}

TEST(RunLearning, AChangeIsPricedOnTheRunsClock) {
  HpmpFixture f;
  OfferSituation situation{f.report, f.view, f.classes, f.price, f.profile, 0, 100, 1e6, 0.05};
  RunLearning learning;
  const auto interval = [&](double wall, double clock, bool after_change, double spawn) {
    for (ProcessInterval& p : f.report.processes) {
      p.wall = wall;
      p.run_seconds = clock;
      p.reconfiguration_seconds = spawn;
    }
    learning.observe(f.report, after_change);
    learning.learn_and_apply(situation);
  };
  interval(1.0, 1.0, false, 0.0);
  interval(1.0, 2.0, false, 0.0);
  // After a spawn of 0.5 s: 3 s on the clock, of which the interval's 1.5 s,
  // the spawn, and 1 s the application spent between the intervals.
  interval(1.5, 5.0, true, 0.5);
  EXPECT_DOUBLE_EQ(situation.change_settling_seconds, 0.0);
  interval(1.0, 6.0, false, 0.0);  // settled: 1 s
  EXPECT_DOUBLE_EQ(situation.change_settling_seconds, 2.5 - 1.0);
}

TEST(AmpPolicy, AChangePaysTheSettlingOfTheIntervalAfterIt) {
  const HpmpFixture f;
  OfferSituation situation{f.report, f.view, f.classes, f.price, f.profile, 0, 100, 1e6, 0.05};
  const ClassOffers offers = build_class_offers(situation).value();
  const double one_f = CandidatePredictor(situation, offers).seconds({1, 0});
  situation.change_settling_seconds = 2.0;
  EXPECT_DOUBLE_EQ(CandidatePredictor(situation, offers).seconds({0, 0}),
                   10.0);  // no change, no settling
  EXPECT_DOUBLE_EQ(CandidatePredictor(situation, offers).seconds({1, 0}), one_f + 2.0);
}

TEST(AmpPolicy, SettlingCostIsTheIntervalAfterAChangeBeyondTheNextOne) {
  SettlingCost cost;
  cost.observe(1.0, 10, false);  // no change yet: nothing to price
  EXPECT_DOUBLE_EQ(cost.seconds(), 0.0);
  cost.observe(2.0, 10, true);  // the interval after a spawn: 2 s
  EXPECT_DOUBLE_EQ(cost.seconds(), 0.0);
  cost.observe(0.4, 5, false);  // settled: 0.08 s per iteration, 0.8 s for 10
  EXPECT_DOUBLE_EQ(cost.seconds(), 1.2);
  cost.observe(0.1, 5, false);  // later settled intervals price nothing more
  EXPECT_DOUBLE_EQ(cost.seconds(), 1.2);
  cost.observe(0.5, 10, true);  // a change whose next interval was no slower: 0, not < 0
  cost.observe(1.0, 10, false);
  EXPECT_DOUBLE_EQ(cost.seconds(), 0.6);  // median of 1.2 and 0
  cost.observe(1.5, 10, true);            // a spawned process imports the pending interval
  SettlingCost imported;
  imported.from_json(cost.to_json());
  EXPECT_EQ(imported.to_json(), cost.to_json());
  imported.observe(1.0, 10, false);
  EXPECT_DOUBLE_EQ(imported.seconds(), 0.5);    // median of 1.2, 0, 0.5
  for (int change = 0; change < 3; ++change) {  // the latest 3 changes count
    imported.observe(3.0, 10, true);
    imported.observe(1.0, 10, false);
  }
  EXPECT_DOUBLE_EQ(imported.seconds(), 2.0);
}

TEST(AmpPolicy, KeepsTheProcessesWhileThePredictionIsInTheGoalBand) {
  const HpmpFixture f;
  for (const double goal : {10.0, 9.95, 10.05}) {
    SCOPED_TRACE(goal);
    const auto plan = amp(f, goal, 0.0);
    ASSERT_TRUE(plan.has_value());
    EXPECT_DOUBLE_EQ(plan->current_prediction, 10.0);
    EXPECT_FALSE(plan->decision.changes());
    EXPECT_TRUE(plan->decision.meets_goal);
  }
}

TEST(AmpPolicy, TheRemainingGoalIsTheGoalMinusTheElapsedTime) {
  const HpmpFixture f;
  // 7 s left: one F process (6 s + its spawn and data) meets it, one S (7.5 s) does not.
  const double one_f = 6.0 + spawn_cost(f.profile, 1) + f.price.predict(1e6 * 100.0 / 250.0);
  ASSERT_LT(one_f, 7.0 * 1.01);
  for (const auto& [goal, elapsed] : {std::pair{7.0, 0.0}, std::pair{17.0, 10.0}}) {
    SCOPED_TRACE(goal);
    const auto plan = amp(f, goal, elapsed);
    ASSERT_TRUE(plan.has_value());
    EXPECT_DOUBLE_EQ(plan->remaining_goal, 7.0);
    EXPECT_TRUE(plan->decision.meets_goal);
    EXPECT_EQ(plan->decision.delta, (std::vector<int>{1, 0}));
    EXPECT_DOUBLE_EQ(plan->decision.predicted_seconds, one_f);
    EXPECT_EQ(plan->offers.spawn_classes(plan->decision.delta), (std::vector<std::string>{"F"}));
    const nlohmann::json record = plan->to_json();
    EXPECT_DOUBLE_EQ(record["goal_seconds"].get<double>(), goal);
    EXPECT_DOUBLE_EQ(record["remaining_goal_seconds"].get<double>(), 7.0);
    EXPECT_DOUBLE_EQ(record["current_prediction_seconds"].get<double>(), 10.0);
    EXPECT_FALSE(record["considered"].empty());
  }
}

TEST(AmpPolicy, AGoalOutOfReachTakesTheFastestSpawnAsBestEffort) {
  const HpmpFixture f;
  for (const auto& [goal, elapsed] : {std::pair{1.0, 0.0}, std::pair{5.0, 10.0}}) {
    SCOPED_TRACE(goal);
    const auto plan = amp(f, goal, elapsed);  // the second one has passed already
    ASSERT_TRUE(plan.has_value());
    EXPECT_FALSE(plan->decision.meets_goal);
    EXPECT_EQ(plan->decision.delta, (std::vector<int>{1, 1}));  // HPMP's fastest, above
  }
}

TEST(AmpPolicy, AFarGoalRemovesTheSpawnedProcessesThatCanGo) {
  HpmpFixture f;
  // Three processes: two of F (one spawned, removable) and one of S.
  ProcessInterval spawned = f.report.processes[0];
  f.report.processes.insert(f.report.processes.begin() + 1, spawned);
  f.view.classes = {{"F", 2, 2, 1, 0.4}, {"S", 2, 1, 0, 0.1}};
  f.view.process_classes = {"F", "F", "S"};
  const auto plan = amp(f, 100.0, 0.0);
  ASSERT_TRUE(plan.has_value());
  EXPECT_DOUBLE_EQ(plan->current_prediction, 100.0 * 25.0 / 250.0);
  EXPECT_EQ(plan->decision.delta, (std::vector<int>{-1, 0}));
  EXPECT_EQ(plan->offers.remove_classes(plan->decision.delta), (std::vector<std::string>{"F"}));
  EXPECT_TRUE(plan->offers.spawn_classes(plan->decision.delta).empty());
  // The removal's prediction counts its cost and the data the others take over.
  const double removed =
      100.0 * 25.0 / 150.0 + remove_cost(f.profile, 1) + f.price.predict(1e6 * 100.0 / 250.0);
  EXPECT_DOUBLE_EQ(plan->decision.predicted_seconds, removed);
}

TEST(AmpPolicy, NothingToPlanOnTheLastIterationOrWithoutMeasurements) {
  HpmpFixture f;
  EXPECT_FALSE(amp(f, 5.0, 0.0, 0).has_value());
  for (ProcessInterval& p : f.report.processes) p.metric = 0.0;
  EXPECT_FALSE(amp(f, 5.0, 0.0).has_value());
}

TEST(AmpPolicy, ConstraintNamesAndTheGoalCrossCheck) {
  EXPECT_EQ(parse_amp_constraint("efficiency"), AmpConstraint::efficiency);
  EXPECT_EQ(parse_amp_constraint("cost"), AmpConstraint::cost);
  EXPECT_EQ(parse_amp_constraint("energy"), AmpConstraint::energy);
  EXPECT_THROW((void)parse_amp_constraint("time"), Error);
  Config config;
  try {
    (void)make_policy("amp", config);
    ADD_FAILURE() << "amp made without a goal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_GOAL"));
  }
  config.strategy_settings.set("FLEXMPI_GOAL", "10", 10.0);
  config.strategy_settings.set("FLEXMPI_GOAL_SPEEDUP", "0.3", 0.3);
  EXPECT_THROW((void)make_policy("amp", config), Error);
}

TEST(AmpPolicy, ASpawnedProcessImportsTheElapsedTimeAndTheGoal) {
  Config config;
  config.strategy_settings.set("FLEXMPI_GOAL_SPEEDUP", "0.3", 0.3);
  AmpPolicy parent(config);
  EXPECT_FALSE(parent.goal_seconds().has_value());
  parent.import_state({{"elapsed_seconds", 12.5}, {"goal_seconds", 40.0}});
  AmpPolicy child(config);
  child.import_state(parent.export_state());
  EXPECT_DOUBLE_EQ(child.elapsed_seconds(), 12.5);
  EXPECT_DOUBLE_EQ(child.goal_seconds().value(), 40.0);
  EXPECT_EQ(child.export_state(), parent.export_state());
  AmpPolicy fresh(config);
  fresh.import_state(AmpPolicy(config).export_state());  // no goal known yet: none imported
  EXPECT_FALSE(fresh.goal_seconds().has_value());
}

}  // namespace
}  // namespace flexmpi
