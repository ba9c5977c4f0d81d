#include "balancing/load_balancer.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "balancing/evidence_measures.hpp"
#include "flexmpi/error.hpp"
#include "util/statistics.hpp"

namespace flexmpi {

namespace {

// The move the prediction model prices: the blocks now and proposed, the
// evidence's time per iteration, each block's work.
RebalanceCase rebalance_case(const LoadBalancer::Situation& situation, const PartitionInput& input,
                             const Decomposition& proposed) {
  RebalanceCase change;
  change.current = situation.current;
  change.proposed = proposed;
  change.remaining_iterations = situation.remaining_iterations;
  change.bytes_per_row = situation.bytes_per_row;
  for (std::size_t p = 0; p < input.computation_time.size(); ++p) {
    change.iteration_seconds.push_back(
        input.iterations[p] > 0 ? input.computation_time[p] / input.iterations[p] : 0.0);
    change.current_work.push_back(block_work(situation.current[p], situation.row_work));
    change.proposed_work.push_back(block_work(proposed[p], situation.row_work));
  }
  return change;
}

}  // namespace

nlohmann::json BalanceDecision::to_json() const {
  auto counts = [](const Decomposition& blocks) {
    nlohmann::json list = nlohmann::json::array();
    for (const RowBlock& block : blocks) list.push_back(block.count);
    return list;
  };
  nlohmann::json record = {
      // rebalance: data moved; held: Alg. 5 asked, the rules above kept the
      // blocks (see "held"); balanced: the partitioner proposed the same blocks.
      {"decision", changed             ? "rebalance"
                   : !held.empty()     ? "held"
                   : verdict.rebalance ? "balanced"
                                       : "none"},
      {"unbalanced", verdict.unbalanced},
      {"system_dedicated", verdict.system_dedicated},
      {"interference", to_string(verdict.interference)},
      {"confirmations", confirmations},
      {"confirmations_needed", confirmations_needed},
      {"partition_before", counts(before)},
      {"partition", counts(after)},
  };
  if (!fallback.empty()) record["fallback"] = fallback;
  if (undo) record["undo"] = true;
  if (!held.empty()) record["held"] = held;
  if (settled) record["settled_imbalance"] = true;
  if (assessment) record["model"] = assessment->to_json();
  if (move_outcome) record["move_outcome"] = move_outcome->to_json();
  record["backoff"] = backoff;
  return record;
}

double MoveOutcome::delivered() const {
  const double predicted_gain = before_seconds - predicted_seconds;
  return predicted_gain > 0.0 ? (before_seconds - measured_seconds) / predicted_gain : 1.0;
}

nlohmann::json MoveOutcome::to_json() const {
  return {{"before_seconds", before_seconds},
          {"predicted_seconds", predicted_seconds},
          {"measured_seconds", measured_seconds},
          {"delivered", delivered()}};
}

LoadBalancer::LoadBalancer(const Config& config)
    : imbalance_threshold_(config.imbalance_threshold),
      dedicated_threshold_(config.dedicated_threshold),
      confirm_(config.lb_confirm),
      window_(config.lb_window),
      margin_(config.lb_margin),
      refine_threshold_(config.lb_refine),
      detector_(config.imbalance_threshold, config.dedicated_threshold, config.k),
      partitioner_(make_partitioner(config.partitioner, config)),
      reads_node_measures_(find_partitioner(config.partitioner).reads_node_measures) {}

NodeMeasures LoadBalancer::node_measures(const IntervalReport& latest) {
  NodeMeasures nodes;
  for (const ProcessInterval& now : latest.processes) {
    nodes.host_id.push_back(now.host_id);
    nodes.node_cores.push_back(now.node_cores);
    nodes.node_idle_cpus.push_back(now.node_idle_cpus);
    nodes.node_communication_power.push_back(now.node_communication_power);
    nodes.node_caf.push_back(now.node_caf);
  }
  return nodes;
}

PartitionInput LoadBalancer::confirmed_input(const Situation& situation) const {
  // Per process, the median over the evidence window of the time per
  // iteration that the latest interval's work takes at each interval's speed
  // (metric per second), scaled to the latest interval's iterations: the
  // partitioners read one interval. A burst shorter than half the window
  // does not move the median. The median of the times themselves would lag
  // behind a workload that changes between intervals:
  // EpiGraph's work per block grows by a third a day while its epidemic
  // rises, and the median time of the last three days, set against the
  // latest day's work, made every growing block look faster than it is.
  // With the same work in every interval both are the same.
  const IntervalReport& latest = evidence_.back();
  PartitionInput input;
  input.global_size = situation.global_size;
  input.current = situation.current;
  input.row_work = situation.row_work;
  for (std::size_t p = 0; p < latest.processes.size(); ++p) {
    const ProcessInterval& now = latest.processes[p];
    const double iterations = now.iterations;
    const double work_now = iterations > 0 ? now.metric / iterations : 0.0;
    std::vector<double> per_iteration;
    for (const IntervalReport& report : evidence_) {
      const ProcessInterval& interval = report.processes[p];
      if (interval.iterations == 0) continue;
      const double seconds =
          interval.effective_computation(dedicated_threshold_) / interval.iterations;
      const double work = interval.metric / interval.iterations;
      // Without work measured (an empty block) the time is all there is.
      per_iteration.push_back(work > 0.0 && work_now > 0.0 ? seconds * work_now / work : seconds);
    }
    const double time = median(per_iteration) * iterations;
    input.computation_time.push_back(time);
    input.iterations.push_back(iterations);
    input.wall_time.push_back(now.wall);
    input.cpu_time.push_back(now.cpu);
    // computeFLOPS (Alg. 5 line 34): metric per second of computation time,
    // on a shared PE of the share of it the process got.
    input.speed.push_back(time > 0.0 ? now.metric / time : 0.0);
    input.work.push_back(iterations > 0 ? now.metric / iterations : 0.0);
  }
  if (reads_node_measures_) input.nodes = node_measures(latest);
  return input;
}

std::vector<double> LoadBalancer::evidence_speeds() const {
  return median_speeds(evidence_, dedicated_threshold_);
}

bool LoadBalancer::pays_across_load_states(const Situation& situation,
                                           const Decomposition& proposed) const {
  const std::vector<double> before = median_speeds(evidence_before_change_, dedicated_threshold_);
  const std::vector<double> now = median_speeds(evidence_, dedicated_threshold_);
  const std::size_t p = situation.current.size();
  if (before.size() != p || now.size() != p || proposed.size() != p) return true;
  const auto iteration_seconds = [&](const Decomposition& blocks,
                                     const std::vector<double>& speeds) {
    return slowest_block_seconds(blocks, speeds, situation.row_work);
  };
  const auto positive = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x > 0.0; });
  };
  if (!positive(before) || !positive(now)) return true;  // an empty block: no speed to judge by
  return iteration_seconds(proposed, before) + iteration_seconds(proposed, now) <
         iteration_seconds(situation.current, before) + iteration_seconds(situation.current, now);
}

