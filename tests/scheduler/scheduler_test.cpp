// Process scheduler (thesis 4.4): both policies, for spawning and removal,
// on the cluster of thesis Figs. 4.14-4.17 (three quad-core nodes, two
// dual-core nodes), and the errors of XMPI_Spawn / XMPI_Remove it detects.
#include "scheduler/scheduler.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

std::vector<NodeDescription> figure_cluster() {
  return parse_hostfile(
      "node0:quad:4\n"
      "node1:quad:4\n"
      "node2:quad:4\n"
      "node3:dual:2\n"
      "node4:dual:2\n",
      "fig4.14");
}

std::vector<int> counts(const Scheduler& s) {
  std::vector<int> result;
  for (const NodeDescription& node : s.nodes()) result.push_back(s.running_on(node.hostname));
  return result;
}

std::vector<std::string> classes(std::initializer_list<const char*> names) {
  return {names.begin(), names.end()};
}

// Figs. 4.14 and 4.15: five processes run, two on Node0, one on Node1, Node3
// and Node4; a process is spawned on a quad node.
Scheduler spawn_figure(SchedulingPolicy policy) {
  Scheduler s(figure_cluster(), policy);
  s.set_initial_processes({"node0", "node0", "node1", "node3", "node4"});
  return s;
}

TEST(SchedulerSpawn, BalanceAllUsesTheLeastLoadedNodeOfTheClass) {  // Fig. 4.14
  const Scheduler s = spawn_figure(SchedulingPolicy::balance_all);
  EXPECT_EQ(s.plan_spawn(1, classes({"quad"})), std::vector<std::string>{"node2"});
}

TEST(SchedulerSpawn, BalanceOccupiedStaysOnOccupiedNodes) {  // Fig. 4.15
  const Scheduler s = spawn_figure(SchedulingPolicy::balance_occupied);
  EXPECT_EQ(s.plan_spawn(1, classes({"quad"})), std::vector<std::string>{"node1"});
}

TEST(SchedulerSpawn, BalanceAllSpreadsSeveralProcesses) {
  Scheduler s = spawn_figure(SchedulingPolicy::balance_all);
  const auto hosts = s.plan_spawn(4, classes({"quad", "quad", "quad", "quad"}));
  EXPECT_EQ(hosts, (std::vector<std::string>{"node2", "node1", "node2", "node0"}));
  s.add_spawned(hosts, false);
  EXPECT_EQ(counts(s), (std::vector<int>{3, 2, 2, 1, 1}));
}

TEST(SchedulerSpawn, BalanceOccupiedOpensANodeOnlyWhenTheOccupiedAreFull) {
  Scheduler s = spawn_figure(SchedulingPolicy::balance_occupied);
  const auto hosts = s.plan_spawn(7, {});  // any class
  s.add_spawned(hosts, false);
  // Occupied: node0 (2/4), node1 (1/4), node3 (1/2), node4 (1/2): 7 free PEs; node2 stays empty.
  EXPECT_EQ(counts(s), (std::vector<int>{4, 4, 0, 2, 2}));
  EXPECT_EQ(s.plan_spawn(1, {}), std::vector<std::string>{"node2"});
}

TEST(SchedulerSpawn, NeverMoreProcessesThanProcessingElements) {
  for (const auto policy : {SchedulingPolicy::balance_all, SchedulingPolicy::balance_occupied}) {
    Scheduler s = spawn_figure(policy);
    // dual: 4 PEs, 2 used.
    const auto hosts = s.plan_spawn(2, classes({"dual", "dual"}));
    EXPECT_EQ(hosts, (std::vector<std::string>{"node3", "node4"}));
    s.add_spawned(hosts, false);
    try {
      (void)s.plan_spawn(1, classes({"dual"}));
      ADD_FAILURE() << "a full class must be refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("no free processing element"), std::string::npos)
          << e.what();
    }
    // 12 quad PEs, 3 used: 9 fit, the 10th does not; nothing is recorded by planning.
    EXPECT_EQ(s.plan_spawn(9, std::vector<std::string>(9, "quad")).size(), 9u);
    EXPECT_THROW((void)s.plan_spawn(10, std::vector<std::string>(10, "quad")), Error);
    EXPECT_EQ(counts(s), (std::vector<int>{2, 1, 0, 2, 2}));
  }
}

// Figs. 4.16 and 4.17: a dynamic process is removed from a dual node; Node3
// runs two processes (one spawned), Node4 one (spawned).
Scheduler remove_figure(SchedulingPolicy policy) {
  Scheduler s(figure_cluster(), policy);
  s.set_initial_processes({"node0", "node1", "node3"});
  s.add_spawned({"node3", "node4"}, false);
  return s;
}

