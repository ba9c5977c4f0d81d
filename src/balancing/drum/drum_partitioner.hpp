// Partitioner "drum": each process's share is its DRUM processing power
// (DRUM thesis 3.1.2.1), p_j = b_j (ū_n + ī_n): a capability rating times
// the CPU the node's processes get plus the idle CPU of the node they could
// use, ū_n the mean of u_j = Tcpu / Treal over the k_n processes of node n,
// ī_n = min(k_n − Σ u, Σ_t i_t) / k_n.
//
// The thesis's b_n is a static benchmark rating (flexmpi-drum-config writes
// one into the XML model for programs that use drum.h). Inside the runtime
// the application's own rate, measured the first time the partitioner runs,
// stands in for it: the quantity the benchmark approximates, for this
// application. Σ_t i_t comes from /proc/stat (ProcessInterval::node_idle_cpus).
// Processes of one node get the same availability, so on one node the shares
// follow the ratings; across nodes a loaded node loses power and a node with
// idle CPUs gains it, as in DRUM.
//
// With a communication weight w (FLEXMPI_DRUM_COMM_WEIGHT) each node's power
// mixes in its communication power c_n (3.1.2.2, available bandwidth
// Σ_i C_i − (λ_i + μ_i), measured by the Monitor from /proc/net/dev):
// power_n = w c_n / Σ c + (1 − w) p_n / Σ p over the nodes (the flat model:
// one switch over the job's hosts, machine::node_powers), and the node's
// power is split among its processes in proportion to their p_j.
// With FLEXMPI_DRUM_TOPOLOGY the tree is a DRUM XML model instead (network
// nodes over the hosts): the powers split the load between subtrees first,
// each level normalized over siblings (docs/design/drum.md).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "balancing/partitioner.hpp"
#include "machine/machine_model.hpp"

namespace flexmpi {

/// FLEXMPI_DRUM_*, declared by drum_partitioner().
struct DrumSettings {
  /// The communication weight w_comm (FLEXMPI_DRUM_COMM_WEIGHT) in [0, 1];
  /// nullopt: each node's 1 − 1/(1 + CAF_n). 0: processing power only.
  std::optional<double> communication_weight = 0.0;
  /// The machine model (FLEXMPI_DRUM_TOPOLOGY): a DRUM XML file whose
  /// computing nodes are the job's hosts; empty: the flat model.
  std::string machine_topology;
};

/// What the DRUM model reads: the nodes' measures and FLEXMPI_DRUM_*.
struct DrumInput : NodeMeasures {
  double communication_weight = 0.0;
  bool communication_weight_from_caf = false;
  std::string machine_topology;
  DrumInput() = default;
  DrumInput(NodeMeasures measures, const DrumSettings& settings);
};

/// p_j of every process of `input` with capability `ratings` (0 where missing).
std::vector<double> drum_processing_powers(const PartitionInput& input, const DrumInput& drum,
                                           const std::vector<double>& ratings);

/// Each process's share of the load (they sum to 1): its node's DRUM power
/// on the tree `topology` (empty: the flat model over the processes' hosts),
/// from `processing` (p_j per process) and the communication measures and
/// weight of `drum`, split by p_j within the node. A process is matched to
/// the computing node whose description (host name) has its host id; throws
/// Error naming a process whose host the tree does not describe.
std::vector<double> drum_shares(const DrumInput& drum, const std::vector<double>& processing,
                                const std::vector<machine::NodeSpec>& topology = {});

class DrumPartitioner final : public Partitioner {
 public:
  explicit DrumPartitioner(DrumSettings settings = {}) : settings_(std::move(settings)) {}
  std::string_view name() const override { return "drum"; }
  PartitionResult partition(const PartitionInput& input) override;
  bool targets_unequal_times(const PartitionInput& input) const override {
    return input.nodes && settings_.communication_weight != 0.0;
  }
  void reset() override { ratings_.clear(); }

 private:
  DrumSettings settings_;
  std::vector<double> ratings_;  // b_j, from the first partition() since the last reset()
  std::string topology_file_;    // the XML model read into topology_
  std::vector<machine::NodeSpec> topology_;
};

}  // namespace flexmpi
