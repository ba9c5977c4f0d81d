#include "balancing/fpm_geometric/fpm_geometric_partitioner.hpp"

namespace flexmpi {

FpmPartitioner::Solution FpmGeometricPartitioner::solve(const SpeedHistory& history,
                                                        const FpmMeasurement& /*current*/) {
  return solve_by_bisection(history);
}

PartitionerDescriptor fpm_geometric_partitioner() {
  return {"fpm-geometric",
          "shape-restricted piecewise-linear speed functions, bisection between lines through the "
          "origin (Rychkov et al. sec. 2)",
          {},
          false,
          [](const Config&) { return std::make_unique<FpmGeometricPartitioner>(); }};
}

}  // namespace flexmpi
