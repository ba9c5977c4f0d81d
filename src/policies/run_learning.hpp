// What the performance-aware malleability policies (thesis 5.4.2-5.4.3) learn from
// the run to correct the remaining-run model (model/run_predictor.hpp).
// None of it is in the thesis; each piece fixed a fault measured on the
// emulated cluster (docs/design/malleability.md):
//   - an interval is representative when the balancer has set the blocks
//     once (the start's equal blocks are not what the processes run on), no
//     process changed and no row moved just before it (a moved row is
//     touched first: up to 48 % slower than the model);
//   - on representative intervals, measured / modelled iteration time per
//     process count (median of the last 3) corrects the candidates of every
//     count (OfferSituation::iteration_corrections, interpolated between
//     counts by iteration_correction_at); with a work profile, of the
//     computation, and the overhead gets measured - modelled added
//     (overhead_offsets);
//   - the interval after a spawn or removal, on the run's clock (with what
//     the application did between the intervals), beyond the settled one
//     after it, is what a change costs besides its spawn and data
//     (SettlingCost, OfferSituation::change_settling_seconds);
//   - a change makes the blocks unbalanced until the balancer judges them
//     again (the newcomers' blocks come from their class's nominal speed);
//   - a policy plans only when the interval was not right after a change and
//     the current count's correction is known (ready()).
// Every process learns alike from the same report; a spawned process
// imports what the others learnt (to_json / from_json).
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "monitoring/interval.hpp"
#include "policies/class_offers.hpp"

namespace flexmpi {

/// Measured / modelled time per iteration of the interval of `situation`,
/// which lasted `interval` seconds (its slowest process): modelled is the
/// balanced iteration of the prediction (modelled_iteration on the
/// measured speeds). With profiled steps, of the computation only: the
/// iteration less the least time a process spent in MPI, against
/// profiled_iteration's computation. nullopt without a measurement.
[[nodiscard]] std::optional<double> measured_over_modelled(const OfferSituation& situation,
                                                           double interval);
/// With profiled steps, the overhead's offset: the least time a process spent
/// in MPI per iteration less profiled_iteration's overhead (seconds, may be
/// negative); nullopt without profiled steps or a measurement.
[[nodiscard]] std::optional<double> overhead_beyond_modelled(const OfferSituation& situation,
                                                             double interval);

/// What the first interval after a spawn or removal takes beyond the settled
/// interval after it (new processes starting, connections opened, moved rows
/// touched first).
class SettlingCost {
 public:
  /// One interval, in order: its slowest process's seconds, its iterations,
  /// and whether a spawn or removal came just before it.
  void observe(double interval_seconds, int iterations, bool after_change);
  /// The median over the latest 3 changes priced; 0 before the first.
  [[nodiscard]] double seconds() const;
  [[nodiscard]] nlohmann::json to_json() const;
  void from_json(const nlohmann::json& state);

 private:
  static constexpr std::size_t kWindow = 3;
  // The interval after the latest change, until a settled one prices it.
  double pending_seconds_ = 0.0;
  int pending_iterations_ = 0;
  std::vector<double> excess_;
};

/// The corrections and their rules, described at the top; one per policy.
class RunLearning {
 public:
  /// The end of an interval, first: its report, and whether a spawn or
  /// removal came just before it.
  void observe(const IntervalReport& report, bool after_change);
  /// The interval observed: its slowest process's wall seconds.
  [[nodiscard]] double interval_seconds() const { return interval_; }
  /// Learns the correction from `situation` (the interval observed) if it was
  /// representative, and gives `situation` what was learnt so far.
  void learn_and_apply(OfferSituation& situation);
  /// Whether a policy may plan on the interval observed (after learn_and_apply).
  [[nodiscard]] bool ready() const;
  /// The balancer ran on the interval observed: the blocks count as balanced
  /// once it no longer waits to confirm an imbalance
  /// (BalancingStep::awaiting_confirmation).
  void after_balancing(bool awaiting_confirmation);
  /// The correction medians per process count.
  [[nodiscard]] std::map<int, double> iteration_corrections() const;
  [[nodiscard]] nlohmann::json to_json() const;
  void from_json(const nlohmann::json& state);

 private:
  static constexpr std::size_t kWindow = 3;
  bool blocks_balanced_ = false;
  // Of the interval observed last.
  bool after_change_ = false;
  bool representative_ = false;
  int processes_ = 0;
  double interval_ = 0.0;
  double run_seconds_ = 0.0;                             // the run's clock at the interval observed
  std::map<int, std::vector<double>> corrections_;       // per process count
  std::map<int, std::vector<double>> overhead_offsets_;  // with a profile, per count
  SettlingCost settling_;
};

}  // namespace flexmpi
