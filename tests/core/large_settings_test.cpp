// Every settings file format at 10^6 lines loads in seconds: the node-class
// duplicate check was quadratic (80,000 classes 8.6 s, 10^6 more than 60 s),
// and a scenario of many hosts replayed each item with a linear search. Each
// file is generated here, then loaded as MPI_Init loads it (load_config),
// within kSecondsAllowed of this process's CPU time (the machine's other
// work does not count; a quadratic check still does); the generation is not
// timed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "base/scheduled_action.hpp"
#include "core/settings.hpp"
#include "machine/drum_parameters.hpp"
#include "resources/scenario/scenario_resources.hpp"
#include "util/text_file.hpp"

namespace flexmpi {
namespace {

constexpr int kLines = 1'000'000;
// Measured 0.3-5 s of CPU a format on the 2-core development VM; a quadratic
// check takes minutes.
constexpr double kSecondsAllowed = 15.0;

class LargeSettings : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("flexmpi_large_settings_" + std::to_string(::getpid())))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // Writes kLines lines, line(i) each, between `head` and `tail`.
  const std::string& generate(const std::function<std::string(int)>& line,
                              const std::string& head = "", const std::string& tail = "") {
    std::string text = head;
    for (int i = 0; i < kLines; ++i) text += line(i);
    text += tail;
    std::ofstream(path_, std::ios::binary) << text;
    return path_;
  }

  // CPU seconds `load` took; a failure if more than kSecondsAllowed.
  static double timed(const std::string& format, const std::function<void()>& load) {
    const std::clock_t start = std::clock();
    load();
    const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
    std::printf("%s, %d lines: %.2f s of CPU\n", format.c_str(), kLines, seconds);
    EXPECT_LT(seconds, kSecondsAllowed) << format;
    return seconds;
  }

  static Config load_setting(const std::string& variable, const std::string& value) {
    return load_config([&](const char* name) { return name == variable ? value.c_str() : nullptr; },
                       {variable});
  }

  std::string path_;
};

TEST_F(LargeSettings, Hostfile) {
  generate(
      [](int i) { return "node" + std::to_string(i) + ":C" + std::to_string(i % 4) + ":2\n"; });
  timed("hostfile",
        [&] { EXPECT_EQ(load_setting("FLEXMPI_HOSTFILE", path_).hosts.size(), kLines); });
}

TEST_F(LargeSettings, NodeClasses) {
  generate([](int i) { return "C" + std::to_string(i) + " 1.5 0.1 200\n"; });
  timed("node classes", [&] {
    EXPECT_EQ(load_setting("FLEXMPI_NODE_CLASSES", path_).node_classes.size(), kLines);
  });
}

TEST_F(LargeSettings, Schedule) {
  generate([](int i) { return std::to_string(i) + (i % 2 == 0 ? " spawn 1\n" : " remove 1\n"); });
  timed("schedule", [&] {
    EXPECT_EQ(load_setting("FLEXMPI_SCHEDULE", path_)
                  .strategy_settings.find<std::vector<ScheduledAction>>("FLEXMPI_SCHEDULE")
                  ->size(),
              kLines);
  });
}

// Loaded at MPI_Init, its timeline played when the resource manager is first asked.
TEST_F(LargeSettings, ScenarioLoadedAndPlayed) {
  generate(
      [](int i) { return std::to_string(i) + " available host" + std::to_string(i) + ":C1:1\n"; });
  timed("scenario", [&] {
    (void)load_setting("FLEXMPI_RESOURCES", "scenario:" + path_);
    const ScenarioResources scenario({}, read_scenario(path_), "scenario");
    EXPECT_EQ(scenario.status(kLines).nodes.size(), kLines);
  });
}

TEST_F(LargeSettings, WorkProfile) {
  generate([](int i) {
    return R"({"interval":)" + std::to_string(i) +
           R"(,"iterations":10,"metric_count":[100,300],"partition":[50,50]})"
           "\n";
  });
  timed("work profile", [&] {
    EXPECT_EQ(load_setting("FLEXMPI_PROFILE", path_).work_profile->intervals().size(), kLines);
  });
}

