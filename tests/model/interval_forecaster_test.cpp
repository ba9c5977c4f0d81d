// Predicted against measured per interval (thesis 6.3): the forecaster puts
// each interval's prediction beside its measurement, learns lambda from the
// communication term and predicts nothing across a change of the process set.
#include "model/interval_forecaster.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <sstream>
#include <vector>

#include "model/reconfiguration_cost.hpp"

namespace flexmpi {
namespace {

// Two processes: `work` units each in `computation` seconds, `mpi` seconds of MPI.
IntervalReport report(std::vector<double> work, std::vector<double> computation,
                      std::vector<double> mpi) {
  IntervalReport r;
  for (std::size_t p = 0; p < work.size(); ++p) {
    ProcessInterval process;
    process.rank = static_cast<int>(p);
    process.iterations = 10;
    process.metric = work[p];
    process.mpi = mpi[p];
    process.wall = computation[p] + mpi[p];
    r.processes.push_back(process);
  }
  return r;
}

std::vector<CommOpCount> one_allreduce() {
  CommOpCount op;
  op.routine = Routine::allreduce;
  op.comm_size = 2;
  op.calls = 10;
  op.bytes_sent = 80.0;
  op.bytes_received = 80.0;
  return {op};
}

// The next interval's blocks, reached by moving `bytes` (busiest process).
Candidate blocks(const std::vector<std::int64_t>& rows, double bytes) {
  Candidate next;
  next.rows = rows;
  next.busiest_bytes = bytes;
  return next;
}

TEST(IntervalForecaster, NothingIsPredictedForTheFirstInterval) {
  IntervalForecaster forecaster(MachineProfile::defaults(), MpiLibrary::open_mpi);
  EXPECT_TRUE(forecaster.settle(report({100, 50}, {1.0, 1.0}, {0.1, 0.1})).empty());
}

TEST(IntervalForecaster, ARegularIntervalIsPredictedAsMeasured) {
  IntervalForecaster forecaster(MachineProfile::defaults(), MpiLibrary::open_mpi);
  const IntervalReport first = report({100, 50}, {1.0, 1.0}, {0.01, 0.02});
  (void)forecaster.settle(first);
  const std::vector<std::int64_t> rows = {100, 50};
  forecaster.forecast(first, rows, blocks(rows, 0.0), one_allreduce());
  const nlohmann::json record = forecaster.settle(first).at("prediction");
  EXPECT_EQ(record.at("machine_profile"), "defaults");
  // The same work at the same speeds: the slowest process's second.
  EXPECT_NEAR(record["predicted"]["computation"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(record["relative_error"]["computation"].get<double>(), 0.0, 1e-9);
  EXPECT_DOUBLE_EQ(record["measured"]["communication"].get<double>(), 0.01);  // the least MPI time
  EXPECT_TRUE(record["relative_error"]["redistribution"].is_null());          // nothing moved
  EXPECT_GT(record["predicted"]["communication"].get<double>(), 0.0);
}

TEST(IntervalForecaster, LambdaCorrectsTheNextCommunicationPrediction) {
  IntervalForecaster forecaster(MachineProfile::defaults(), MpiLibrary::open_mpi);
  const IntervalReport r = report({100, 100}, {1.0, 1.0}, {0.05, 0.05});
  const std::vector<std::int64_t> rows = {100, 100};
  (void)forecaster.settle(r);
  forecaster.forecast(r, rows, blocks(rows, 0.0), one_allreduce());
  const double raw = forecaster.settle(r)["prediction"]["predicted"]["communication"];
  EXPECT_NEAR(forecaster.lambda(2), 0.05 / raw, 1e-9 * forecaster.lambda(2));
  forecaster.forecast(r, rows, blocks(rows, 0.0), one_allreduce());
  const nlohmann::json second = forecaster.settle(r)["prediction"];
  EXPECT_NEAR(second["predicted"]["communication"].get<double>(), 0.05, 1e-9);
}

TEST(IntervalForecaster, AMoveIsPricedAndABalancedPartitionPredicted) {
  IntervalForecaster forecaster(MachineProfile::defaults(), MpiLibrary::open_mpi);
  // Process 1 is half as fast; the next blocks give it a third of the rows.
  const IntervalReport r = report({150, 150}, {1.0, 2.0}, {0.0, 0.0});
  (void)forecaster.settle(r);
  const std::vector<std::int64_t> before = {150, 150}, after = {200, 100};
  forecaster.forecast(r, before, blocks(after, 50 * 8000.0), {});
  const nlohmann::json record = forecaster.settle(r)["prediction"];
  EXPECT_NEAR(record["predicted"]["computation"].get<double>(), 200.0 / 150.0, 1e-9);
  EXPECT_GT(record["predicted"]["redistribution"].get<double>(), 0.0);
}

TEST(IntervalForecaster, NoPredictionAcrossAChangeOfTheProcessSet) {
  IntervalForecaster forecaster(MachineProfile::defaults(), MpiLibrary::open_mpi);
  const IntervalReport two = report({100, 100}, {1.0, 1.0}, {0.0, 0.0});
  const std::vector<std::int64_t> rows = {100, 100};
  (void)forecaster.settle(two);
  forecaster.forecast(two, rows, blocks(rows, 0.0), {});
  forecaster.forget();
  EXPECT_TRUE(forecaster.settle(two).empty());
  // Blocks for another number of processes: not predicted either.
  const std::vector<std::int64_t> three = {70, 70, 60};
  forecaster.forecast(two, rows, blocks(three, 0.0), {});
  EXPECT_TRUE(forecaster.settle(report({70, 70, 60}, {1, 1, 1}, {0, 0, 0})).empty());
}

// The application spawned behind the loop's back (XMPI_Spawn): the interval
// predicted for 2 processes ran on 3, and is not compared with it.
TEST(IntervalForecaster, APredictionForAnotherProcessCountIsNotSettled) {
  IntervalForecaster forecaster(MachineProfile::defaults(), MpiLibrary::open_mpi);
  const IntervalReport two = report({100, 100}, {1.0, 1.0}, {0.0, 0.0});
  const std::vector<std::int64_t> rows = {100, 100};
  (void)forecaster.settle(two);
  forecaster.forecast(two, rows, blocks(rows, 0.0), {});
  EXPECT_TRUE(forecaster.settle(report({70, 70, 60}, {1, 1, 1}, {0, 0, 0})).empty());
  EXPECT_TRUE(forecaster.settle(two).empty());  // and the prediction is gone
}

// The first interval after a reconfiguration runs slow (first touches of the
// new rows): the next is predicted with the median speed, not that one's.
TEST(IntervalForecaster, OneSlowIntervalDoesNotSetTheSpeed) {
  IntervalForecaster forecaster(MachineProfile::defaults(), MpiLibrary::open_mpi);
  const std::vector<std::int64_t> rows = {100, 100};
  for (const double seconds : {1.0, 1.0, 3.0}) {
    (void)forecaster.settle(report({100, 100}, {seconds, seconds}, {0.0, 0.0}));
  }
  forecaster.forecast(report({100, 100}, {3.0, 3.0}, {0.0, 0.0}), rows, blocks(rows, 0.0), {});
  const nlohmann::json record =
      forecaster.settle(report({100, 100}, {1.0, 1.0}, {0.0, 0.0}))["prediction"];
  EXPECT_NEAR(record["predicted"]["computation"].get<double>(), 1.0, 1e-9);
}

// A spawn the loop decided (thesis Table 6.8): the interval after it is
// predicted on the new set, with the spawn and the handover priced, and set
// beside what they cost.
TEST(IntervalForecaster, ASpawnIsPredictedPhaseByPhase) {
  IntervalForecaster forecaster(MachineProfile::defaults(), MpiLibrary::open_mpi);
  const IntervalReport two = report({100, 100}, {1.0, 1.0}, {0.0, 0.0});
  (void)forecaster.settle(two);
  Candidate four = blocks({50, 50, 50, 50}, 100 * 8000.0);
  four.speeds = {100, 100, 100, 100};
  four.spawned = 2;
  forecaster.forecast(two, std::vector<std::int64_t>{100, 100}, four, {});
  const nlohmann::json record =
      forecaster.settle(report({50, 50, 50, 50}, {0.5, 0.5, 0.5, 0.5}, {0, 0, 0, 0}),
                        MeasuredChange{0.4, 0.002})["prediction"];
  EXPECT_NEAR(record["predicted"]["computation"].get<double>(), 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(record["predicted"]["reconfiguration"].get<double>(),
                   spawn_cost(MachineProfile::defaults(), 2));
  EXPECT_GT(record["predicted"]["redistribution"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(record["measured"]["reconfiguration"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(record["measured"]["redistribution"].get<double>(), 0.002);
  EXPECT_NEAR(record["relative_error"]["reconfiguration"].get<double>(),
              spawn_cost(MachineProfile::defaults(), 2) / 0.4 - 1.0, 1e-9);
  // The next spawn of as many processes, moving the same bytes, is priced at
  // what this one measured.
  forecaster.forecast(two, std::vector<std::int64_t>{100, 100}, four, {});
  const nlohmann::json next =
      forecaster.settle(report({50, 50, 50, 50}, {0.5, 0.5, 0.5, 0.5}, {0, 0, 0, 0}),
                        MeasuredChange{0.4, 0.003})["prediction"];
  EXPECT_NEAR(next["predicted"]["redistribution"].get<double>(), 0.002, 1e-12);
  EXPECT_NEAR(next["predicted"]["reconfiguration"].get<double>(), 0.4, 1e-12);
}

// An irregular application: the work of interval 2 triples. Extrapolation
// cannot see it coming; a profile of an earlier run can.
TEST(IntervalForecaster, AWorkProfileForeseesAChangeOfWork) {
  std::istringstream text(
      R"({"interval": 0, "iterations": 10, "metric_count": [100, 100], "partition": [10, 10]}
{"interval": 1, "iterations": 10, "metric_count": [100, 100], "partition": [10, 10]}
{"interval": 2, "iterations": 10, "metric_count": [300, 300], "partition": [10, 10]})");
  auto profile = std::make_shared<const WorkProfile>(WorkProfile::parse(text, "earlier.jsonl"));
  IntervalForecaster profiled(MachineProfile::defaults(), MpiLibrary::open_mpi, profile);
  IntervalForecaster extrapolating(MachineProfile::defaults(), MpiLibrary::open_mpi);
  const std::vector<std::int64_t> rows = {10, 10};
  IntervalReport r = report({100, 100}, {1.0, 1.0}, {0.0, 0.0});
  for (IntervalForecaster* f : {&profiled, &extrapolating}) {
    r.index = 0;
    (void)f->settle(r);
    r.index = 1;
    f->forecast(r, rows, blocks(rows, 0.0), {});
    (void)f->settle(r);
    f->forecast(r, rows, blocks(rows, 0.0), {});  // predicts interval 2
  }
  r = report({300, 300}, {3.0, 3.0}, {0.0, 0.0});
  r.index = 2;
  const nlohmann::json with = profiled.settle(r)["prediction"];
  const nlohmann::json without = extrapolating.settle(r)["prediction"];
  EXPECT_EQ(with["work_source"], "profile");
  EXPECT_EQ(without["work_source"], "extrapolation");
  EXPECT_NEAR(with["predicted"]["computation"].get<double>(), 3.0, 1e-9);
  EXPECT_NEAR(without["predicted"]["computation"].get<double>(), 1.0, 1e-9);
}

// The run does 20 % more work than the profile: from the next interval on the
// profile is scaled by the measured ratio; past its end the work is extrapolated.
TEST(IntervalForecaster, TheProfileIsCorrectedByTheMeasuredRatio) {
  std::istringstream text(
      R"({"interval": 0, "iterations": 10, "metric_count": [100, 100], "partition": [10, 10]}
{"interval": 1, "iterations": 10, "metric_count": [200, 200], "partition": [10, 10]})");
  IntervalForecaster forecaster(
      MachineProfile::defaults(), MpiLibrary::open_mpi,
      std::make_shared<const WorkProfile>(WorkProfile::parse(text, "earlier.jsonl")));
  const std::vector<std::int64_t> rows = {10, 10};
  IntervalReport r = report({120, 120}, {1.0, 1.0}, {0.0, 0.0});
  (void)forecaster.settle(r);  // interval 0: 240 measured against 200 profiled
  forecaster.forecast(r, rows, blocks(rows, 0.0), {});
  r = report({240, 240}, {2.0, 2.0}, {0.0, 0.0});
  r.index = 1;
  const nlohmann::json one = forecaster.settle(r)["prediction"];
  EXPECT_NEAR(one["predicted"]["computation"].get<double>(), 2.0, 1e-9);  // 400 x 1.2 / 240 per s
  forecaster.forecast(r, rows, blocks(rows, 0.0), {});
  r.index = 2;
  EXPECT_EQ(forecaster.settle(r)["prediction"]["work_source"], "extrapolation");
}

}  // namespace
}  // namespace flexmpi
