// Dynamic load balancing (thesis 5.2, Alg. 5): at the end of a sampling
// interval, decide from the interval report whether to rebalance and, if so,
// compute the new decomposition with the configured partitioner. Pure
// logic: every process evaluates the same report and reaches the same
// decision, so no further communication is needed to agree.
//
// Beyond Alg. 5 (docs/design/balancing.md), two rules keep noise from moving data:
// - confirmation: data moves only after `lb_confirm` consecutive unbalanced
//   intervals, and only if the per-process *median* time per iteration over
//   the last `lb_window` intervals on the current blocks is unbalanced too;
//   the partitioner gets those medians. One disturbed interval neither
//   triggers a move nor sets the new partition, and a burst shorter than half
//   the window is ignored; after a move the evidence starts again, and moving
//   a partition that was balanced on measurements needs the majority of a
//   full window (lb_window / 2 + 1 consecutive unbalanced intervals), so it
//   is not moved back by a short change (hysteresis);
// - gain against cost: the prediction model (model/rebalance_model.hpp)
//   prices the move, and it happens only if the predicted gain over the
//   remaining iterations exceeds `lb_margin` times the predicted cost;
// - settled imbalance: an imbalance under the threshold that a full window of
//   dedicated intervals still shows above `lb_refine` in its medians is moved
//   too (if it pays), once after each move of Alg. 5. Alg. 5 alone leaves a
//   partition up to imbalance_threshold off for the rest of the run when its
//   move was made from two noisy intervals;
// - do no harm: every move records the run's time per iteration
//   (the slowest process's wall time) before it and the computation time it
//   predicts to save; once the blocks it made have been measured for
//   intervals_to_check() intervals, the balancer compares the gain it got
//   with the gain it predicted. A move that delivered less than half (the
//   load moved, or was a burst the window took for long-term) raises the
//   back-off level: each level doubles the confirmations a move needs and
//   the margin its gain must clear. A move after which the iterations are
//   slower than before, and whose blocks are slower than the ones it left at
//   the speeds measured since (not a load on every rank), is undone at once.
//   A move that delivers, or a full window of steady speeds, lowers the
//   level again. At a level above 0 a move must also pay averaged over two
//   load states: the window that justified the last change and the current
//   one (a load that alternates between cores made every move right for one
//   state and wrong for the next). Alg. 5's burst/long-term distinction (k)
//   stays underneath;
// - a partitioner's own target: where the partitioner does not aim at equal
//   times (a communication term in a node's power, DRUM thesis 3.1.2.3), a
//   full window of intervals on the current blocks asks it for its blocks, and
//   they move (if it pays) when a block would change by more than the
//   imbalance threshold of the mean block. Times alone would never move data
//   away from a node whose only handicap is its link: a bulk-synchronous
//   code waits for that link in every process alike.
#pragma once

#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "balancing/imbalance_detector.hpp"
#include "balancing/partitioner.hpp"
#include "config/config.hpp"
#include "model/rebalance_model.hpp"
#include "monitoring/interval.hpp"

