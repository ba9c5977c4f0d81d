// From every process's measures to node powers and part sizes (thesis 3.1.2,
// ch. 4): SMP nodes (several ranks, the elected one speaks for the node),
// benchmark ratings, nodes without processes, the early processing power.
#include "machine/model_powers.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

namespace flexmpi::machine {
namespace {

/// Flat model over hosts "a" and "b" with MFLOPS `rating_a` and `rating_b`;
/// ranks 0 and 1 on "a" (an SMP), rank 2 on "b".
MachineModel two_hosts(double rating_a, double rating_b) {
  std::vector<NodeSpec> specs = flat_model_specs({"a", "a", "b"});
  specs[0].mflops = rating_a;
  specs[1].mflops = rating_b;
  MachineModel model(specs, "flat model");
  model.attach_ranks({"a", "a", "b"});
  return model;
}

double sum(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0);
}

TEST(ModelPowers, BeforeMonitoringRatingsAndCpuCountsDecide) {
  // Host a: 2 ranks on 2 idle CPUs, 100 MFLOPS -> 200; host b: 1 rank, 4 CPUs, 200 -> 200.
  const MachineModel model = two_hosts(100, 200);
  const std::vector<RankMeasures> measures{{.idle_sum = 2}, {.idle_sum = 2}, {.idle_sum = 4}};
  const auto powers = model_powers(model, measures, DrumParameters{}, 0);
  EXPECT_DOUBLE_EQ(powers[model.leaves()[0]], 0.5);
  EXPECT_DOUBLE_EQ(powers[model.leaves()[1]], 0.5);
  const auto sizes = part_sizes(model, powers);
  ASSERT_EQ(sizes.size(), 3u);
  EXPECT_DOUBLE_EQ(sizes[0], 0.25);  // host a's half, split between its two ranks
  EXPECT_DOUBLE_EQ(sizes[1], 0.25);
  EXPECT_DOUBLE_EQ(sizes[2], 0.5);
}

TEST(ModelPowers, TheElectedProcessSpeaksForItsNode) {
  const MachineModel model = two_hosts(1, 1);
  // Rank 1 is not elected on host a: its node-wide fields are ignored.
  const std::vector<RankMeasures> measures{
      {.utilization = 0.5, .idle_sum = 0.0, .communication = 10, .caf = 0},
      {.utilization = 0.5, .idle_sum = 99, .communication = 999, .caf = 0},
      {.utilization = 1.0, .idle_sum = 0.0, .communication = 30, .caf = 0}};
  DrumParameters parameters;
  parameters.communication_weight = {CommunicationWeightMode::fixed, 0.5};
  const auto powers = model_powers(model, measures, parameters, 10);
  // p_a = 2 * (0.5 + 0) = 1 = p_b; c_a = 10, c_b = 30.
  EXPECT_DOUBLE_EQ(powers[model.leaves()[0]], 0.5 * 0.5 + 0.5 * 0.25);
  EXPECT_DOUBLE_EQ(sum(part_sizes(model, powers)), 1.0);
}

TEST(ModelPowers, ANodeWithoutProcessesGetsNoShare) {
  MachineModel model(flat_model_specs({"a", "b", "c"}), "flat model");
  model.attach_ranks({"a", "c"});
  const std::vector<RankMeasures> measures{{.utilization = 1, .communication = 5},
                                           {.utilization = 1, .communication = 5}};
  DrumParameters parameters;
  parameters.communication_weight = {CommunicationWeightMode::fixed, 0.3};
  const auto powers = model_powers(model, measures, parameters, 10);
  EXPECT_DOUBLE_EQ(powers[model.leaves()[1]], 0.0);
  EXPECT_DOUBLE_EQ(powers[model.leaves()[0]], 0.5);
  EXPECT_DOUBLE_EQ(sum(part_sizes(model, powers)), 1.0);
}

TEST(ModelPowers, EarlyProcessingPowerMovesFromBenchmarkToMonitoring) {
  const MachineModel model = two_hosts(50, 100);
  // Host a's ranks run at full speed, host b's rank gets a quarter of its CPU.
  const std::vector<RankMeasures> measures{
      {.utilization = 1.0}, {.utilization = 1.0}, {.utilization = 0.25}};
  DrumParameters parameters;
  parameters.early_processing_power = true;
  // Nothing monitored yet: the benchmark alone, b / max b = 0.5 per rank on a, 1 on b.
  const auto start = model_powers(model, measures, parameters, 0);
  EXPECT_DOUBLE_EQ(start[model.leaves()[0]], 0.5);
  // After a minute, w_dyn = 0.5: a = 2 * (0.5 * 1 + 0.5 * 0.5) = 1.5, b = 0.5 * 0.25 + 0.5 = 0.625.
  const auto later = model_powers(model, measures, parameters, 60);
  EXPECT_DOUBLE_EQ(later[model.leaves()[0]], 1.5 / 2.125);
}

}  // namespace
}  // namespace flexmpi::machine
