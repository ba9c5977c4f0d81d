// Predicted against measured per interval (thesis 6.3): the forecaster puts
// each interval's prediction beside its measurement, learns lambda from the
// communication term and predicts nothing across a change of the process set.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "model/interval_forecaster.hpp"

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

TEST(IntervalForecaster, NothingIsPredictedForTheFirstInterval) {
  IntervalForecaster forecaster(MachineProfile::defaults(), MpiLibrary::open_mpi);
  EXPECT_TRUE(forecaster.settle(report({100, 50}, {1.0, 1.0}, {0.1, 0.1})).empty());
}

TEST(IntervalForecaster, ARegularIntervalIsPredictedAsMeasured) {
  IntervalForecaster forecaster(MachineProfile::defaults(), MpiLibrary::open_mpi);
  const IntervalReport first = report({100, 50}, {1.0, 1.0}, {0.01, 0.02});
  (void)forecaster.settle(first);
  const std::vector<std::int64_t> rows = {100, 50};
  forecaster.forecast(first, rows, rows, 0.0, one_allreduce());
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
  forecaster.forecast(r, rows, rows, 0.0, one_allreduce());
  const double raw = forecaster.settle(r)["prediction"]["predicted"]["communication"];
  EXPECT_NEAR(forecaster.lambda(), 0.05 / raw, 1e-9 * forecaster.lambda());
  forecaster.forecast(r, rows, rows, 0.0, one_allreduce());
  const nlohmann::json second = forecaster.settle(r)["prediction"];
  EXPECT_NEAR(second["predicted"]["communication"].get<double>(), 0.05, 1e-9);
}

TEST(IntervalForecaster, AMoveIsPricedAndABalancedPartitionPredicted) {
  IntervalForecaster forecaster(MachineProfile::defaults(), MpiLibrary::open_mpi);
  // Process 1 is half as fast; the next blocks give it a third of the rows.
  const IntervalReport r = report({150, 150}, {1.0, 2.0}, {0.0, 0.0});
  (void)forecaster.settle(r);
  const std::vector<std::int64_t> before = {150, 150}, after = {200, 100};
  forecaster.forecast(r, before, after, 50 * 8000.0, {});
  const nlohmann::json record = forecaster.settle(r)["prediction"];
  EXPECT_NEAR(record["predicted"]["computation"].get<double>(), 200.0 / 150.0, 1e-9);
  EXPECT_GT(record["predicted"]["redistribution"].get<double>(), 0.0);
}

TEST(IntervalForecaster, NoPredictionAcrossAChangeOfTheProcessSet) {
  IntervalForecaster forecaster(MachineProfile::defaults(), MpiLibrary::open_mpi);
  const IntervalReport two = report({100, 100}, {1.0, 1.0}, {0.0, 0.0});
  const std::vector<std::int64_t> rows = {100, 100};
  (void)forecaster.settle(two);
  forecaster.forecast(two, rows, rows, 0.0, {});
  forecaster.forget();
  EXPECT_TRUE(forecaster.settle(two).empty());
  // Blocks for another number of processes: not predicted either.
  const std::vector<std::int64_t> three = {70, 70, 60};
  forecaster.forecast(two, rows, three, 0.0, {});
  EXPECT_TRUE(forecaster.settle(report({70, 70, 60}, {1, 1, 1}, {0, 0, 0})).empty());
}

}  // namespace
}  // namespace flexmpi