namespace flexmpi {

/// How the last move turned out, judged on the blocks it made (do no harm).
/// Times are of the run, not of the computation: the slowest process's wall
/// time per iteration (the median over the intervals on each side of the
/// move). On a core shared in scheduler time slices a smaller block can
/// compute faster and the iteration still take longer.
struct MoveOutcome {
  double before_seconds = 0.0;     ///< wall time per iteration before the move
  double predicted_seconds = 0.0;  ///< before, less the computation time the move predicted to save
  double measured_seconds = 0.0;   ///< wall time per iteration on the blocks it made
  /// (before - measured) / (before - predicted): 1 = the gain predicted.
  [[nodiscard]] double delivered() const;
  [[nodiscard]] nlohmann::json to_json() const;
};

struct BalanceDecision {
  BalanceVerdict verdict;
  bool changed = false;  ///< the decomposition changes: data must move
  Decomposition before;
  Decomposition after;
  std::string fallback;  ///< why the partitioner kept the partition, if it did
  /// Consecutive unbalanced intervals so far, and how many a move needs.
  int confirmations = 0;
  int confirmations_needed = 1;
  /// Why the decomposition stays, when the detector asked for a rebalance.
  std::string held;
  /// The proposed move (see assessment) answers a settled imbalance: a full
  /// window, under the threshold, over lb_refine.
  bool settled = false;
  /// The gain-versus-cost prediction, when the partitioner proposed a change.
  std::optional<RebalanceAssessment> assessment;
  /// The previous move, judged in this interval.
  std::optional<MoveOutcome> move_outcome;
  /// The back-off level after this interval (0: none; do no harm).
  int backoff = 0;
  /// The move goes back to the blocks before the last move, which made the
  /// iterations slower (do no harm).
  bool undo = false;

  /// The blocks stay only because the imbalance is not yet confirmed: the
  /// balancer has not judged them (lb_confirm intervals, or a window's
  /// majority after a move).
  [[nodiscard]] bool awaiting_confirmation() const {
    return !changed && !held.empty() && confirmations < confirmations_needed;
  }
  /// The trace fields of the decision (docs/reference/trace.md).
  [[nodiscard]] nlohmann::json to_json() const;
};

class LoadBalancer {
 public:
  explicit LoadBalancer(const Config& config);

  /// What a decision needs besides the interval report.
  struct Situation {
    Decomposition current;         ///< blocks now, one per process
    std::int64_t global_size = 0;  ///< rows of the decomposition
    /// Per-row workload for the nnz/weight models (empty for the count model).
    std::vector<double> row_work;
    long long remaining_iterations = 0;  ///< iterations left to use a new partition
    double bytes_per_row = 0.0;          ///< bytes a row of the registered data carries
  };

  /**
   * Evaluates Alg. 5 on `report` and, if it asks for a rebalance, the two
   * rules above; `cost` prices the redistribution. With no iteration left
   * the verdict is recorded and nothing moves.
   */
  BalanceDecision evaluate(const IntervalReport& report, const Situation& situation,
                           const RedistributionCost& cost);

  /// Per process, the median speed (metric per second of effective
  /// computation) over the intervals measured on the current blocks; empty
  /// before the first. What a spawn or a removal splits the rows by.
  [[nodiscard]] std::vector<double> evidence_speeds() const;

  /// After the set of processes changed the interference history, the
  /// unbalanced intervals counted, and what the partitioner learnt about the
  /// old processes, are void.
  void reset_history() {
    detector_.reset();
    evidence_.clear();
    evidence_partition_.clear();
    unbalanced_streak_ = 0;
    moved_ = false;
    refined_ = false;
    unchecked_move_.reset();
    undo_to_.reset();
    evidence_before_change_.clear();
    backoff_ = 0;
    steady_intervals_ = 0;
    partitioner_->reset();
  }
  [[nodiscard]] const Partitioner& partitioner() const { return *partitioner_; }

