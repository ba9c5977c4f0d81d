// Partitioners: given what monitoring measured, compute the new row blocks.
// A partitioner is one class behind this interface plus one descriptor in
// its folder, which declares it (name, help, settings, what it reads) in a
// PartitionerDescriptor; FLEXMPI_PARTITIONER picks it. To add one, copy the
// folder of the default partitioner (the commented model, the first folder
// balancing/CMakeLists.txt adds): its CMakeLists.txt registers it
// (flexmpi_strategy), balancing/CMakeLists.txt adds the folder.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/row_block.hpp"
#include "base/setting.hpp"

namespace flexmpi {

/// What monitoring measured of each process's node, for a partitioner
/// whose descriptor reads_node_measures (ProcessInterval's node fields).
struct NodeMeasures {
  /// Per process: its node (a hash of the node's name: equal on one node),
  /// the node's cores, and how many of the node's CPUs stood idle in the
  /// interval (ProcessInterval::node_idle_cpus); empty if unknown.
  std::vector<double> host_id;
  std::vector<double> node_cores;
  std::vector<double> node_idle_cpus;
  /// Per process: its node's communication power c_n (negative: unknown) and
  /// CAF_n over the interval (ProcessInterval); empty if unknown.
  std::vector<double> node_communication_power;
  std::vector<double> node_caf;
};

/// What every partitioner reads, for one balancing decision.
struct PartitionInput {
  std::int64_t global_size = 0;  ///< rows of the decomposition
  Decomposition current;         ///< blocks now, one per process
  std::vector<double> speed;     ///< per process: workload units (or FLOP) per second
  /// Per process, seconds of the last sampling interval: the effective
  /// computation time (ProcessInterval::effective_computation; on a shared PE
  /// its CPU time over its share of the PE, so time x Tcpu/Treal is the CPU
  /// time the computation took).
  std::vector<double> computation_time;
  std::vector<double> work;  ///< per process: workload units of its current block
  /// Per process: iterations the interval's computation_time covers (empty: 1 each).
  /// computation_time / iterations is the time of one iteration of the current block.
  std::vector<double> iterations;
  /// Per process, seconds of the interval: wall (Treal) and CPU (Tcpu) time of
  /// the monitored region; empty if unknown. (Treal - Tcpu) / Treal is the
  /// share of the interval another job had the processing element (Alg. 5).
  std::vector<double> wall_time;
  std::vector<double> cpu_time;
  /// Workload of every global row for the nnz/weight models; empty: every row costs 1.
  std::vector<double> row_work;
  /// The nodes' measures: filled by the balancer for a partitioner whose
  /// descriptor reads_node_measures, else none.
  std::optional<NodeMeasures> nodes;
};

struct PartitionResult {
  Decomposition blocks;
  /// Empty, or why the partitioner fell back (e.g. kept the partition); traced.
  std::string fallback;
};

class Partitioner {
 public:
  virtual ~Partitioner() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// New blocks: contiguous, in rank order, covering [0, global_size).
  virtual PartitionResult partition(const PartitionInput& input) = 0;
  /// True when the blocks this partitioner wants for `input` are not those
  /// that equalize the computation times (a communication term that gives a
  /// node behind a slow link less than its speed's share). The balancer then
  /// moves when the blocks depart from that target, not when times differ.
  [[nodiscard]] virtual bool targets_unequal_times(const PartitionInput& /*input*/) const {
    return false;
  }
  /// Learns from measurements on the current blocks without proposing blocks:
  /// the balancer calls it before it leaves blocks that partition() never saw
  /// measured (a move it undoes), so that a partitioner with a memory (the
  /// FPM models) does not propose the blocks it just left again. Stateless
  /// partitioners ignore it.
  virtual void observe(const PartitionInput& /*input*/) {}
  /// Forgets what earlier calls learnt (e.g. a history of measurements):
  /// called when the set of processes changes. Stateless partitioners ignore it.
  virtual void reset() {}
};

/// What a partitioner's folder declares of it (FLEXMPI_PARTITIONER=name).
struct PartitionerDescriptor {
  std::string_view name;
  std::string_view help;
  /// The settings only it reads, values in Config::strategy_settings.
  std::vector<SettingDescriptor> settings;
  /// It reads PartitionInput::nodes: monitoring then measures the nodes.
  bool reads_node_measures = false;
  std::function<std::unique_ptr<Partitioner>(const Config&)> create;
  /// It is FLEXMPI_PARTITIONER's default (the first registered one declaring it).
  bool is_default = false;
};

/// Every partitioner of this build, in the order balancing/CMakeLists.txt adds them.
const std::vector<PartitionerDescriptor>& partitioners();
/// Names of partitioners(), comma-separated, for messages.
std::string partitioner_names();
/// The descriptor of FLEXMPI_PARTITIONER's default: the first registered one
/// that declares PartitionerDescriptor::is_default.
const PartitionerDescriptor& default_partitioner();
/// The descriptor named `name`; throws Error(bad_config) naming the known ones.
const PartitionerDescriptor& find_partitioner(std::string_view name);
/// Creates one by name from its settings in `config`; throws as find_partitioner.
std::unique_ptr<Partitioner> make_partitioner(std::string_view name, const Config& config);

// ---- arithmetic shared by partitioners ---------------------------------------

/// Splits `total` rows in proportion to `shares` (>= 0, sum > 0), exactly
/// (largest remainder), giving every process at least `minimum` rows when
/// total allows it.
std::vector<std::int64_t> proportional_counts(std::int64_t total, const std::vector<double>& shares,
                                              std::int64_t minimum);

/// Contiguous blocks, in rank order, from counts.
Decomposition blocks_from_counts(const std::vector<std::int64_t>& counts);

/// Contiguous blocks whose summed row_work is as close as possible to
/// shares[p] / sum(shares) of the total work, each with at least one row
/// when there are enough rows (thesis 5.2: XMPI_LB_NNZ / XMPI_LB_WEIGHT).
Decomposition cut_by_work(const std::vector<double>& row_work, const std::vector<double>& shares);

/// Rows per process of `rows` in proportion to `shares`: by `row_work` (one
/// value per row) when it is known and sums to more than 0, else by row
/// count (at least one row each). What a spawn or removal hands the
/// processes: split by count, EpiGraph's newcomers at the epidemic's peak got
/// blocks with 25 times the others' work (docs/design/epigraph.md).
std::vector<std::int64_t> split_rows(std::int64_t rows, const std::vector<double>& row_work,
                                     const std::vector<double>& shares);

/// The blocks in proportion to input.speed, the relative computing power
/// (thesis 5.2.1, Alg. 5 lines 31-48): by row count, or by row_work when it
/// is given; the current blocks, saying why, when a speed is not a positive
/// number. What a partitioner that computes per-process powers ends with.
PartitionResult partition_by_speed(const PartitionInput& input);

/// Checks that blocks are contiguous, in order, non-negative and cover [0, size).
bool covers_exactly(const Decomposition& blocks, std::int64_t size);

}  // namespace flexmpi
