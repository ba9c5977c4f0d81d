#include "balancing/rcp/rcp_partitioner.hpp"

namespace flexmpi {

PartitionResult RcpPartitioner::partition(const PartitionInput& input) {
  return partition_by_speed(input);
}

PartitionerDescriptor rcp_partitioner() {
  return {"rcp",
          "share proportional to the relative computing power measured (FLEX-MPI, thesis 5.2)",
          {},
          false,
          [](const Config&) { return std::make_unique<RcpPartitioner>(); },
          true};
}

}  // namespace flexmpi
