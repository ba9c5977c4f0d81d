// The decision part of FLEX-MPI's dynamic load balancing algorithm
// (thesis Alg. 5 lines 1-29; Euro-Par 2013 Alg. 1): is the application
// unbalanced, is the system dedicated, is an interference a burst (tolerated)
// or a long-term load (rebalanced)?
#pragma once

#include <deque>
#include <string_view>
#include <vector>

namespace flexmpi {

enum class Interference { none, burst, long_term };
std::string_view to_string(Interference interference);

/// What the detector concluded for one sampling interval.
struct BalanceVerdict {
  double imbalance = 0.0;        ///< (max - min) / max of computation time
  bool unbalanced = false;       ///< imbalance > imbalance_threshold
  std::vector<bool> shared;      ///< per process: (Treal - Tcpu)/Treal > dedicated_threshold
  bool system_dedicated = true;  ///< no process was shared this interval
  Interference interference = Interference::none;
  bool rebalance = false;  ///< Alg. 5 line 29
};

class ImbalanceDetector {
 public:
  /// Thresholds as in docs/reference/behaviour.md, Thresholds; k = consecutive shared intervals
  /// that make a load long-term. Throws Error(invalid_argument) on values out of range.
  ImbalanceDetector(double imbalance_threshold, double dedicated_threshold, int k);

  /// Evaluates one interval from per-process computation, wall and CPU
  /// times (all the same length); remembers whether the system was dedicated.
  BalanceVerdict evaluate(const std::vector<double>& computation_time,
                          const std::vector<double>& wall_time,
                          const std::vector<double>& cpu_time);

  /// Forgets the interference history (after the set of processes changed).
  void reset() { dedicated_history_.clear(); }

 private:
  double imbalance_threshold_;
  double dedicated_threshold_;
  int k_;
  std::deque<bool> dedicated_history_;  // the circular buffer dedicated_system[n % k] of Alg. 5
};

}  // namespace flexmpi