// One collective's fit of 250,000 points, a point on four lines.
TEST_F(LargeSettings, MachineProfile) {
  const std::string head = R"({"format": "flexmpi-machine-profile", "version": 2,
    "network": {"intra_node": {"alpha": 5e-7, "beta": 2e-10,
                               "bands": [{"up_to": 0, "alpha": 5e-7, "beta": 3e-10}]},
                "inter_node": {"alpha": 5e-5, "beta": 1e-8,
                               "bands": [{"up_to": 0, "alpha": 5e-5, "beta": 1e-8}]},
                "gamma": 4e-10},
    "process": {"spawn": [{"processes": 1, "seconds_per_process": 0.25}],
                "remove": [{"processes": 1, "seconds_per_process": 0.001}]},
    "redistribution": {"latency": 1e-4, "seconds_per_byte": 2e-9},
    "collectives": {"MPI_Bcast": [{"processes": 2, "points": [
)";
  generate(
      [](int i) {
        if (i % 4 != 0) return std::string();
        return std::string(i == 0 ? "" : ",\n") + "{\n\"bytes\": " + std::to_string(i + 1) +
               ",\n\"scale\": 1.5\n}";
      },
      head, "]}]}}\n");
  timed("machine profile", [&] {
    EXPECT_EQ(load_setting("FLEXMPI_MACHINE_PROFILE", path_)
                  .machine_profile.collectives.at(Routine::bcast)
                  .front()
                  .points.size(),
              kLines / 4);
  });
}

// A network root over 10^6 - 1 computing nodes, a node a line.
TEST_F(LargeSettings, DrumTopology) {
  std::string children;
  for (int i = 1; i < kLines; ++i) children += std::to_string(i) + ";";
  generate(
      [](int i) {
        if (i == 0) return std::string();
        return R"(<node type="COMPUTING_NODE" name=")" + std::to_string(i) +
               R"(" description="host)" + std::to_string(i) +
               R"(" childrenNum="0" children=";" MFLOPS="100"/>)"
               "\n";
      },
      R"(<machinemodel numnode=")" + std::to_string(kLines) +
          R"(">)"
          "\n"
          R"(<node type="NETWORK_NODE" name="0" description="switch" childrenNum=")" +
          std::to_string(kLines - 1) + R"(" children=")" + children +
          R"("/>)"
          "\n",
      "</machinemodel>\n");
  timed("DRUM XML topology", [&] {
    EXPECT_EQ(load_setting("FLEXMPI_DRUM_TOPOLOGY", path_)
                  .strategy_settings.text("FLEXMPI_DRUM_TOPOLOGY"),
              path_);
  });
}

// A chain of 10^6 - 1 network nodes down to one computing node: as deep as a
// tree of 10^6 nodes can be.
TEST_F(LargeSettings, DrumTopologyChain) {
  generate(
      [](int i) {
        const bool leaf = i == kLines - 1;
        return std::string(R"(<node type=")") + (leaf ? "COMPUTING" : "NETWORK") +
               R"(_NODE" name=")" + std::to_string(i) + R"(" description="host)" +
               std::to_string(i) + R"(" childrenNum=")" + (leaf ? "0" : "1") + R"(" children=")" +
               (leaf ? std::string(";") : std::to_string(i + 1) + ";") +
               R"("/>)"
               "\n";
      },
      "<machinemodel>\n", "</machinemodel>\n");
  timed("DRUM XML topology, a chain", [&] {
    EXPECT_EQ(load_setting("FLEXMPI_DRUM_TOPOLOGY", path_)
                  .strategy_settings.text("FLEXMPI_DRUM_TOPOLOGY"),
              path_);
  });
}

TEST_F(LargeSettings, DrumParameters) {
  generate([](int i) { return i % 2 == 0 ? "DEBUG_LEVEL 1\n" : "MONITORING_FREQUENCY 2\n"; });
  timed("DRUM parameters", [&] {
    machine::DrumParameters parameters;
    const auto pairs = machine::parse_parameter_file(
        read_text_file(path_, "DRUM parameter", Errc::bad_config), path_);
    for (const auto& [name, value] : pairs) (void)machine::set_parameter(parameters, name, value);
    EXPECT_EQ(pairs.size(), kLines);
  });
}

}  // namespace
}  // namespace flexmpi
