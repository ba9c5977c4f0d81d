// The resource manager (thesis 5.4, getSystemStatus): scenario files parse or
// name the line, the timeline grants and reclaims PEs, a reclaim of PEs the
// job does not hold is refused before any work, and the scheduler picks the
// processes that must leave reclaimed PEs (never one of the initial set).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "core/settings.hpp"
#include "flexmpi/error.hpp"
#include "resources/node_classes.hpp"
#include "resources/resource_manager.hpp"
#include "resources/scenario/scenario_resources.hpp"
#include "scheduler/scheduler.hpp"

namespace flexmpi {
namespace {

using ::testing::HasSubstr;

int pes_of(const SystemStatus& status, const std::string& host) {
  for (const NodeDescription& node : status.nodes) {
    if (node.hostname == host) return node.processing_elements;
  }
  return -1;
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Scenario, ParsesEventsInIterationOrder) {
  const auto events = parse_scenario(
      "# a comment\n"
      "40 reclaim n1:C1:1\n"
      "10 available n1:C1:2 n2:C7:4:0.115   # two nodes\n"
      "\n",
      "s.txt");
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].iteration, 10);
  EXPECT_TRUE(events[0].available);
  ASSERT_EQ(events[0].nodes.size(), 2U);
  EXPECT_EQ(events[0].nodes[1].hostname, "n2");
  EXPECT_EQ(events[0].nodes[1].proc_type, "C7");
  EXPECT_EQ(events[0].nodes[1].processing_elements, 4);
  EXPECT_DOUBLE_EQ(*events[0].nodes[1].cost, 0.115);
  EXPECT_EQ(events[1].iteration, 40);
  EXPECT_FALSE(events[1].available);
}

TEST(Scenario, BadLinesAreRefusedNamingTheLine) {
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"x available n1:C1:2", "iteration is not a number"},
      {"-3 available n1:C1:2", "iteration is not a number"},
      {"10 appear n1:C1:2", "action 'appear' is unknown"},
      {"10 available", "no hostname:procType:numPE item"},
      {"10 available n1:C1", "expected hostname:procType:numPE"},
      {"10 reclaim n1:C1:0", "numPE: expected an integer from 1 to 1048576, got '0'"},
      {"10 available n1:C1:2:-1", "cost: expected a number from 0 to 1000000000, got '-1'"},
      {"10 available n1:C1:2147483647", "numPE: expected an integer from 1 to 1048576"},
      {"10 available n1:C1:2:1e308", "cost: expected a number from 0 to 1000000000, got '1e308'"},
  };
  for (const auto& c : cases) {
    try {
      (void)parse_scenario(std::string("\n") + c.text, "s.txt");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::bad_config);
      EXPECT_THAT(e.what(), HasSubstr("s.txt line 2")) << c.text;
      EXPECT_THAT(e.what(), HasSubstr(c.expected)) << c.text;
    }
  }
}

TEST(Scenario, TimelineGrantsAndReclaims) {
  const std::vector<NodeDescription> initial = {{"n0", "initial", 2, std::nullopt}};
  const ScenarioResources scenario(
      initial,
      parse_scenario("10 available n1:C1:2\n20 available n1:C1:1 n2:C7:3\n30 reclaim n1:C1:3\n",
                     "s"),
      "s");
  EXPECT_EQ(scenario.status(0).nodes.size(), 1U);
  EXPECT_EQ(pes_of(scenario.status(9), "n1"), -1);
  EXPECT_EQ(pes_of(scenario.status(10), "n1"), 2);
  EXPECT_EQ(pes_of(scenario.status(25), "n1"), 3);
  EXPECT_EQ(pes_of(scenario.status(25), "n2"), 3);
  // A node whose PEs were all reclaimed stays, with 0 PEs: its processes must go.
  EXPECT_EQ(pes_of(scenario.status(30), "n1"), 0);
  EXPECT_EQ(pes_of(scenario.status(1000), "n0"), 2);
}

TEST(Scenario, ReclaimOfPesNotHeldIsRefusedBeforeAnyWork) {
  const std::vector<NodeDescription> initial = {{"n0", "initial", 2, std::nullopt}};
  try {
    ScenarioResources(initial, parse_scenario("5 available n1:C1:1\n9 reclaim n1:C1:2\n", "s"),
                      "FLEXMPI_RESOURCES=scenario:s");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_THAT(e.what(), HasSubstr("iteration 9, reclaim"));
    EXPECT_THAT(e.what(), HasSubstr("reclaims 2 PEs of host 'n1'"));
    EXPECT_THAT(e.what(), HasSubstr("holds 1"));
  }
  EXPECT_THROW(ScenarioResources(initial, parse_scenario("1 reclaim n9:C1:1", "s"), "s"), Error);
  // A host cannot change class.
  EXPECT_THROW(ScenarioResources(initial, parse_scenario("1 available n0:C1:1", "s"), "s"), Error);
}