bool LoadBalancer::settled_imbalance_possible(const BalanceVerdict& verdict) const {
  // Only where Alg. 5 found the interval balanced, on a full window of
  // intervals on the current blocks whose every process had its PE to itself:
  // the CPU-share correction of a shared PE is too noisy to refine on (a
  // window of three preempted intervals out of five moved CG's rows, and the
  // next window moved them back). Once per move of Alg. 5: the refinement
  // corrects a move made from two intervals; chasing the few-percent drift
  // of this VM's vCPUs afterwards moved CG's rows every window.
  if (refine_threshold_ <= 0.0 || window_ <= 1 || refined_ || verdict.unbalanced ||
      evidence_.size() != static_cast<std::size_t>(window_)) {
    return false;
  }
  return std::all_of(evidence_.begin(), evidence_.end(), [&](const IntervalReport& report) {
    return std::all_of(
        report.processes.begin(), report.processes.end(), [&](const ProcessInterval& p) {
          return p.node_oversubscribed || p.shared_fraction() <= dedicated_threshold_;
        });
  });
}

void LoadBalancer::remember(const IntervalReport& report, const Situation& situation,
                            bool unbalanced) {
  // Evidence is only about the blocks it was measured on.
  if (situation.current != evidence_partition_) {
    evidence_.clear();
    unbalanced_streak_ = 0;
    evidence_partition_ = situation.current;
  }
  evidence_.push_back(report);
  if (evidence_.size() > static_cast<std::size_t>(window_)) evidence_.pop_front();
  unbalanced_streak_ = unbalanced ? unbalanced_streak_ + 1 : 0;
}

