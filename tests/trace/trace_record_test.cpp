// The trace record of one sampling interval, built from a
// hand-made report, and the JSON-lines writer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "flexmpi/error.hpp"
#include "trace/trace_writer.hpp"

namespace flexmpi {
namespace {

IntervalReport two_process_report() {
  IntervalReport report;
  report.index = 3;
  report.first_iteration = 30;
  report.metric_name = "work";
  ProcessInterval a;
  a.rank = 0;
  a.iterations = 10;
  a.wall = 2.0;
  a.cpu = 2.0;
  a.mpi = 0.5;
  a.metric = 300;
  a.bytes_sent = 64;
  a.bytes_received = 32;
  ProcessInterval b = a;
  b.rank = 1;
  b.wall = 4.0;
  b.cpu = 3.0;  // shared: (4-3)/4 = 0.25
  b.mpi = 1.0;
  b.metric = 600;
  b.bytes_sent = 8;
  b.bytes_received = 0;
  b.emulation_late_iterations = 2;
  report.processes = {a, b};
  return report;
}

TEST(TraceRecord, HasPerProcessTimesFlagsAndCounts) {
  const nlohmann::json r = interval_record(two_process_report(), 0.05, 0.15);
  EXPECT_EQ(r.at("interval"), 3);
  EXPECT_EQ(r.at("first_iteration"), 30);
  EXPECT_EQ(r.at("iterations"), 10);
  EXPECT_EQ(r.at("nprocs"), 2);
  EXPECT_EQ(r.at("metric"), "work");
  EXPECT_EQ(r.at("computation_time"), nlohmann::json({1.5, 3.0}));
  EXPECT_EQ(r.at("cpu_time"), nlohmann::json({2.0, 3.0}));
  EXPECT_EQ(r.at("wall_time"), nlohmann::json({2.0, 4.0}));
  EXPECT_EQ(r.at("mpi_time"), nlohmann::json({0.5, 1.0}));
  EXPECT_EQ(r.at("metric_count"), nlohmann::json({300.0, 600.0}));
  // Rank 1's PE is shared: its 3 s of computation ran at the share it got
  // (ProcessInterval::effective_computation).
  EXPECT_EQ(r.at("effective_time"), nlohmann::json({1.5, 3.0}));
  EXPECT_EQ(r.at("speed"), nlohmann::json({200.0, 200.0}));
  EXPECT_EQ(r.at("mpi_bytes"), nlohmann::json({96.0, 8.0}));
  EXPECT_EQ(r.at("emulation_late_iterations"), nlohmann::json({0, 2}));
  EXPECT_EQ(r.at("shared"), nlohmann::json({false, true}));
  EXPECT_DOUBLE_EQ(r.at("imbalance").get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(r.at("imbalance_threshold").get<double>(), 0.15);
  EXPECT_TRUE(r.at("decision").is_string());
}

TEST(TraceRecord, DedicatedThresholdDecidesTheSharedFlag) {
  const nlohmann::json r = interval_record(two_process_report(), 0.5, 0.15);
  EXPECT_EQ(r.at("shared"), nlohmann::json({false, false}));
}

TEST(TraceWriter, WritesOneJsonObjectPerLine) {
  const auto path = std::filesystem::current_path() / "trace_writer_test.jsonl";
  {
    TraceWriter writer(path.string());
    writer.write({{"interval", 0}});
    writer.write({{"interval", 1}, {"x", {1, 2}}});
  }
  std::ifstream file(path);
  std::string line;
  int lines = 0;
  while (std::getline(file, line)) {
    const auto record = nlohmann::json::parse(line);
    EXPECT_EQ(record.at("interval"), lines);
    ++lines;
  }
  EXPECT_EQ(lines, 2);
  std::filesystem::remove(path);
}

TEST(TraceWriter, UnwritablePathIsAConfigError) {
  try {
    TraceWriter writer("/nonexistent/dir/trace.jsonl");
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_NE(std::string(e.what()).find("FLEXMPI_TRACE"), std::string::npos);
  }
}

}  // namespace
}  // namespace flexmpi
