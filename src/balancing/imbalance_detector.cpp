#include "balancing/imbalance_detector.hpp"

#include <algorithm>

#include "flexmpi/error.hpp"

namespace flexmpi {

std::string_view to_string(Interference interference) {
  switch (interference) {
    case Interference::none:
      return "none";
    case Interference::burst:
      return "burst";
    case Interference::long_term:
      return "long_term";
  }
  return "?";
}

ImbalanceDetector::ImbalanceDetector(double imbalance_threshold, double dedicated_threshold, int k)
    : imbalance_threshold_(imbalance_threshold), dedicated_threshold_(dedicated_threshold), k_(k) {
  if (!(imbalance_threshold > 0.0 && imbalance_threshold < 1.0)) {
    throw Error(Errc::invalid_argument, "imbalance_threshold must be in (0, 1)");
  }
  if (!(dedicated_threshold > 0.0 && dedicated_threshold < 1.0)) {
    throw Error(Errc::invalid_argument, "dedicated_threshold must be in (0, 1)");
  }
  if (k < 1) throw Error(Errc::invalid_argument, "k must be >= 1");
}

BalanceVerdict ImbalanceDetector::evaluate(const std::vector<double>& computation_time,
                                           const std::vector<double>& wall_time,
                                           const std::vector<double>& cpu_time) {
  if (computation_time.size() != wall_time.size() || wall_time.size() != cpu_time.size()) {
    throw Error(Errc::internal, "per-process time vectors differ in length");
  }
  BalanceVerdict verdict;
  // evaluateLoadBalance (lines 1-6), on computation time.
  if (!computation_time.empty()) {
    const auto [low, high] = std::minmax_element(computation_time.begin(), computation_time.end());
    verdict.imbalance = *high > 0.0 ? (*high - *low) / *high : 0.0;
  }
  verdict.unbalanced = verdict.imbalance > imbalance_threshold_;

  // evaluateLocalDedicated / evaluateGlobalDedicated (lines 8-19).
  for (std::size_t i = 0; i < wall_time.size(); ++i) {
    const double shared_fraction =
        wall_time[i] > 0.0 ? (wall_time[i] - cpu_time[i]) / wall_time[i] : 0.0;
    verdict.shared.push_back(shared_fraction > dedicated_threshold_);
  }
  verdict.system_dedicated = std::none_of(verdict.shared.begin(), verdict.shared.end(),
                                          [](bool shared) { return shared; });
  dedicated_history_.push_back(verdict.system_dedicated);
  if (dedicated_history_.size() > static_cast<std::size_t>(k_)) dedicated_history_.pop_front();

  // evaluateInterference (lines 21-27): long-term once the last k intervals
  // were all non-dedicated; until then a burst, tolerated.
  if (!verdict.system_dedicated) {
    const bool long_term = dedicated_history_.size() == static_cast<std::size_t>(k_) &&
                           std::none_of(dedicated_history_.begin(), dedicated_history_.end(),
                                        [](bool dedicated) { return dedicated; });
    verdict.interference = long_term ? Interference::long_term : Interference::burst;
  }
  // Line 29.
  verdict.rebalance = verdict.unbalanced &&
                      (verdict.system_dedicated || verdict.interference == Interference::long_term);
  return verdict;
}

}  // namespace flexmpi