bool LoadBalancer::evidence_balanced(const PartitionInput& input, bool refining,
                                     BalanceDecision& decision) const {
  const double evidence_imbalance = imbalance_of(input.computation_time);
  // Under the refinement threshold the blocks are as good as the noise lets us know.
  if (evidence_imbalance > (refining ? refine_threshold_ : imbalance_threshold_)) return false;
  if (!refining) {
    decision.held = fmt::format(
        "the median times of the last {} intervals are {:.0f} % unbalanced, under the threshold",
        evidence_.size(), 100.0 * evidence_imbalance);
  }
  return true;
}

BalanceDecision LoadBalancer::judge(const IntervalReport& report, const Situation& situation) {
  if (report.processes.size() != situation.current.size()) {
    throw Error(Errc::internal, "interval report and decomposition differ in process count");
  }
  std::vector<double> computation, wall, cpu;
  for (const ProcessInterval& p : report.processes) {
    computation.push_back(p.effective_computation(dedicated_threshold_));
    wall.push_back(p.wall);
    cpu.push_back(p.cpu);
  }
  BalanceDecision decision;
  decision.before = situation.current;
  decision.after = situation.current;
  decision.verdict = detector_.evaluate(computation, wall, cpu);
  remember(report, situation, decision.verdict.unbalanced);
  // The first move of a process set needs lb_confirm intervals; moving a
  // partition that was already balanced on measurements needs the majority
  // of a full window, so that a speed change shorter than that (the host
  // moving a slow phase from one vCPU to the other) does not move it back and forth.
  decision.confirmations_needed = confirmations_needed();
  decision.confirmations = std::min(unbalanced_streak_, decision.confirmations_needed);
  return decision;
}

int LoadBalancer::confirmations_needed() const {
  // The first move of a process set needs lb_confirm intervals; moving a
  // partition that was already balanced on measurements needs the majority of a
  // full window, so that a speed change shorter than that (the host moving a
  // slow phase from one vCPU to the other) does not move it back and forth.
  // Each back-off level doubles it (do no harm).
  return (moved_ ? std::max(confirm_, window_ / 2 + 1) : confirm_) << backoff_;
}

std::string LoadBalancer::backoff_note() const {
  if (backoff_ == 0) return "";
  return fmt::format(", x{}: backing off after moves that did not deliver their gain",
                     1 << backoff_);
}

int LoadBalancer::intervals_to_check() const {
  // As many as a move after a move needs: the same evidence judges both.
  return std::min(window_, std::max(confirm_, window_ / 2 + 1));
}

