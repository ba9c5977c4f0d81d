// A synthetic job for the decisions-at-scale benchmark:
// what rank 0 would hold at the end of a sampling interval of P processes on
// C node classes, without MPI. Ranks are packed onto nodes of
// `cores_per_node` processes, nodes onto classes in rank order, and each
// class is a little faster than the one before it (1.0 ... ~2.0), with a
// deterministic per-process jitter of a few percent, so that equal blocks are
// unbalanced (the balancer moves) and blocks proportional to the speeds are
// not (it holds).
#pragma once

#include <cstdint>
#include <vector>

#include "balancing/partitioner.hpp"
#include "base/row_block.hpp"
#include "model/comm_model.hpp"
#include "model/machine_profile.hpp"
#include "monitoring/interval.hpp"
#include "resources/node_classes.hpp"
#include "resources/resource_manager.hpp"

namespace flexmpi::bench {

struct JobShape {
  int processes = 1024;
  int node_classes = 8;
  int cores_per_node = 32;
  std::int64_t rows_per_process = 1000;
  int iterations_per_interval = 10;
};

class SyntheticJob {
 public:
  explicit SyntheticJob(JobShape shape);

  [[nodiscard]] const JobShape& shape() const { return shape_; }
  [[nodiscard]] std::int64_t global_rows() const {
    return shape_.rows_per_process * shape_.processes;
  }
  /// The block decomposition every run starts from: unbalanced on these speeds.
  [[nodiscard]] const Decomposition& equal_blocks() const { return equal_blocks_; }
  /// Rows in proportion to the speeds: what a balancer converges to.
  [[nodiscard]] const Decomposition& balanced_blocks() const { return balanced_blocks_; }

  /// Every process's record of interval `index` measured on `blocks`, as
  /// the interval exchange leaves it on rank 0 (oversubscription marked).
  /// `index` varies the jitter a little from interval to interval.
  [[nodiscard]] IntervalReport report(int index, const Decomposition& blocks) const;

  /// What LoadBalancer::confirmed_input builds from one report: the
  /// partitioners' input for the latest interval on `blocks`.
  [[nodiscard]] PartitionInput partition_input(const IntervalReport& report,
                                               const Decomposition& blocks) const;

  /// The node classes (FLEXMPI_NODE_CLASSES) and the resource manager's view:
  /// a quarter more PEs granted than running, an eighth of the running
  /// processes spawned earlier (removable).
  [[nodiscard]] const std::vector<NodeClass>& node_classes() const { return classes_; }
  [[nodiscard]] const ResourceView& resources() const { return resources_; }

  /// Rank 0's PMPI profile of one interval: per iteration two Allreduces of
  /// a double over every process and two halo messages of 8 KiB (CG's pattern).
  [[nodiscard]] std::vector<CommOpCount> operations() const;
  [[nodiscard]] CommunicationReplay replay(const MachineProfile& profile) const;

 private:
  [[nodiscard]] double speed_of(int rank, int index) const;  // rows per second

  JobShape shape_;
  std::vector<int> class_of_rank_;
  std::vector<double> jitter_;  // per rank, around 1
  std::vector<NodeClass> classes_;
  ResourceView resources_;
  Decomposition equal_blocks_;
  Decomposition balanced_blocks_;
};

}  // namespace flexmpi::bench
