// Partitioner "fpm-akima": functional performance models of the processes
// built from the history of their measurements, interpolated by Akima
// splines, and the optimal partition found by multidimensional root finding
// (Rychkov, Clarke and Lastovetsky, "Using Multidimensional Solvers for
// Optimal Data Partitioning on Dedicated Heterogeneous HPC Platforms", sec. 3-4).
//
// Unlike the relative computing power, which takes each process's speed for a constant, it learns
// how the speed changes with the partition size (caches, memory, paging)
// and converges where a constant model oscillates.
#pragma once

#include <cstddef>
#include <vector>

#include "balancing/fpm/fpm_partitioner.hpp"
#include "balancing/fpm_akima/akima_speed_function.hpp"
#include "balancing/fpm_akima/balance_solver.hpp"

namespace flexmpi {

class FpmAkimaPartitioner final : public FpmPartitioner {
 public:
  /// Up to `dense_limit` processes the system is solved by GSL's hybridsj
  /// (HYBRJ) as in the paper; above it, whose dense Jacobian costs O(p^2)
  /// memory and O(p^3) per factorisation, by the O(p) arrow-shaped Newton.
  static constexpr std::size_t kDefaultDenseLimit = 128;
  explicit FpmAkimaPartitioner(std::size_t dense_limit = kDefaultDenseLimit,
                               SolverOptions options = {})
      : dense_limit_(dense_limit), options_(options) {}

  std::string_view name() const override { return "fpm-akima"; }
  Solution solve(const SpeedHistory& history, const FpmMeasurement& current) override;

 private:
  std::size_t dense_limit_;
  SolverOptions options_;
  std::vector<AkimaSpeedFunction> speeds_;  ///< one per process, kept between decisions
};

}  // namespace flexmpi
