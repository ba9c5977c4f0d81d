// DRUM node powers (thesis 3.1.2): every formula on hand-computed cases, the
// oracle of Table 5.4 (8 hosts, 4 behind a 10 Mbit/s hub, flat normalization,
// available-bandwidth communication power), homogeneous models, and the
// sibling normalization on the hierarchical tree of Fig. 3.5.
#include "machine/powers.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "machine/machine_model.hpp"

namespace flexmpi::machine {
namespace {

constexpr double kMbit = 1e6 / 8;  // octets per second in one Mbit/s

TEST(ProcessingPower, ExploitableIdleIsBoundedByTheProcessCount) {
  // One process, two CPUs: it can use only one CPU, so only 1 - u of the idle time.
  EXPECT_DOUBLE_EQ(exploitable_idle_per_process(std::vector{0.9}, std::vector{0.3, 0.8}), 0.1);
  // Two processes, both CPUs 20 % idle: min(2 - 1.0, 0.4) / 2.
  EXPECT_DOUBLE_EQ(exploitable_idle_per_process(std::vector{0.5, 0.5}, std::vector{0.2, 0.2}), 0.2);
  EXPECT_DOUBLE_EQ(exploitable_idle_per_process(std::vector<double>{}, std::vector{1.0}), 0.0);
}

TEST(ProcessingPower, PerProcessAndPerNode) {
  const std::vector u{0.5, 0.5};
  const std::vector idle{0.2, 0.2};
  EXPECT_DOUBLE_EQ(process_processing_power(100, u, idle), 100 * (0.5 + 0.2));  // b(ū + ī)
  EXPECT_DOUBLE_EQ(node_processing_power(100, u, idle), 2 * 70.0);              // k_n p_{n,1}
  // Non-dedicated: another job takes half the only CPU.
  EXPECT_DOUBLE_EQ(node_processing_power(100, std::vector{0.5}, std::vector{0.0}), 50.0);
  // Before monitoring (u = 0, every CPU idle): three processes on two CPUs get two CPUs' worth.
  EXPECT_DOUBLE_EQ(node_processing_power(100, std::vector{0.0, 0.0, 0.0}, std::vector{1.0, 1.0}),
                   200.0);
}

TEST(ProcessingPower, EarlyFormWithABoundedGrowingDynamicWeight) {
  EXPECT_DOUBLE_EQ(growing_dynamic_weight(0, 60, 0.5), 0.0);  // nothing monitored yet
  EXPECT_DOUBLE_EQ(growing_dynamic_weight(30, 60, 0.5), 0.25);
  EXPECT_DOUBLE_EQ(growing_dynamic_weight(600, 60, 0.5), 0.5);        // bounded
  EXPECT_DOUBLE_EQ(early_processing_power(0.0, 0.9, 0.1, 0.5), 0.5);  // benchmark only
  EXPECT_DOUBLE_EQ(early_processing_power(0.25, 0.6, 0.0, 1.0), 0.25 * 0.6 + 0.75 * 1.0);
}

TEST(CommunicationPower, ThreeFormulations) {
  const std::vector<InterfaceActivity> interfaces{
      {.name = "eth0", .in_rate = 1, .out_rate = 2, .capacity = 100 * kMbit},  // 12.5 MB/s
      {.name = "eth1", .in_rate = 0, .out_rate = 0, .capacity = 10 * kMbit},   // idle
      {.name = "tun0", .in_rate = 5, .out_rate = 0, .capacity = 0}};           // speed unknown
  using enum CommunicationPowerForm;
  EXPECT_DOUBLE_EQ(*communication_power(log_speed_over_caf, interfaces),
                   (std::log(12.5) / 4 + std::log(1.25) / 1) / 2);
  EXPECT_DOUBLE_EQ(*communication_power(inverse_mean_caf, interfaces), 1 / ((3.0 + 5.0) / 2));
  EXPECT_DOUBLE_EQ(*communication_power(available_bandwidth, interfaces),
                   (100 * kMbit - 3) + 10 * kMbit);
  const std::vector<InterfaceActivity> idle_unknown{{.name = "eth0", .capacity = 0}};
  EXPECT_FALSE(communication_power(available_bandwidth, idle_unknown));
  EXPECT_FALSE(communication_power(inverse_mean_caf, idle_unknown));
  // A saturated link has no bandwidth left, not a negative one.
  const std::vector<InterfaceActivity> saturated{
      {.name = "eth0", .in_rate = 2 * kMbit, .out_rate = 0, .capacity = kMbit}};
  EXPECT_DOUBLE_EQ(*communication_power(available_bandwidth, saturated), 0.0);
}

TEST(CommunicationPower, WeightFromCaf) {
  const std::vector<InterfaceActivity> interfaces{
      {.name = "a", .in_rate = 1, .out_rate = 2}, {.name = "b"}, {.name = "c", .in_rate = 1}};
  EXPECT_DOUBLE_EQ(mean_caf(interfaces), 2.0);  // the idle interface is not counted
  EXPECT_DOUBLE_EQ(caf_communication_weight(0), 0.0);
  EXPECT_DOUBLE_EQ(caf_communication_weight(1), 0.5);
  EXPECT_DOUBLE_EQ(caf_communication_weight(3), 0.75);
}

/// Powers of the leaves of `model`, whose leaves have the given measures in order.
std::vector<double> leaf_powers(const MachineModel& model, const std::vector<NodeMeasures>& leaves,
                                CommunicationWeight weight) {
  std::vector<NodeMeasures> measures(model.nodes().size());
  for (std::size_t i = 0; i < leaves.size(); ++i) measures[model.leaves()[i]] = leaves[i];
  sum_measures_up_the_tree(model, measures);
  const std::vector<double> power = node_powers(model, measures, weight);
  std::vector<double> result;
  for (int leaf : model.leaves()) result.push_back(power[leaf]);
  return result;
}

MachineModel flat_model(int hosts) {
  std::vector<std::string> names;
  for (int host = 0; host < hosts; ++host) names.push_back("host" + std::to_string(host));
  return MachineModel(flat_model_specs(names), "flat model");
}

// Table 5.4 as printed: w_comm, then rivera, righetti, arroyo, gossage (10 Mbit/s
// hub), wetteland, lyle, farr, mcdaniel (100 Mbit/s switch).
constexpr std::array<std::array<double, 9>, 11> kTable5_4{{
    {0.0, 0.125, 0.124, 0.124, 0.125, 0.125, 0.124, 0.124, 0.124},
    {0.1, 0.115, 0.114, 0.114, 0.115, 0.135, 0.135, 0.135, 0.135},
    {0.2, 0.104, 0.104, 0.104, 0.145, 0.145, 0.145, 0.145, 0.145},
    {0.3, 0.094, 0.094, 0.094, 0.094, 0.155, 0.156, 0.155, 0.155},
    {0.4, 0.083, 0.084, 0.084, 0.084, 0.166, 0.165, 0.165, 0.165},
    {0.5, 0.074, 0.073, 0.073, 0.074, 0.176, 0.176, 0.176, 0.176},
    {0.6, 0.063, 0.063, 0.063, 0.063, 0.186, 0.186, 0.186, 0.186},
    {0.7, 0.053, 0.053, 0.053, 0.053, 0.196, 0.196, 0.196, 0.196},
    {0.8, 0.043, 0.043, 0.043, 0.043, 0.206, 0.206, 0.206, 0.206},
    {0.9, 0.033, 0.032, 0.032, 0.033, 0.217, 0.217, 0.217, 0.217},
    {1.0, 0.022, 0.022, 0.022, 0.022, 0.227, 0.227, 0.227, 0.227},
}};

TEST(NodePower, ReproducesTable5_4ExceptTwoPrintedEntries) {
  // Homogeneous hosts (equal p_n), one process each; communication power =
  // available bandwidth of an idle 10 or 100 Mbit/s link; one switch over all
  // 8 (flat normalization): power = (1 - w) / 8 + w * {10, 100} / 440.
  const MachineModel model = flat_model(8);
  std::vector<NodeMeasures> hosts;
  for (int host = 0; host < 8; ++host) {
    const std::vector<InterfaceActivity> link{
        {.name = "eth0", .capacity = (host < 4 ? 10 : 100) * kMbit}};
    hosts.push_back(
        {.processing = node_processing_power(180, std::vector{0.0}, std::vector{1.0}),
         .communication = communication_power(CommunicationPowerForm::available_bandwidth, link)});
  }
  std::vector<std::string> differing;
  for (const auto& row : kTable5_4) {
    const double w = row[0];
    const auto power = leaf_powers(model, hosts, {CommunicationWeightMode::fixed, w});
    for (int host = 0; host < 8; ++host) {
      const double formula = (1 - w) * 0.125 + w * (host < 4 ? 10.0 : 100.0) / 440;
      EXPECT_NEAR(power[host], formula, 1e-12);
      if (std::abs(row[host + 1] - formula) > 0.001 + 1e-12) {
        differing.push_back("w=" + std::to_string(w).substr(0, 3) + " host " +
                            std::to_string(host) + " printed " + std::to_string(row[host + 1]));
      }
    }
  }
  // Two printed entries differ from the formula by more than 0.001:
  // - gossage (slow hub) at w = 0.2: the formula gives 0.104 like its three hub
  //   neighbours; the printed 0.145 is the fast hosts' value, a typo.
  // - rivera at w = 0.4: printed 0.083 against 0.0841 (its hub neighbours print
  //   0.084), 0.0011 off: the thesis measured real traffic, whose noise also
  //   shows at w = 0 (0.124 for some hosts); a rounding edge, not a typo.
  EXPECT_EQ(differing, (std::vector<std::string>{"w=0.2 host 3 printed 0.145000",
                                                 "w=0.4 host 0 printed 0.083000"}));
}

TEST(NodePower, HomogeneousModelGivesOneNthEach) {
  for (int hosts : {1, 2, 5, 8}) {
    const std::vector<NodeMeasures> same(hosts, {.processing = 3.0, .communication = 7.0});
    for (double power :
         leaf_powers(flat_model(hosts), same, {CommunicationWeightMode::fixed, 0.4})) {
      EXPECT_DOUBLE_EQ(power, 1.0 / hosts);
    }
  }
}

MachineModel fig3_5() {
  const auto network = [](std::string name, std::vector<std::string> children) {
    return NodeSpec{.type = NodeType::network,
                    .name = name,
                    .description = name,
                    .children = std::move(children)};
  };
  const auto computing = [](std::string name) {
    return NodeSpec{.type = NodeType::computing, .name = name, .description = name, .children = {}};
  };
  return MachineModel({network("0", {"1", "2"}), network("1", {"3", "4"}), computing("3"),
                       computing("4"), network("2", {"5", "6"}), computing("5"), computing("6")},
                      "fig3_5");
}

TEST(NodePower, SiblingNormalizationSplitsEachParentExactly) {
  const MachineModel model = fig3_5();  // postfix: 3 4 1 5 6 2 0
  std::vector<NodeMeasures> measures(7);
  const std::array<double, 4> processing{1, 3, 2, 2};
  const std::array<double, 4> communication{5, 5, 1, 9};
  for (int i = 0; i < 4; ++i) {
    measures[model.leaves()[i]] = {.processing = processing[i], .communication = communication[i]};
  }
  sum_measures_up_the_tree(model, measures);
  EXPECT_DOUBLE_EQ(measures[2].processing, 4.0);  // router "1" = sum of its children
  EXPECT_DOUBLE_EQ(*measures[5].communication, 10.0);
  const auto power = node_powers(model, measures, {CommunicationWeightMode::fixed, 0.3});
  EXPECT_DOUBLE_EQ(power[6], 1.0);
  EXPECT_DOUBLE_EQ(power[2], 0.3 * 10 / 20 + 0.7 * 4 / 8);
  EXPECT_DOUBLE_EQ(power[0] + power[1], power[2]);
  EXPECT_DOUBLE_EQ(power[3] + power[4], power[5]);
  EXPECT_DOUBLE_EQ(power[0], power[2] * (0.3 * 0.5 + 0.7 * 0.25));
  EXPECT_DOUBLE_EQ(power[0] + power[1] + power[3] + power[4], 1.0);
}

TEST(NodePower, UnknownCommunicationPowerFallsBackToProcessing) {
  const std::vector<NodeMeasures> hosts{{.processing = 1.0, .communication = 4.0},
                                        {.processing = 3.0, .communication = std::nullopt}};
  const auto power = leaf_powers(flat_model(2), hosts, {CommunicationWeightMode::fixed, 0.5});
  EXPECT_DOUBLE_EQ(power[0], 0.25);
  EXPECT_DOUBLE_EQ(power[1], 0.75);
}

TEST(NodePower, WeightModes) {
  const std::vector<NodeMeasures> hosts{{.processing = 1.0, .communication = 3.0, .caf = 1.0},
                                        {.processing = 1.0, .communication = 1.0, .caf = 0.0}};
  const auto ignored = leaf_powers(flat_model(2), hosts, {CommunicationWeightMode::ignored, 0.9});
  EXPECT_DOUBLE_EQ(ignored[0], 0.5);
  const auto from_caf = leaf_powers(flat_model(2), hosts, {CommunicationWeightMode::from_caf, 0});
  EXPECT_DOUBLE_EQ(from_caf[0], 0.5 * 0.75 + 0.5 * 0.5);  // w = 1 - 1/(1+1)
  EXPECT_DOUBLE_EQ(from_caf[1], 0.5);                     // w = 0: processing only
  // All processing powers 0 (every CPU taken by others): an even split.
  const std::vector<NodeMeasures> busy(
      2, NodeMeasures{.processing = 0.0, .communication = std::nullopt, .caf = 0});
  EXPECT_DOUBLE_EQ(leaf_powers(flat_model(2), busy, {})[1], 0.5);
}

}  // namespace
}  // namespace flexmpi::machine