TEST(Scenario, WithoutHostfileTheInitialProcessesAreTheInitialAllocation) {
  Config config;
  config.resources = "scenario:" + write_file("grow.txt", "10 available hostC:C1:2\n");
  const auto manager =
      make_resource_manager(config.resources, config.hosts, {"hostA", "hostA", "hostB"});
  EXPECT_EQ(manager->name(), "scenario");
  const SystemStatus start = manager->status(0);
  ASSERT_EQ(start.nodes.size(), 2U);
  EXPECT_EQ(start.nodes[0].proc_type, "initial");
  EXPECT_EQ(pes_of(start, "hostA"), 2);
  EXPECT_EQ(pes_of(start, "hostB"), 1);
  EXPECT_EQ(pes_of(manager->status(10), "hostC"), 2);
  // Such a host is of class "initial": new PEs of another class on it are refused.
  EXPECT_THROW(
      {
        Config other;
        other.resources = "scenario:" + write_file("bad.txt", "10 available hostB:C1:2\n");
        (void)make_resource_manager(other.resources, other.hosts, {"hostB"});
      },
      Error);
}

TEST(Scenario, ConfigChecksTheSetting) {
  const std::string good = write_file("ok.txt", "3 available h:C1:1\n");
  const Config config = load_config(
      [&](const char* name) -> const char* {
        static std::string value;
        value = "scenario:" + good;
        return std::string(name) == "FLEXMPI_RESOURCES" ? value.c_str() : nullptr;
      },
      {"FLEXMPI_RESOURCES"});
  EXPECT_EQ(config.resources, "scenario:" + good);
  for (const std::string bad : {"slurm", "scenario:", "scenario:/no/such/file"}) {
    try {
      (void)load_config(
          [&](const char* name) -> const char* {
            return std::string(name) == "FLEXMPI_RESOURCES" ? bad.c_str() : nullptr;
          },
          {"FLEXMPI_RESOURCES"});
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_RESOURCES")) << bad;
    }
  }
}

TEST(Scenario, HostfileBackendGrantsTheHostfile) {
  Config config;
  config.hosts = read_hostfile(write_file("hosts.txt", "a:C1:2\nb:C7:4:0.5\n"));
  const auto manager = make_resource_manager(config.resources, config.hosts, {"a"});
  EXPECT_EQ(manager->name(), "hostfile");
  EXPECT_EQ(pes_of(manager->status(0), "b"), 4);
  EXPECT_EQ(pes_of(manager->status(1000000), "b"), 4);
}

TEST(ResourceViewJson, RoundTrips) {
  ResourceView view;
  view.classes = {{"C1", 4, 3, 1, 0.095}, {"C7", 2, 0, 0, 0.0}};
  view.reclaimed = 1;
  view.unmet_reclaim = "why";
  const nlohmann::json json = view;
  EXPECT_EQ(json.get<ResourceView>(), view);
  EXPECT_EQ(view.granted_pes(), 6);
  EXPECT_EQ(view.running(), 3);
}

TEST(SchedulerReclaim, PicksTheNewestSpawnedOnNodesOverTheirPes) {
  Scheduler scheduler({{"n0", "initial", 1, {}}, {"n1", "C1", 3, {}}},
                      SchedulingPolicy::balance_all);
  scheduler.set_initial_processes({"n0"});
  scheduler.add_spawned(scheduler.plan_spawn(3, {}), false);  // ranks 1..3 on n1
  EXPECT_TRUE(scheduler.plan_reclaim().empty());
  scheduler.set_nodes({{"n0", "initial", 1, {}}, {"n1", "C1", 1, {}}});
  EXPECT_EQ(scheduler.plan_reclaim(), (std::vector<int>{2, 3}));
  // A node that takes back the PE of an initial process cannot be honoured.
  scheduler.set_nodes({{"n0", "initial", 0, {}}, {"n1", "C1", 3, {}}});
  try {
    (void)scheduler.plan_reclaim();
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("host 'n0'"));
    EXPECT_THAT(e.what(), HasSubstr("initial set"));
  }
}