void LoadBalancer::follow_up(const PartitionInput& input, BalanceDecision& decision) {
  const int window = static_cast<int>(evidence_.size());
  if (unchecked_move_ && window >= intervals_to_check()) {
    MoveOutcome outcome = *unchecked_move_;
    unchecked_move_.reset();
    outcome.measured_seconds = slowest_wall_per_iteration(evidence_);
    const double harm = 1.0 + kHarmShareOfThreshold * imbalance_threshold_;
    // Slower iterations are the move's doing only if the blocks it left would
    // run faster at the speeds measured since: an outside load that slows
    // every rank alike (a busy shared machine) makes the wall time longer
    // whatever the blocks, and undoing on it alone took a 2:1 split back to
    // the even one, which the next window moved again, over and over. An
    // empty block has no speed to judge by: the wall time decides alone.
    const std::vector<double> speeds = evidence_speeds();
    const bool blocks_left_faster =
        std::any_of(speeds.begin(), speeds.end(), [](double speed) { return speed <= 0.0; }) ||
        slowest_block_seconds(input.current, speeds, input.row_work) >
            slowest_block_seconds(blocks_before_move_, speeds, input.row_work) * harm;
    if (outcome.measured_seconds > outcome.before_seconds * harm && blocks_left_faster) {
      undo_to_ = blocks_before_move_;
    }
    if (outcome.delivered() < kDeliveredEnough) {
      backoff_ = std::min(backoff_ + 1, kMaxBackoff);
    } else if (backoff_ > 0) {
      --backoff_;
    }
    steady_intervals_ = 0;
    decision.move_outcome = outcome;
  }
  // Steady speeds: in a full window on these blocks, every process's time per
  // iteration (at the latest interval's work) varies by less than half the
  // imbalance threshold. A window of them undoes one back-off level.
  bool steady = backoff_ > 0 && window >= window_;
  for (std::size_t p = 0; steady && p < input.computation_time.size(); ++p) {
    std::vector<double> times;
    for (const IntervalReport& report : evidence_) {
      const ProcessInterval& interval = report.processes[p];
      if (interval.iterations > 0 && interval.metric > 0.0) {
        times.push_back(interval.effective_computation(dedicated_threshold_) / interval.metric);
      }
    }
    const auto [lowest, highest] = std::minmax_element(times.begin(), times.end());
    steady = !times.empty() && *highest - *lowest <= 0.5 * imbalance_threshold_ * median(times);
  }
  steady_intervals_ = steady ? steady_intervals_ + 1 : 0;
  if (steady_intervals_ >= window_) {
    --backoff_;
    steady_intervals_ = 0;
  }
  decision.backoff = backoff_;
  decision.confirmations_needed = confirmations_needed();
  decision.confirmations = std::min(unbalanced_streak_, decision.confirmations_needed);
}

BalanceDecision LoadBalancer::undo_move(const Situation& situation, const PartitionInput& input,
                                        BalanceDecision decision) {
  // What the blocks being left measured stays known to the partitioner: an
  // FPM model that never saw them proposed the same blocks again a few
  // intervals later, and they were undone again (the memory-cliff test).
  partitioner_->observe(input);
  Decomposition blocks = std::move(*undo_to_);
  undo_to_.reset();
  if (situation.remaining_iterations <= 0 || blocks.size() != situation.current.size() ||
      !covers_exactly(blocks, situation.global_size)) {
    return decision;
  }
  // The blocks that ran faster come back at once: no confirmation, and no
  // cost test (moving forth paid, moving back costs the same). Not judged
  // again: the back-off level the harm raised asks more of the next move.
  evidence_before_change_ = evidence_;
  decision.after = std::move(blocks);
  decision.changed = true;
  decision.undo = true;
  decision.held.clear();
  moved_ = true;
  return decision;
}

BalanceDecision LoadBalancer::evaluate(const IntervalReport& report, const Situation& situation,
                                       const RedistributionCost& cost) {
  BalanceDecision decision = judge(report, situation);
  // A refinement is never an Alg. 5 rebalance: it needs a balanced interval.
  const bool refining = settled_imbalance_possible(decision.verdict);
  const PartitionInput input = confirmed_input(situation);
  follow_up(input, decision);
  if (undo_to_) return undo_move(situation, input, std::move(decision));
  const std::optional<bool> by_target = partitioner_asked(input, situation, refining, decision);
  if (!by_target) return decision;
  PartitionResult result = partitioner_->partition(input);
  if (!covers_exactly(result.blocks, situation.global_size) ||
      result.blocks.size() != situation.current.size()) {
    // Never hand a partition that does not add up to the redistribution.
    decision.fallback = "partitioner '" + std::string(partitioner_->name()) +
                        "' returned blocks that do not cover the rows: partition kept";
    return decision;
  }
  decision.fallback = result.fallback;
  if (result.blocks == situation.current ||
      (*by_target && departure(situation.current, result.blocks, situation.global_size) <=
                         imbalance_threshold_)) {
    return decision;
  }
  move_if_it_pays(situation, input, std::move(result.blocks), {*by_target, refining}, cost,
                  decision);
  return decision;
}

