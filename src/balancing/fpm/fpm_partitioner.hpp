// The dynamic load balancing procedure of the FPM paper (sec. 4), shared by
// the partitioners built on functional performance models: at every
// balancing decision, (1) the measured (size, speed) of each process is
// added to its partial model, (2) the speed functions are approximated from
// the models, (3) a data partitioning algorithm finds the sizes that make
// all processes finish at the same time, and (4) the sizes are rounded to
// blocks that add up. Subclasses provide (2) and (3) in solve().
#pragma once

#include <string>
#include <vector>

#include "balancing/fpm/speed_history.hpp"
#include "balancing/partitioner.hpp"

namespace flexmpi {

/// How the last solve() went, for the trace and the benchmarks.
struct FpmSolveStats {
  std::string method;     ///< e.g. "hybridsj", "newton-arrowhead", "bisection"
  int iterations = 0;     ///< solver (or bisection) iterations
  double residual = 0.0;  ///< max |F_i| of the scaled system at the end
  bool converged = false;
};

class FpmPartitioner : public Partitioner {
 public:
  /// Steps (1)-(4); never throws: degenerate input keeps the partition and says why.
  PartitionResult partition(const PartitionInput& input) final;
  /// Step (1) alone: adds the measured (size, speed) of each process.
  void observe(const PartitionInput& input) final;
  /// Forgets the models (the set of processes changed).
  void reset() override { history_.reset(0, 0.0); }

  [[nodiscard]] const SpeedHistory& history() const { return history_; }
  [[nodiscard]] const FpmSolveStats& last_stats() const { return stats_; }

  /// Sizes balancing the models of `history` (sum = history.total()), or empty
  /// with `fallback` saying why; may also return sizes with a fallback when it
  /// used a simpler method. `current`: the measured sizes, for an initial guess.
  struct Solution {
    std::vector<double> sizes;
    std::string fallback;
  };
  virtual Solution solve(const SpeedHistory& history, const FpmMeasurement& current) = 0;

 protected:
  /// Sizes by the geometrical algorithm (sec. 2.1) on the shape-restricted
  /// piecewise-linear models of `history` (PiecewiseLinearSpeed), its stats
  /// in stats_: the traditional FPM partitioning, which always finds a
  /// solution, so also the fallback of a model whose solver may not.
  Solution solve_by_bisection(const SpeedHistory& history);

  FpmSolveStats stats_;

 private:
  /// Step (1): "" after adding the measurement `m` of `input`, else why it could not.
  std::string learn(const PartitionInput& input, FpmMeasurement& m);

  SpeedHistory history_;
};

}  // namespace flexmpi