 private:
  /// The partitioner's input from the evidence window (median per process).
  [[nodiscard]] PartitionInput confirmed_input(const Situation& situation) const;
  /// Whether the partitioner is asked for blocks this interval: nullopt
  /// (decision.held says why, where it should), else whether for its own
  /// target (true) or because the times are unbalanced (false).
  [[nodiscard]] std::optional<bool> partitioner_asked(const PartitionInput& input,
                                                      const Situation& situation, bool refining,
                                                      BalanceDecision& decision) const;
  /// Why the partitioner was asked: for its own target, for a refinement.
  struct MovePath {
    bool by_target = false;
    bool refining = false;
  };
  /// Moves to `proposed` when the prediction says it pays (always for the
  /// partitioner's own target), else says why not in decision.held.
  void move_if_it_pays(const Situation& situation, const PartitionInput& input,
                       Decomposition proposed, MovePath path, const RedistributionCost& cost,
                       BalanceDecision& decision);
  /// The nodes' measures of `latest`, for a partitioner that reads them.
  [[nodiscard]] static NodeMeasures node_measures(const IntervalReport& latest);
  /// Alg. 5's verdict on the interval and the confirmations it has, the
  /// interval remembered as evidence; the blocks stay as they are.
  BalanceDecision judge(const IntervalReport& report, const Situation& situation);
  /// True, with decision.held saying so unless refining, when the evidence
  /// window's median times are unbalanced by no more than the threshold.
  bool evidence_balanced(const PartitionInput& input, bool refining,
                         BalanceDecision& decision) const;
  /// true when the window's medians may show a settled imbalance worth a move.
  [[nodiscard]] bool settled_imbalance_possible(const BalanceVerdict& verdict) const;
  /// Adds an interval to the evidence about the current blocks.
  void remember(const IntervalReport& report, const Situation& situation, bool unbalanced);
  /// Consecutive unbalanced intervals a move needs now.
  [[nodiscard]] int confirmations_needed() const;
  /// What the back-off adds to a "held" reason ("" at level 0).
  [[nodiscard]] std::string backoff_note() const;
  /// Intervals on a move's blocks before it is judged.
  [[nodiscard]] int intervals_to_check() const;
  /// Judges the last move once its blocks are measured, and moves the back-off
  /// level: up after a move that did not deliver, down after one that did or
  /// after a full window of steady speeds.
  void follow_up(const PartitionInput& input, BalanceDecision& decision);
  /// Keeps what a move about computation time predicts, to judge it once its
  /// blocks are measured.
  void watch_move(const RebalanceAssessment& predicted, const Situation& situation);
  /// At a back-off level: whether `proposed` takes less time per iteration
  /// than the current blocks summed over the speeds of the window before the
  /// last change and of the current one (true when either is unknown).
  [[nodiscard]] bool pays_across_load_states(const Situation& situation,
                                             const Decomposition& proposed) const;
  /// Goes back to the blocks before a move that made the iterations slower;
  /// `input` (what the blocks left measured) goes to the partitioner first.
  BalanceDecision undo_move(const Situation& situation, const PartitionInput& input,
                            BalanceDecision decision);

  /// Back-off levels beyond this add nothing: 8 x the confirmations and margin.
  static constexpr int kMaxBackoff = 3;
  /// A move that delivered less than this share of its predicted gain failed.
  static constexpr double kDeliveredEnough = 0.5;
  /// A move after which the iterations take longer than before by more than
  /// this share of the imbalance threshold did harm: it is undone.
  static constexpr double kHarmShareOfThreshold = 0.5;

  double imbalance_threshold_;
  double dedicated_threshold_;
  int confirm_;
  int window_;
  double margin_;
  double refine_threshold_;
  ImbalanceDetector detector_;
  std::deque<IntervalReport> evidence_;  // the last intervals on evidence_partition_
  Decomposition evidence_partition_;
  int unbalanced_streak_ = 0;                  // consecutive unbalanced intervals among them
  bool moved_ = false;                         // data moved since the process set began
  bool refined_ = false;                       // the last move answered a settled imbalance
  std::optional<MoveOutcome> unchecked_move_;  // the last move, its blocks not yet judged
  Decomposition blocks_before_move_;           // the blocks the last move left
  std::optional<Decomposition> undo_to_;       // blocks to go back to: the move did harm
  std::deque<IntervalReport> evidence_before_change_;  // the window the last change left
  int backoff_ = 0;                                    // failed moves not made good since
  int steady_intervals_ = 0;                           // consecutive intervals of steady speeds
  std::unique_ptr<Partitioner> partitioner_;
  bool reads_node_measures_;  // its descriptor's: PartitionInput::nodes filled
};

}  // namespace flexmpi