TEST(NodeClasses, ParseSpeedsCostsAndWattsRelativeToTheFastest) {
  const auto classes =
      parse_node_classes("# Table 6.4\nC1 1.90 0.095\nC8 4.62 0.462 95\nC0 1\n", "classes.txt");
  ASSERT_EQ(classes.size(), 3U);
  EXPECT_EQ(classes[1], (NodeClass{"C8", 4.62, 0.462, 95.0}));
  EXPECT_EQ(classes[2], (NodeClass{"C0", 1.0, 0.0, 0.0}));
  EXPECT_DOUBLE_EQ(relative_speed(classes, "C1"), 1.90 / 4.62);
  EXPECT_DOUBLE_EQ(relative_speed(classes, "C8"), 1.0);
  EXPECT_DOUBLE_EQ(relative_speed(classes, "unnamed"), 1.0);
}

TEST(NodeClasses, BadLinesAreRefusedNamingTheLine) {
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"C1", "speed is missing"},
      {"C1 0", "speed: expected a number > 0 and <= 1000000000000, got '0'"},
      {"C1 fast", "speed: expected a number > 0 and <= 1000000000000, got 'fast'"},
      {"C1 1 -2", "cost: expected a number from 0 to 1000000000, got '-2'"},
      {"C1 1 2 x", "watts: expected a number from 0 to 1000000, got 'x'"},
      // Out of range or not finite, each refused with its range.
      {"C1 1e308", "speed: expected a number > 0 and <= 1000000000000, got '1e308'"},
      {"C1 1e400", "speed: expected a number > 0 and <= 1000000000000, got '1e400'"},
      {"C1 nan", "speed: expected a number > 0"},
      {"C1 1 inf", "cost: expected a number from 0 to 1000000000, got 'inf'"},
      {"C1 1 1e10", "cost: expected a number from 0 to 1000000000"},
      {"C1 1 0.1 1e7", "watts: expected a number from 0 to 1000000, got '1e7'"},
      {"C1 1 0.1 -0.5", "watts: expected a number from 0 to 1000000, got '-0.5'"},
      {"C1 1 0.1\xff", "cost: expected a number from 0 to 1000000000, got '0.1\\xff'"},
      {"C1 1 2 3 4", "'4' is one word too many"},
      {"C1 1\nC1 2", "class 'C1' is described twice"},
  };
  for (const auto& c : cases) {
    try {
      (void)parse_node_classes(c.text, "classes.txt");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::bad_config);
      EXPECT_THAT(e.what(), HasSubstr("classes.txt line")) << c.text;
      EXPECT_THAT(e.what(), HasSubstr(c.expected)) << c.text;
    }
  }
}

TEST(EmulatedCluster, ProcessesFillTheNodesInOrderAtTheirClassSpeed) {
  const std::vector<NodeDescription> nodes = {{"f", "C8", 1, {}}, {"s", "C1", 2, {}}};
  const std::vector<NodeClass> classes = {{"C1", 1.9, 0, 0}, {"C8", 4.62, 0, 0}};
  EXPECT_EQ(place_initial_processes(nodes, 3), (std::vector<std::string>{"f", "s", "s"}));
  const std::vector<double> speeds = initial_emulated_speeds(nodes, classes, 2);
  ASSERT_EQ(speeds.size(), 2U);
  EXPECT_DOUBLE_EQ(speeds[0], 1.0);
  EXPECT_DOUBLE_EQ(speeds[1], 1.9 / 4.62);
  try {
    (void)place_initial_processes(nodes, 4);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("3 PEs for the 4 processes"));
  }
}

TEST(EmulatedCluster, ConfigNeedsAHostfileAndNoPerRankSpeeds) {
  const std::string hosts = write_file("emulated.txt", "f:C8:1\n");
  auto load = [&](std::map<std::string, std::string> values) {
    std::vector<std::string> names;
    for (const auto& [name, value] : values) names.push_back(name);
    return load_config(
        [values](const char* name) -> const char* {
          const auto found = values.find(name);
          return found == values.end() ? nullptr : found->second.c_str();
        },
        names);
  };
  EXPECT_TRUE(
      load({{"FLEXMPI_EMULATE_CLUSTER", "1"}, {"FLEXMPI_HOSTFILE", hosts}}).emulate_cluster);
  EXPECT_THAT(
      [&] {
        (void)load({{"FLEXMPI_EMULATE_CLUSTER", "1"}});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("needs FLEXMPI_HOSTFILE")));
  EXPECT_THAT(
      [&] {
        (void)load({{"FLEXMPI_EMULATE_CLUSTER", "1"},
                    {"FLEXMPI_HOSTFILE", hosts},
                    {"FLEXMPI_EMULATE_SPEED", "1.0,0.5"}});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("unset FLEXMPI_EMULATE_SPEED")));
  EXPECT_THAT(
      [&] {
        (void)load({{"FLEXMPI_EMULATE_CLUSTER", "yes"}});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("FLEXMPI_EMULATE_CLUSTER='yes'")));
}

}  // namespace
}  // namespace flexmpi