TEST(SchedulerRemove, BalanceAllRemovesFromTheMostLoadedNode) {  // Fig. 4.16
  const Scheduler s = remove_figure(SchedulingPolicy::balance_all);
  EXPECT_EQ(s.plan_remove(1, classes({"dual"})), std::vector<int>{3});  // the one on node3
}

TEST(SchedulerRemove, BalanceOccupiedEmptiesTheLeastLoadedNode) {  // Fig. 4.17
  const Scheduler s = remove_figure(SchedulingPolicy::balance_occupied);
  EXPECT_EQ(s.plan_remove(1, classes({"dual"})), std::vector<int>{4});  // the one on node4
}

TEST(SchedulerRemove, WithoutClassTheNewestGoesFirst) {
  Scheduler s = remove_figure(SchedulingPolicy::balance_all);
  s.add_spawned({"node2"}, false);
  EXPECT_EQ(s.plan_remove(1, {}), std::vector<int>{5});
  EXPECT_EQ(s.plan_remove(2, {}), (std::vector<int>{4, 5}));
  s.remove(std::vector<int>{4, 5});
  EXPECT_EQ(s.processes().size(), 4u);
  EXPECT_EQ(s.processes().back().host, "node3");
  EXPECT_TRUE(s.processes().back().dynamic);
}

TEST(SchedulerRemove, SpawnThenRemoveRestoresThePlacement) {
  for (const auto policy : {SchedulingPolicy::balance_all, SchedulingPolicy::balance_occupied}) {
    Scheduler s = spawn_figure(policy);
    const std::vector<int> before = counts(s);
    for (int round = 0; round < 3; ++round) {
      s.add_spawned(s.plan_spawn(3, classes({"quad", "dual", "quad"})), false);
      s.remove(s.plan_remove(3, classes({"quad", "dual", "quad"})));
      EXPECT_EQ(counts(s), before);
    }
  }
}

TEST(SchedulerRemove, TheInitialSetIsNeverRemoved) {
  Scheduler s = spawn_figure(SchedulingPolicy::balance_all);
  try {
    (void)s.plan_remove(1, {});
    ADD_FAILURE() << "nothing was spawned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("only 0 were spawned"), std::string::npos) << e.what();
  }
  s.add_spawned({"node2"}, false);
  EXPECT_THROW((void)s.plan_remove(2, {}), Error);
  // quad class: node0 and node1 run only initial processes, node2 the spawned one.
  EXPECT_EQ(s.plan_remove(1, classes({"quad"})), std::vector<int>{5});
  EXPECT_THROW((void)s.plan_remove(1, classes({"dual"})), Error);
  try {
    s.check_removable(std::vector<int>{0});
    ADD_FAILURE() << "rank 0 is in the initial set";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("initial set"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s.check_removable(std::vector<int>{9}), Error);
  EXPECT_THROW(s.check_removable(std::vector<int>{5, 5}), Error);
}

TEST(SchedulerRemove, BatchGroupsLeaveTogether) {
  Scheduler s(figure_cluster(), SchedulingPolicy::balance_all);
  s.set_initial_processes({"node0"});
  s.add_spawned({"node1", "node2"}, true);  // one MPI_COMM_WORLD
  s.add_spawned({"node3"}, false);
  EXPECT_EQ(s.plan_remove(1, {}), std::vector<int>{3});
  EXPECT_THROW((void)s.plan_remove(2, {}), Error);  // would split the batch
  EXPECT_EQ(s.plan_remove(3, {}), (std::vector<int>{1, 2, 3}));
  EXPECT_NO_THROW(s.check_removable(std::vector<int>{1, 2}));
}

TEST(Scheduler, BadNodeClassesAreErrors) {
  const Scheduler s = spawn_figure(SchedulingPolicy::balance_all);
  try {
    (void)s.plan_spawn(1, classes({"octo"}));
    ADD_FAILURE() << "unknown class";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("'octo' matches no node"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)s.plan_spawn(2, classes({"quad"})), Error);  // one class per process
  EXPECT_THROW((void)s.plan_spawn(0, {}), Error);
  const Scheduler none({}, SchedulingPolicy::balance_all);
  EXPECT_EQ(none.plan_spawn(2, {}), (std::vector<std::string>{"", ""}));
  EXPECT_THROW((void)none.plan_spawn(1, classes({"quad"})), Error);
}

TEST(Scheduler, NodeClassOfAHost) {
  const Scheduler s = spawn_figure(SchedulingPolicy::balance_all);
  EXPECT_EQ(s.node_class_of("node3"), "dual");
  EXPECT_EQ(s.node_class_of("elsewhere"), "");
  EXPECT_EQ(parse_scheduling_policy("balance_occupied"), SchedulingPolicy::balance_occupied);
  EXPECT_THROW((void)parse_scheduling_policy("random"), Error);
}

}  // namespace
}  // namespace flexmpi
