#include "balancing/fpm_geometric/fpm_geometric_partitioner.hpp"

#include <algorithm>
#include <cmath>

#include "balancing/fpm_geometric/piecewise_linear_speed.hpp"

namespace flexmpi {

FpmPartitioner::Solution FpmGeometricPartitioner::solve(const SpeedHistory& history,
                                                        const FpmMeasurement& /*current*/) {
  std::vector<PiecewiseLinearSpeed> speeds;
  speeds.reserve(history.processes());
  for (std::size_t i = 0; i < history.processes(); ++i) speeds.emplace_back(history.points(i));
  const double n = history.total();
  const BisectionResult result = bisect_lines(speeds, n);
  // Residual as for the solvers: the sizes sum to n exactly, so the largest
  // relative time difference to process 1.
  double residual = 0.0;
  for (std::size_t i = 1; i < speeds.size(); ++i) {
    residual = std::max(
        residual, std::abs(speeds[i].time(result.sizes[i]) - speeds[0].time(result.sizes[0])) /
                      std::max(result.time, 1e-300));
  }
  stats_ = {"bisection", result.iterations, residual, residual < 1e-6};
  if (result.sizes.size() != history.processes()) return {{}, "bisection found no line"};
  return {result.sizes, ""};
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
