// Relative computing power partitioner (thesis 5.2.1, Alg. 5 lines 31-48):
// each process gets a share of the workload proportional to its measured
// speed, RCP_i = speed_i / sum_j speed_j (partition_by_speed, which
// partitioners that weigh the speeds first end with too).
//
// This is the model to copy for a new partitioner: one class, a name, a
// partition() that only reads PartitionInput, falls back (saying why)
// instead of failing on degenerate measurements, and a descriptor that the
// folder's CMakeLists.txt registers.
#pragma once

#include "balancing/partitioner.hpp"

namespace flexmpi {

class RcpPartitioner final : public Partitioner {
 public:
  std::string_view name() const override { return "rcp"; }
  PartitionResult partition(const PartitionInput& input) override;
};

}  // namespace flexmpi
