#include "balancing/rcp/rcp_partitioner.hpp"

#include <cmath>
#include <string>

namespace flexmpi {

PartitionResult RcpPartitioner::partition(const PartitionInput& input) {
  for (std::size_t p = 0; p < input.speed.size(); ++p) {
    // A process whose speed could not be measured (no work, no time, NaN)
    // gives no basis for a new partition: keep the current one.
    if (!(std::isfinite(input.speed[p]) && input.speed[p] > 0.0)) {
      return {input.current, "speed of process " + std::to_string(p) +
                                 " is not a positive number: partition kept"};
    }
  }
  if (input.row_work.empty()) {
    // computeDataDistribution: count_i = size * RCP_i, rounded exactly.
    return {blocks_from_counts(proportional_counts(input.global_size, input.speed, 1)), ""};
  }
  return {cut_by_work(input.row_work, input.speed), ""};
}

PartitionerDescriptor rcp_partitioner() {
  return {"rcp",
          "share proportional to the relative computing power measured (FLEX-MPI, thesis 5.2)",
          {},
          false,
          [](const Config&) { return std::make_unique<RcpPartitioner>(); }};
}

}  // namespace flexmpi
