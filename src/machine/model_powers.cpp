#include "machine/model_powers.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "machine/powers.hpp"

namespace flexmpi::machine {
namespace {

// w_dyn of the early processing power reaches its bound after a minute of
// monitoring; the bound keeps half the weight on the benchmark (3.1.2.1).
constexpr double kEarlyFormSecondsToBound = 60.0;
constexpr double kEarlyFormDynamicBound = 0.5;

double early_node_power(const std::vector<double>& utilizations, const std::vector<double>& idle,
                        double relative_rating, double monitored_seconds) {
  const double dynamic_weight =
      growing_dynamic_weight(monitored_seconds, kEarlyFormSecondsToBound, kEarlyFormDynamicBound);
  const double exploitable = exploitable_idle_per_process(utilizations, idle);
  double power = 0;
  for (double u : utilizations) {
    power += early_processing_power(dynamic_weight, u, exploitable, relative_rating);
  }
  return power;
}

NodeMeasures leaf_measures(const MachineNode& node, const std::vector<RankMeasures>& by_rank,
                           const DrumParameters& parameters, double best_rating,
                           double monitored_seconds) {
  std::vector<double> utilizations;
  for (int rank : node.ranks) utilizations.push_back(by_rank[rank].utilization);
  const RankMeasures& elected = by_rank[node.elected_rank];
  // Only Σ_t i_t enters the formula, so the elected process sends the sum.
  const std::vector<double> idle{elected.idle_sum};
  const double processing =
      parameters.early_processing_power
          ? early_node_power(utilizations, idle, node.spec.mflops / best_rating, monitored_seconds)
          : node_processing_power(node.spec.mflops, utilizations, idle);
  return {.processing = processing,
          .communication = std::isnan(elected.communication) ? std::nullopt
                                                             : std::optional(elected.communication),
          .caf = elected.caf};
}

}  // namespace

std::vector<double> model_powers(const MachineModel& model,
                                 const std::vector<RankMeasures>& by_rank,
                                 const DrumParameters& parameters, double monitored_seconds) {
  double best_rating = 0;
  for (int leaf : model.leaves()) best_rating = std::max(best_rating, model.node(leaf).spec.mflops);
  std::vector<NodeMeasures> measures(model.nodes().size());
  for (int leaf : model.leaves()) {
    const MachineNode& node = model.node(leaf);
    if (node.ranks.empty()) {  // no process there: no share, and no unknown c_n for its siblings
      measures[leaf].communication = 0.0;
      continue;
    }
    measures[leaf] = leaf_measures(node, by_rank, parameters, best_rating, monitored_seconds);
  }
  sum_measures_up_the_tree(model, measures);
  return node_powers(model, measures, parameters.communication_weight);
}

std::vector<double> part_sizes(const MachineModel& model, const std::vector<double>& powers) {
  std::vector<double> sizes;
  for (int rank = 0; rank < model.rank_count(); ++rank) {
    const int leaf = model.leaf_of_rank(rank);
    sizes.push_back(powers[leaf] / static_cast<double>(model.node(leaf).ranks.size()));
  }
  return sizes;
}

}  // namespace flexmpi::machine
