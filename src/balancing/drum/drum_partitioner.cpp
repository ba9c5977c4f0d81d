#include "balancing/drum/drum_partitioner.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "base/host_id.hpp"
#include "config/config.hpp"
#include "flexmpi/error.hpp"
#include "machine/machine_model.hpp"
#include "machine/machine_xml.hpp"
#include "machine/powers.hpp"

namespace flexmpi {
namespace {

// u_j = Tcpu / Treal, in [0, 1]; 1 where the times are unknown (dedicated).
double utilization(const PartitionInput& input, std::size_t p) {
  if (p >= input.wall_time.size() || p >= input.cpu_time.size() || input.wall_time[p] <= 0.0) {
    return 1.0;
  }
  return std::clamp(input.cpu_time[p] / input.wall_time[p], 0.0, 1.0);
}

// FLEXMPI_DRUM_COMM_WEIGHT: a weight in [0, 1], or caf (nullopt).
std::optional<double> parse_communication_weight(std::string_view text) {
  if (text == "caf") return std::nullopt;
  const double weight = parse_finite_number(text);
  if (!(weight >= 0.0 && weight <= 1.0)) throw SettingRejected{};
  return weight;
}

// FLEXMPI_DRUM_TOPOLOGY: a DRUM XML model, read here to check it.
std::string parse_machine_topology(std::string_view text) {
  const std::string path(text);
  if (!path.empty()) parsed_by_component([&] { return machine::read_machine_xml(path); });
  return path;
}

constexpr std::string_view kCommWeight = "FLEXMPI_DRUM_COMM_WEIGHT";
constexpr std::string_view kTopology = "FLEXMPI_DRUM_TOPOLOGY";

}  // namespace

DrumInput::DrumInput(NodeMeasures measures, const DrumSettings& settings)
    : NodeMeasures(std::move(measures)),
      communication_weight(settings.communication_weight.value_or(0.0)),
      communication_weight_from_caf(!settings.communication_weight.has_value()),
      machine_topology(settings.machine_topology) {}

std::vector<double> drum_processing_powers(const PartitionInput& input, const DrumInput& drum,
                                           const std::vector<double>& ratings) {
  const std::size_t n = input.speed.size();
  std::map<double, std::vector<std::size_t>> nodes;  // host id -> its processes
  for (std::size_t p = 0; p < n; ++p) {
    nodes[p < drum.host_id.size() ? drum.host_id[p] : static_cast<double>(p)].push_back(p);
  }
  std::vector<double> powers(n, 0.0);
  for (const auto& [host, processes] : nodes) {
    std::vector<double> utilizations;
    for (const std::size_t p : processes) utilizations.push_back(utilization(input, p));
    const std::size_t first = processes.front();
    const double idle_cpus = first < drum.node_idle_cpus.size() ? drum.node_idle_cpus[first] : 0.0;
    // p_{n,j} = b (ū_n + ī_n): the same availability for every process of
    // the node (3.1.2.1); Σ_t i_t is one number here, the node's idle CPUs.
    // Computed once per node: per process it was O(k^2) on a node of k.
    const double availability = machine::process_availability(utilizations, {&idle_cpus, 1});
    for (const std::size_t p : processes) {
      const double rating = p < ratings.size() ? ratings[p] : 0.0;
      powers[p] = rating * availability;
    }
  }
  return powers;
}

std::vector<double> drum_shares(const DrumInput& drum, const std::vector<double>& processing,
                                const std::vector<machine::NodeSpec>& topology) {
  const std::size_t n = processing.size();
  const auto host_id = [&](std::size_t p) {
    return p < drum.host_id.size() ? drum.host_id[p] : -static_cast<double>(p + 1);
  };
  // Each process's computing node, by host name: the model's (matched by
  // host id), or in the flat model its host id itself.
  std::vector<std::string> host_of_rank;
  std::map<double, std::string> modelled_hosts;
  for (const machine::NodeSpec& node : topology) {
    if (node.type == machine::NodeType::computing) {
      modelled_hosts[host_id_of(node.description)] = node.description;
    }
  }
  for (std::size_t p = 0; p < n; ++p) {
    if (topology.empty()) {
      host_of_rank.push_back(std::to_string(host_id(p)));
      continue;
    }
    const auto host = modelled_hosts.find(host_id(p));
    if (host == modelled_hosts.end()) {
      throw Error(Errc::invalid_argument, "process " + std::to_string(p) + " runs on a host that " +
                                              drum.machine_topology + " does not describe");
    }
    host_of_rank.push_back(host->second);
  }
  machine::MachineModel model(
      topology.empty() ? machine::flat_model_specs(host_of_rank) : topology,
      topology.empty() ? std::string_view("flat model") : std::string_view(drum.machine_topology));
  model.attach_ranks(host_of_rank);
  std::vector<machine::NodeMeasures> measures(model.nodes().size());
  for (std::size_t p = 0; p < n; ++p) {
    machine::NodeMeasures& node =
        measures[static_cast<std::size_t>(model.leaf_of_rank(static_cast<int>(p)))];
    node.processing += processing[p];
    const double communication =
        p < drum.node_communication_power.size() ? drum.node_communication_power[p] : -1.0;
    if (communication >= 0.0) node.communication = communication;
    if (p < drum.node_caf.size()) node.caf = drum.node_caf[p];
  }
  machine::sum_measures_up_the_tree(model, measures);
  const machine::CommunicationWeight weight{drum.communication_weight_from_caf
                                                ? machine::CommunicationWeightMode::from_caf
                                                : machine::CommunicationWeightMode::fixed,
                                            drum.communication_weight};
  const std::vector<double> powers = machine::node_powers(model, measures, weight);
  std::vector<double> shares(n, 0.0);
  for (std::size_t p = 0; p < n; ++p) {
    const int leaf = model.leaf_of_rank(static_cast<int>(p));
    const double node_processing = measures[static_cast<std::size_t>(leaf)].processing;
    const double within = node_processing > 0.0
                              ? processing[p] / node_processing
                              : 1.0 / static_cast<double>(model.node(leaf).ranks.size());
    shares[p] = powers[static_cast<std::size_t>(leaf)] * within;
  }
  return shares;
}

PartitionResult DrumPartitioner::partition(const PartitionInput& input) {
  // The capability rating b_j: the rate measured the first time (DRUM's
  // benchmark is run once, "when the hardware changes"), kept until the
  // processes change (reset()). Later changes of speed reach the shares only
  // through the CPU the process gets and the idle CPU of its node.
  const bool unrated =
      ratings_.size() != input.speed.size() ||
      std::any_of(ratings_.begin(), ratings_.end(), [](double b) { return !(b > 0.0); });
  if (unrated) ratings_ = input.speed;  // also when a rating could not be measured
  // The powers become the speeds of the proportional partition (exact
  // rounding, the row weights of the nnz/weight models, the fallback on
  // missing speeds).
  // Without the nodes' measures (a caller that did not fill them): every
  // process on its own node.
  const DrumInput drum(input.nodes.value_or(NodeMeasures{}), settings_);
  PartitionInput by_power = input;
  try {
    if (drum.machine_topology != topology_file_) {  // read once, checked by the configuration
      topology_ = drum.machine_topology.empty() ? std::vector<machine::NodeSpec>{}
                                                : machine::read_machine_xml(drum.machine_topology);
      topology_file_ = drum.machine_topology;
    }
    by_power.speed = drum_shares(drum, drum_processing_powers(input, drum, ratings_), topology_);
  } catch (const Error& error) {
    return {input.current, std::string("drum: ") + error.what() + ": partition kept"};
  }
  return partition_by_speed(by_power);
}

PartitionerDescriptor drum_partitioner() {
  return {"drum",
          "DRUM node power: rate per CPU-second x (CPU got + idle CPU of the node), mixed with "
          "the node's available bandwidth by FLEXMPI_DRUM_COMM_WEIGHT (Faik, DRUM thesis 3.1.2)",
          {{kCommWeight, "drum-comm-weight", "0", "a number from 0 to 1, or caf",
            "partitioner drum: weight of the nodes' communication power against their "
            "processing power (caf: 1 - 1/(1 + CAF) of each node, from its traffic; DRUM thesis "
            "3.1.2)",
            [](std::string_view v) { return std::any(parse_communication_weight(v)); }},
           {kTopology, "drum-topology", "(flat model)", "path of a DRUM XML machine model",
            "partitioner drum: the tree of network nodes over the hosts (flexmpi-drum-config "
            "writes one); node powers split the load between subtrees first (DRUM thesis "
            "3.1.2); empty: the flat model",
            [](std::string_view v) { return std::any(parse_machine_topology(v)); }, true}},
          true,
          [](const Config& config) {
            const StrategySettings& set = config.strategy_settings;
            return std::make_unique<DrumPartitioner>(
                DrumSettings{set.value_or<std::optional<double>>(kCommWeight, 0.0),
                             set.value_or<std::string>(kTopology, "")});
          }};
}

}  // namespace flexmpi
