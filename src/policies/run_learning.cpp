#include "policies/run_learning.hpp"

#include <algorithm>

#include "util/statistics.hpp"

namespace flexmpi {
namespace {

// The median of each count's window.
std::map<int, double> medians(const std::map<int, std::vector<double>>& windows) {
  std::map<int, double> result;
  for (const auto& [processes, window] : windows) result[processes] = median(window);
  return result;
}

// Appends `value` and keeps the latest `window` values.
void keep_latest(std::vector<double>& values, double value, std::size_t window) {
  values.push_back(value);
  if (values.size() > window) values.erase(values.begin());
}

// The interval's seconds per iteration, the least any process spent in MPI
// per iteration, and the offers; nullopt without a measurement.
struct MeasuredIteration {
  double seconds = 0.0;
  double overhead = 0.0;
  ClassOffers offers;
};

std::optional<MeasuredIteration> measure(const OfferSituation& situation, double interval) {
  if (situation.report.processes.empty()) return std::nullopt;
  const int iterations = situation.report.processes.front().iterations;
  if (iterations <= 0 || !(interval > 0.0)) return std::nullopt;
  std::optional<ClassOffers> offers = build_class_offers(situation);
  if (!offers) return std::nullopt;
  const double least_mpi = situation.report.shortest(&ProcessInterval::mpi);
  return MeasuredIteration{interval / iterations, least_mpi / iterations, std::move(*offers)};
}

}  // namespace

std::optional<double> measured_over_modelled(const OfferSituation& situation, double interval) {
  // Modelled: the balanced iteration the prediction assumes, so that what a
  // settled interval keeps of imbalance (the balancer's threshold, noise)
  // is corrected too. (Measured against the slowest process's computation
  // instead, the correction left the predictions 6 % short of the very
  // interval measured on the emulated cluster.)
  const std::optional<MeasuredIteration> measured = measure(situation, interval);
  if (!measured) return std::nullopt;
  const int processes = static_cast<int>(situation.report.processes.size());
  const ClassOffers& offers = measured->offers;
  double seconds = measured->seconds, modelled = 0.0;
  if (situation.profiled_steps.empty()) {
    modelled =
        modelled_iteration(run_state(situation, offers), offers.current_speed, processes).total();
  } else {
    seconds -= measured->overhead;
    modelled = profiled_iteration(run_state(situation, offers), situation.profiled_steps.front(),
                                  offers.work_per_iteration, offers.current_speed, processes)
                   .computation;
  }
  if (!(modelled > 0.0) || !(seconds > 0.0)) return std::nullopt;
  return seconds / modelled;
}

std::optional<double> overhead_beyond_modelled(const OfferSituation& situation, double interval) {
  if (situation.profiled_steps.empty()) return std::nullopt;
  const std::optional<MeasuredIteration> measured = measure(situation, interval);
  if (!measured) return std::nullopt;
  const ClassOffers& offers = measured->offers;
  const double modelled =
      profiled_iteration(run_state(situation, offers), situation.profiled_steps.front(),
                         offers.work_per_iteration, offers.current_speed,
                         static_cast<int>(situation.report.processes.size()))
          .overhead;
  return measured->overhead - modelled;
}

void SettlingCost::observe(double interval_seconds, int iterations, bool after_change) {
  if (after_change) {
    pending_seconds_ = interval_seconds;
    pending_iterations_ = iterations;
    return;
  }
  if (pending_iterations_ <= 0 || iterations <= 0) return;
  // On the emulated cluster the interval after a spawn took 0.15-1.2 s more
  // than the next one, and a model that did not count it spawned one process
  // at a time to close 2 % gaps, each spawn costing more than it gained.
  const double settled = interval_seconds / iterations * pending_iterations_;
  keep_latest(excess_, std::max(0.0, pending_seconds_ - settled), kWindow);
  pending_seconds_ = 0.0;
  pending_iterations_ = 0;
}

double SettlingCost::seconds() const { return excess_.empty() ? 0.0 : median(excess_); }

nlohmann::json SettlingCost::to_json() const {
  return {{"pending_seconds", pending_seconds_},
          {"pending_iterations", pending_iterations_},
          {"excess_seconds", excess_}};
}

void SettlingCost::from_json(const nlohmann::json& state) {
  pending_seconds_ = state.value("pending_seconds", 0.0);
  pending_iterations_ = state.value("pending_iterations", 0);
  excess_ = state.value("excess_seconds", std::vector<double>{});
}

void RunLearning::observe(const IntervalReport& report, bool after_change) {
  interval_ = report.longest(&ProcessInterval::wall);
  after_change_ = after_change;
  representative_ = blocks_balanced_ && !after_change && !(report.redistribution_seconds() > 0.0);
  processes_ = static_cast<int>(report.processes.size());
  if (after_change) {
    // The interval after a spawn ran the newcomers on blocks from their
    // class's nominal speed (two of 13 processes 30 % slower than the rest):
    // learnt from, it made 13 processes look 30 % slower than they ran
    // once balanced, and the goal-driven policy then saw no spawn worth making.
    blocks_balanced_ = false;
  }
  const int iterations = report.processes.empty() ? 0 : report.processes.front().iterations;
  // What the interval took on the run's clock, without the spawns and data
  // the model prices itself: beyond the interval, the time the application
  // spent between the intervals (CG's newcomers joining and the sums every
  // process recomputes after a spawn, 1.5-2.8 s of a 27-30 s run).
  const double clock = report.run_seconds();
  double advance = interval_;
  if (clock > 0.0 && run_seconds_ > 0.0) {
    advance = std::max(interval_, clock - run_seconds_ - report.reconfiguration_seconds() -
                                      report.redistribution_seconds());
  }
  run_seconds_ = clock;
  settling_.observe(advance, iterations, after_change);
}

void RunLearning::learn_and_apply(OfferSituation& situation) {
  // The model (work / summed speeds + replayed communication) leaves out
  // what 8-18 processes sharing 2 cores wait for each other, and more so
  // the more there are (5.3.2's lambda, for the whole iteration, per count).
  if (representative_) {
    if (const std::optional<double> ratio = measured_over_modelled(situation, interval_)) {
      keep_latest(corrections_[processes_], *ratio, kWindow);
    }
    if (const auto offset = overhead_beyond_modelled(situation, interval_)) {
      keep_latest(overhead_offsets_[processes_], *offset, kWindow);
    }
  }
  situation.iteration_corrections = iteration_corrections();
  situation.overhead_offsets = medians(overhead_offsets_);
  situation.change_settling_seconds = settling_.seconds();
}

bool RunLearning::ready() const {
  return blocks_balanced_ && !after_change_ && corrections_.contains(processes_);
}

void RunLearning::after_balancing(bool awaiting_confirmation) {
  blocks_balanced_ = blocks_balanced_ || !awaiting_confirmation;
}

std::map<int, double> RunLearning::iteration_corrections() const { return medians(corrections_); }

nlohmann::json RunLearning::to_json() const {
  return {{"blocks_balanced", blocks_balanced_},
          {"iteration_corrections", corrections_},
          {"overhead_offsets", overhead_offsets_},
          {"settling", settling_.to_json()},
          {"run_seconds", run_seconds_}};
}

void RunLearning::from_json(const nlohmann::json& state) {
  blocks_balanced_ = state.value("blocks_balanced", false);
  corrections_ = state.value("iteration_corrections", std::map<int, std::vector<double>>{});
  overhead_offsets_ = state.value("overhead_offsets", std::map<int, std::vector<double>>{});
  if (state.contains("settling")) settling_.from_json(state["settling"]);
  run_seconds_ = state.value("run_seconds", 0.0);
}

}  // namespace flexmpi
