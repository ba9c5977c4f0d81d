// Partitioner "fpm-geometric": the traditional FPM partitioner (FPM paper,
// sec. 2; Lastovetsky and Reddy 2007): piecewise-linear speed functions from
// the history of measurements, kept to the shape that makes the solution
// unique, and the geometrical algorithm bisecting between lines through the
// origin (FpmPartitioner::solve_by_bisection). Always converges; less
// accurate than smooth (spline) models where the real speed function does not
// have that shape.
#pragma once

#include "balancing/fpm/fpm_partitioner.hpp"

namespace flexmpi {

class FpmGeometricPartitioner final : public FpmPartitioner {
 public:
  std::string_view name() const override { return "fpm-geometric"; }
  Solution solve(const SpeedHistory& history, const FpmMeasurement& current) override;
};

}  // namespace flexmpi
