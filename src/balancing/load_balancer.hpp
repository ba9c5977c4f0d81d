// Dynamic load balancing (thesis 5.2, Alg. 5): at the end of a sampling
// interval, decide from the interval report whether to rebalance and, if so,
// compute the new decomposition with the configured partitioner. Pure
// logic: every process evaluates the same report and reaches the same
// decision, so no further communication is needed to agree.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "balancing/imbalance_detector.hpp"
#include "balancing/partitioner.hpp"
#include "config/config.hpp"
#include "monitoring/interval.hpp"

namespace flexmpi {

struct BalanceDecision {
  BalanceVerdict verdict;
  bool changed = false;  ///< the decomposition changes: data must move
  Decomposition before;
  Decomposition after;
  std::string fallback;  ///< why the partitioner kept the partition, if it did

  /// The trace fields of the decision (SPEC section 5).
  [[nodiscard]] nlohmann::json to_json() const;
};

class LoadBalancer {
 public:
  explicit LoadBalancer(const Config& config);

  /**
   * Evaluates Alg. 5 on `report` for the decomposition `current` of
   * `global_size` rows. row_work: per-row workload for the nnz/weight models
   * (empty for the count model). work: per-process workload units of the
   * current blocks (what the speed metric counted per iteration).
   * `may_rebalance` false (e.g. no iteration left) records the verdict only.
   */
  BalanceDecision evaluate(const IntervalReport& report, const Decomposition& current,
                           std::int64_t global_size, const std::vector<double>& row_work,
                           bool may_rebalance);

  /// After the set of processes changed the interference history, and what
  /// the partitioner learnt about the old processes, are void.
  void reset_history() {
    detector_.reset();
    partitioner_->reset();
  }
  [[nodiscard]] const Partitioner& partitioner() const { return *partitioner_; }

 private:
  double dedicated_threshold_;
  ImbalanceDetector detector_;
  std::unique_ptr<Partitioner> partitioner_;
};

}  // namespace flexmpi
