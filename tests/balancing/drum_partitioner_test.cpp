// The drum partitioner (DRUM thesis 3.1.2.1): p_j = b_j (ū_n + ī_n) with
// b_j the first measured rate, ū_n the node's mean Tcpu/Treal,
// ī_n = min(k − Σu, Σ i)/k.
#include "balancing/drum/drum_partitioner.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "base/host_id.hpp"
#include "config/config.hpp"
#include "machine/machine_xml.hpp"

namespace flexmpi {
namespace {

// `speed` per process, all dedicated (Tcpu = Treal), each on its own node.
PartitionInput dedicated(std::vector<double> speed) {
  PartitionInput input;
  input.global_size = 3000;
  input.nodes.emplace();
  for (std::size_t p = 0; p < speed.size(); ++p) {
    input.current.push_back({1000, static_cast<std::int64_t>(p) * 1000});
    input.wall_time.push_back(1.0);
    input.cpu_time.push_back(1.0);
    input.nodes->host_id.push_back(static_cast<double>(p));
    input.nodes->node_cores.push_back(1.0);
    input.nodes->node_idle_cpus.push_back(0.0);
  }
  input.speed = std::move(speed);
  input.current.resize(input.speed.size());
  return input;
}

TEST(DrumPartitioner, DedicatedNodesGetSharesProportionalToSpeed) {
  PartitionInput input = dedicated({2.0, 1.0});
  input.global_size = 3000;
  input.current = {{1500, 0}, {1500, 1500}};
  const PartitionResult result = DrumPartitioner().partition(input);
  EXPECT_EQ(result.blocks, (Decomposition{{2000, 0}, {1000, 2000}}));
  EXPECT_EQ(result.fallback, "");
}

TEST(DrumPartitioner, IdleCpuOfTheNodeCountsAsPower) {
  // Equal ratings; process 1's node is shared (u = 0.5) and loses half its
  // power, unless one of its CPUs stood idle: ī = min(1 - 0.5, 1) / 1.
  PartitionInput input = dedicated({1.0, 1.0});
  input.cpu_time[1] = 0.5;
  const std::vector<double> ratings = {1.0, 1.0};
  EXPECT_DOUBLE_EQ(drum_processing_powers(input, DrumInput(*input.nodes, {}), ratings)[0], 1.0);
  EXPECT_DOUBLE_EQ(drum_processing_powers(input, DrumInput(*input.nodes, {}), ratings)[1], 0.5);
  input.nodes->node_idle_cpus[1] = 1.0;
  EXPECT_DOUBLE_EQ(drum_processing_powers(input, DrumInput(*input.nodes, {}), ratings)[1], 1.0);
}

TEST(DrumPartitioner, ProcessesOfOneNodeShareItsAvailability) {
  // Two processes on one 4-core node at u = 0.25 and 0.75, 3 CPUs idle:
  // ū = 0.5, ī = min(2 - 1, 3) / 2 = 0.5: both get their rating x 1.
  PartitionInput input = dedicated({1.0, 1.0});
  input.nodes->host_id = {7.0, 7.0};
  input.nodes->node_cores = {4.0, 4.0};
  input.nodes->node_idle_cpus = {3.0, 3.0};
  input.cpu_time = {0.25, 0.75};
  const std::vector<double> powers =
      drum_processing_powers(input, DrumInput(*input.nodes, {}), {2.0, 1.0});
  EXPECT_DOUBLE_EQ(powers[0], 2.0);
  EXPECT_DOUBLE_EQ(powers[1], 1.0);
}

TEST(DrumPartitioner, RatingsAreTheFirstSpeedsUntilReset) {
  // The first call rates the processes (2:1); a later, noisier measurement
  // of the same dedicated processes does not move the partition.
  DrumPartitioner drum;
  PartitionInput input = dedicated({2.0, 1.0});
  const Decomposition first = drum.partition(input).blocks;
  EXPECT_EQ(first, (Decomposition{{2000, 0}, {1000, 2000}}));
  input.current = first;
  input.speed = {1.0, 1.0};
  EXPECT_EQ(drum.partition(input).blocks, first);
  drum.reset();
  EXPECT_EQ(drum.partition(input).blocks, (Decomposition{{1500, 0}, {1500, 1500}}));
}

TEST(DrumPartitioner, KeepsThePartitionWhenASpeedIsUnknown) {
  PartitionInput input = dedicated({1.0, 0.0});
  const PartitionResult result = DrumPartitioner().partition(input);
  EXPECT_EQ(result.blocks, input.current);
  EXPECT_NE(result.fallback, "");
}

// Four equal single-CPU nodes, two behind a link 10x slower (available
// bandwidth 10 against 100): the shares follow (1 − w)/4 + w c_n / Σ c
// (DRUM thesis Table 5.4's formula on 4 hosts).
TEST(DrumShares, CommunicationWeightMixesInTheCommunicationPower) {
  DrumInput drum(*dedicated({1.0, 1.0, 1.0, 1.0}).nodes, {});
  drum.node_communication_power = {10.0, 10.0, 100.0, 100.0};
  const std::vector<double> processing = {1.0, 1.0, 1.0, 1.0};
  for (const double w : {0.0, 0.4, 1.0}) {
    drum.communication_weight = w;
    const std::vector<double> shares = drum_shares(drum, processing);
    EXPECT_NEAR(shares[0], (1 - w) / 4 + w * 10 / 220, 1e-12) << "w = " << w;
    EXPECT_NEAR(shares[3], (1 - w) / 4 + w * 100 / 220, 1e-12) << "w = " << w;
  }
}

TEST(DrumShares, UnknownCommunicationPowerLeavesTheProcessingPower) {
  DrumInput drum(*dedicated({1.0, 1.0}).nodes, {});
  drum.node_communication_power = {10.0, -1.0};  // node 1: no interface of known speed
  drum.communication_weight = 0.8;
  const std::vector<double> shares = drum_shares(drum, {3.0, 1.0});
  EXPECT_NEAR(shares[0], 0.75, 1e-12);
  EXPECT_NEAR(shares[1], 0.25, 1e-12);
}

// Processes of one node split its power by their processing powers.
TEST(DrumShares, ANodesPowerIsSplitAmongItsProcesses) {
  DrumInput drum(*dedicated({1.0, 1.0, 1.0}).nodes, {});
  drum.host_id = {5.0, 5.0, 9.0};
  drum.node_communication_power = {50.0, 50.0, 50.0};
  drum.communication_weight = 0.5;
  // Node 5: p = 2 + 1, node 9: p = 3; equal c: each node 0.5.
  const std::vector<double> shares = drum_shares(drum, {2.0, 1.0, 3.0});
  EXPECT_NEAR(shares[0], 0.5 * 2 / 3, 1e-12);
  EXPECT_NEAR(shares[1], 0.5 * 1 / 3, 1e-12);
  EXPECT_NEAR(shares[2], 0.5, 1e-12);
}

// w_comm from the traffic: an idle network (CAF = 0) weighs nothing, a
// busy one (CAF = 999: w = 0.999) almost everything.
TEST(DrumShares, WeightFromTheTraffic) {
  DrumInput drum(*dedicated({1.0, 1.0}).nodes, {});
  drum.node_communication_power = {10.0, 30.0};
  drum.communication_weight_from_caf = true;
  drum.node_caf = {0.0, 0.0};
  std::vector<double> shares = drum_shares(drum, {1.0, 1.0});
  EXPECT_NEAR(shares[0], 0.5, 1e-12);
  drum.node_caf = {999.0, 999.0};
  shares = drum_shares(drum, {1.0, 1.0});
  EXPECT_NEAR(shares[0], 0.001 * 0.5 + 0.999 * 0.25, 1e-9);
}

// A tree of two switches: sw1 over hostone and hosttwo, sw2 over hostthree.
std::vector<machine::NodeSpec> two_switches() {
  using machine::NodeType;
  return {{NodeType::network, "root", "root", {"sw1", "sw2"}},
          {NodeType::network, "sw1", "10.0.1.1", {"h1", "h2"}},
          {NodeType::network, "sw2", "10.0.2.1", {"h3"}},
          {NodeType::computing, "h1", "hostone", {}},
          {NodeType::computing, "h2", "hosttwo", {}},
          {NodeType::computing, "h3", "hostthree", {}}};
}

// The hierarchical split (3.1.2): the switches share the load first (sums of
// their hosts' c and p, normalized over siblings), then each switch's hosts
// share its power. The flat model would give hostone 0.5/8 + 0.5/3 = 0.229.
TEST(DrumShares, ATreeSplitsBetweenSubtreesFirst) {
  DrumInput drum(*dedicated({1.0, 1.0, 1.0}).nodes, {});
  drum.host_id = {host_id_of("hostone"), host_id_of("hosttwo"), host_id_of("hostthree")};
  drum.node_communication_power = {1.0, 3.0, 4.0};
  drum.communication_weight = 0.5;
  drum.machine_topology = "two switches";
  const std::vector<double> shares = drum_shares(drum, {1.0, 1.0, 1.0}, two_switches());
  const double sw1 = 0.5 * 4 / 8 + 0.5 * 2 / 3.0;  // c 1+3 of 8, p 2 of 3
  EXPECT_NEAR(shares[0], sw1 * (0.5 * 1 / 4 + 0.5 * 1 / 2), 1e-12);
  EXPECT_NEAR(shares[1], sw1 * (0.5 * 3 / 4 + 0.5 * 1 / 2), 1e-12);
  EXPECT_NEAR(shares[2], 0.5 * 4 / 8 + 0.5 * 1 / 3.0, 1e-12);
  EXPECT_NEAR(shares[0] + shares[1] + shares[2], 1.0, 1e-12);
}

// A process on a host the XML model does not describe: the partition stays,
// and the fallback names the process and the file.
TEST(DrumPartitioner, AHostTheTreeLacksKeepsThePartition) {
  const std::string path = ::testing::TempDir() + "drum_two_switches.xml";
  std::ofstream(path) << machine::write_machine_xml(two_switches());
  PartitionInput input = dedicated({1.0, 2.0, 1.0});
  input.nodes->host_id = {host_id_of("hostone"), host_id_of("elsewhere"), host_id_of("hostthree")};
  DrumPartitioner drum({0.0, path});
  const PartitionResult result = drum.partition(input);
  EXPECT_EQ(result.blocks, input.current);
  EXPECT_NE(result.fallback.find("process 1 runs on a host that " + path), std::string::npos)
      << result.fallback;
  input.nodes->host_id[1] = host_id_of("hosttwo");  // now every host is in the tree
  EXPECT_NE(drum.partition(input).blocks, input.current);
  std::remove(path.c_str());
}

TEST(DrumPartitioner, IsRegistered) {
  EXPECT_EQ(make_partitioner("drum", Config{})->name(), "drum");
}

}  // namespace
}  // namespace flexmpi