std::optional<bool> LoadBalancer::partitioner_asked(const PartitionInput& input,
                                                    const Situation& situation, bool refining,
                                                    BalanceDecision& decision) const {
  const int needed = decision.confirmations_needed;
  // A partitioner with a target of its own (a communication term) is asked
  // only once a full window was measured on the current blocks, also when
  // Alg. 5 finds the times unbalanced: one that keeps the first rates it
  // sees as its benchmark ratings would take a run's first, unrepresentative
  // intervals (asked after lb_confirm intervals, such a partitioner rated a
  // half-speed rank like the full-speed one in a CI run).
  const bool own_target = partitioner_->targets_unequal_times(input);
  const bool full_window = evidence_.size() >= static_cast<std::size_t>(std::max(needed, window_));
  const bool target_due = own_target && full_window;
  if (!decision.verdict.rebalance && !refining && !target_due) return std::nullopt;
  if (own_target && !full_window) {  // not even an Alg. 5 imbalance asks it earlier
    decision.held = "the partitioner's own target is asked after a full window (FLEXMPI_LB_WINDOW)";
    return std::nullopt;
  }
  if (situation.remaining_iterations <= 0) {
    if (!refining && !target_due) decision.held = "no iteration left to use a new partition";
    return std::nullopt;
  }
  if (!refining && !target_due && decision.confirmations < needed) {
    decision.held =
        "unbalanced in " + std::to_string(decision.confirmations) + " of the " +
        std::to_string(needed) + " consecutive intervals a move needs" +
        (moved_ ? " after a move (FLEXMPI_LB_WINDOW / 2 + 1)" : " (FLEXMPI_LB_CONFIRM)") +
        backoff_note();
    return std::nullopt;
  }
  // Alg. 5's path (times unbalanced in the evidence too) moves to whatever
  // the partitioner proposes; the target's path only when a block departs.
  const bool times_unbalanced =
      (decision.verdict.rebalance || refining) && !evidence_balanced(input, refining, decision);
  if (!times_unbalanced && !target_due) return std::nullopt;
  if (!times_unbalanced) decision.held.clear();
  return !times_unbalanced;
}

void LoadBalancer::move_if_it_pays(const Situation& situation, const PartitionInput& input,
                                   Decomposition proposed, MovePath path,
                                   const RedistributionCost& cost, BalanceDecision& decision) {
  decision.settled = path.refining;
  decision.assessment = assess_rebalance(rebalance_case(situation, input, proposed), cost,
                                         margin_ * static_cast<double>(1 << backoff_));
  // The model prices computation and data movement only; the gain a
  // communication term aims at is outside it, so it does not veto that target.
  if (!decision.assessment->pays && !path.by_target) {
    decision.held = "the move does not pay (FLEXMPI_LB_MARGIN)" + backoff_note();
    return;
  }
  if (backoff_ > 0 && !path.by_target && !pays_across_load_states(situation, proposed)) {
    decision.held = "the move would not pay over the load before the last change and now together" +
                    backoff_note();
    return;
  }
  evidence_before_change_ = evidence_;
  decision.after = std::move(proposed);
  decision.changed = true;
  moved_ = true;
  refined_ = path.refining;
  if (!path.by_target) watch_move(*decision.assessment, situation);
}

void LoadBalancer::watch_move(const RebalanceAssessment& predicted, const Situation& situation) {
  // Judged later only where the prediction is about computation time and
  // large enough to tell from the noise (a refinement's few percent is not).
  const double predicted_gain =
      predicted.iteration_seconds_now - predicted.iteration_seconds_balanced;
  const double before = slowest_wall_per_iteration(evidence_);
  if (before > 0.0 &&
      predicted_gain >= 0.5 * imbalance_threshold_ * predicted.iteration_seconds_now) {
    unchecked_move_ = MoveOutcome{before, before - predicted_gain, 0.0};
    blocks_before_move_ = situation.current;
  }
}

}  // namespace flexmpi
