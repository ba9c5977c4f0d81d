// The JSON-lines trace: with FLEXMPI_TRACE set, rank 0
// writes one valid JSON object per sampling interval with the per-process
// times, counts, flags and the decision taken.
// Runs with FLEXMPI_TRACE=<build dir>/..., FLEXMPI_SAMPLING_INTERVAL=3 and
// FLEXMPI_METRIC=work on 2 processes.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../support/mpi_test_util.hpp"

namespace flexmpi::test {
namespace {

constexpr int kIntervals = 3;

std::vector<nlohmann::json> read_trace(const std::string& path) {
  std::ifstream file(path);
  EXPECT_TRUE(file.good()) << "cannot read " << path;
  std::vector<nlohmann::json> records;
  std::string line;
  while (std::getline(file, line)) {
    try {
      records.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::parse_error& e) {
      ADD_FAILURE() << "line " << records.size() + 1 << " is not JSON: " << e.what() << "\n"
                    << line;
      records.push_back(nullptr);
    }
  }
  return records;
}

void expect_per_process_array(const nlohmann::json& record, const char* field, std::size_t n) {
  ASSERT_TRUE(record.contains(field)) << field;
  ASSERT_TRUE(record.at(field).is_array()) << field;
  EXPECT_EQ(record.at(field).size(), n) << field;
}

TEST(Trace, OneJsonLinePerIntervalWithTheSpecFields) {
  const Config& config = runtime().config();
  ASSERT_FALSE(config.trace.empty()) << "FLEXMPI_TRACE not set for this test";
  const int interval = config.sampling_interval;
  ASSERT_EQ(interval, 3);
  const int size = world_size();
  ASSERT_EQ(runtime().monitor().iterations_monitored(), 0) << "this test must run first";

  ASSERT_EQ(XMPI_Set_work(100.0 * (world_rank() + 1)), XMPI_SUCCESS);
  for (int i = 0; i < kIntervals * interval; ++i) {
    must(XMPI_Monitor_iter_begin(nullptr), "XMPI_Monitor_iter_begin");
    double x = 1.0;
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    must(XMPI_Monitor_iter_end(nullptr), "XMPI_Monitor_iter_end");
  }
  // The trace of an interval may be written once what acts on it (the
  // balancer) had its chance: at the next iteration at the latest.
  must(XMPI_Monitor_iter_begin(nullptr), "XMPI_Monitor_iter_begin");
  must(XMPI_Monitor_iter_end(nullptr), "XMPI_Monitor_iter_end");
  const IntervalReport& last = *runtime().last_interval();
  ASSERT_EQ(last.index, kIntervals - 1);

  if (world_rank() != 0) return;  // only rank 0 writes the trace
  const auto records = read_trace(config.trace);
  ASSERT_EQ(records.size(), static_cast<std::size_t>(kIntervals));
  for (int k = 0; k < kIntervals; ++k) {
    SCOPED_TRACE("line " + std::to_string(k + 1));
    const nlohmann::json& r = records[k];
    ASSERT_TRUE(r.is_object());
    EXPECT_EQ(r.at("interval"), k);
    EXPECT_EQ(r.at("first_iteration"), k * interval);
    EXPECT_EQ(r.at("iterations"), interval);
    EXPECT_EQ(r.at("nprocs"), size);
    EXPECT_EQ(r.at("metric"), "work");
    for (const char* field : {"computation_time", "cpu_time", "wall_time", "mpi_time",
                              "metric_count", "speed", "mpi_bytes", "shared"}) {
      expect_per_process_array(r, field, static_cast<std::size_t>(size));
    }
    for (int p = 0; p < size; ++p) {
      const double wall = r.at("wall_time")[p], mpi = r.at("mpi_time")[p];
      EXPECT_NEAR(r.at("computation_time")[p].get<double>(), wall - mpi, 1e-12);
      EXPECT_GE(mpi, 0.0);
      EXPECT_GE(r.at("cpu_time")[p].get<double>(), 0.0);
      EXPECT_EQ(r.at("metric_count")[p].get<double>(), 100.0 * (p + 1) * interval);
      EXPECT_EQ(r.at("mpi_bytes")[p].get<double>(), 2.0 * interval * sizeof(double));
      EXPECT_TRUE(r.at("shared")[p].is_boolean());
    }
    EXPECT_GE(r.at("imbalance").get<double>(), 0.0);
    EXPECT_LE(r.at("imbalance").get<double>(), 1.0);
    EXPECT_DOUBLE_EQ(r.at("imbalance_threshold").get<double>(), config.imbalance_threshold);
    ASSERT_TRUE(r.contains("decision"));
    EXPECT_TRUE(r.at("decision").is_string());
    // From the second interval on, the prediction made for it (thesis 6.3)
    // beside what was measured: the slowest computation of the line.
    if (k == 0) continue;
    ASSERT_TRUE(r.contains("prediction"));
    const nlohmann::json& prediction = r.at("prediction");
    EXPECT_EQ(prediction.at("machine_profile"), "defaults");
    double slowest = 0.0;
    for (int p = 0; p < size; ++p)
      slowest = std::max(slowest, r.at("computation_time")[p].get<double>());
    EXPECT_DOUBLE_EQ(prediction.at("measured").at("computation").get<double>(), slowest);
    EXPECT_GT(prediction.at("predicted").at("computation").get<double>(), 0.0);
  }
  // The last line is this run's last report (not a stale file): its measured
  // times match to the last bit.
  const nlohmann::json& r = records.back();
  for (int p = 0; p < size; ++p) {
    EXPECT_EQ(r.at("wall_time")[p].get<double>(), last.processes[p].wall);
    EXPECT_EQ(r.at("cpu_time")[p].get<double>(), last.processes[p].cpu);
    EXPECT_EQ(r.at("mpi_time")[p].get<double>(), last.processes[p].mpi);
  }
}

}  // namespace
}  // namespace flexmpi::test
