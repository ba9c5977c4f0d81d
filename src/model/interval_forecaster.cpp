#include "model/interval_forecaster.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "model/computation_model.hpp"

namespace flexmpi {
namespace {

// Predicted - measured, over measured (null when nothing was measured).
nlohmann::json relative_error(double predicted, double measured) {
  if (measured <= 0.0) return nullptr;
  return (predicted - measured) / measured;
}

}  // namespace

IntervalForecaster::IntervalForecaster(MachineProfile profile, MpiLibrary library,
                                       std::shared_ptr<const WorkProfile> work_profile)
    : profile_(std::move(profile)), library_(library), work_profile_(std::move(work_profile)) {}

std::pair<double, const char*> IntervalForecaster::next_work(int next, int iterations) const {
  if (work_profile_ && work_profile_->find(next) != nullptr && iterations > 0) {
    return {profiled_work(*work_profile_, next, iterations, profile_correction_), "profile"};
  }
  return {extrapolate(total_work_), "extrapolation"};
}

double IntervalForecaster::lambda(std::size_t processes) const {
  const auto found = lambda_.find(processes);
  return found == lambda_.end() ? 1.0 : found->second.lambda();
}

std::vector<double> IntervalForecaster::speeds() const {
  std::vector<double> medians;
  for (std::vector<double> samples : speed_history_) {
    if (samples.empty()) return {};
    const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
    std::nth_element(samples.begin(), middle, samples.end());
    medians.push_back(*middle);
  }
  return medians;
}

void IntervalForecaster::learn_speeds(const IntervalReport& report, bool new_blocks) {
  // Ranks keep their speed history across a change of the process set: the
  // processes that stay keep their ranks, spawned ones start without.
  speed_history_.resize(report.processes.size());
  for (std::size_t p = 0; p < report.processes.size(); ++p) {
    const ProcessInterval& measured = report.processes[p];
    const double seconds = measured.computation();
    if (!(seconds > 0.0) || !(measured.metric > 0.0)) continue;  // nothing to learn a speed from
    std::vector<double>& samples = speed_history_[p];
    if (new_blocks && !samples.empty()) continue;
    samples.push_back(measured.metric / seconds);
    if (samples.size() > kSpeedWindow) samples.erase(samples.begin());
  }
}

nlohmann::json IntervalForecaster::settle(const IntervalReport& report, MeasuredChange change) {
  double total = 0.0;
  for (const ProcessInterval& p : report.processes) total += p.metric;
  total_work_.push_back(total);
  // The first interval on new blocks is a disturbed one: neither the speeds
  // nor lambda learn from it (but a process with no speed yet takes its).
  const bool new_blocks = change.reconfiguration > 0.0 || change.redistribution > 0.0 ||
                          report.redistribution_seconds() > 0.0;
  learn_speeds(report, new_blocks);
  const ProfiledInterval* profiled = work_profile_ ? work_profile_->find(report.index) : nullptr;
  if (profiled != nullptr && !report.processes.empty() && profiled->iterations > 0) {
    // Per iteration: the interval may be shorter than the profile's.
    profile_correction_.observe(
        profiled->total() / profiled->iterations * report.processes.front().iterations, total);
  }
  // A prediction for another process count (the application spawned or
  // removed behind the loop's back) is no prediction of this interval.
  if (!pending_ || pending_->processes != report.processes.size()) {
    pending_.reset();
    return nlohmann::json::object();
  }
  const Pending predicted = *std::exchange(pending_, std::nullopt);
  double computation = 0.0;
  double comm_seconds = report.processes.front().mpi;
  for (const ProcessInterval& p : report.processes) {
    computation = std::max(computation, p.computation());
    comm_seconds = std::min(comm_seconds, p.mpi);
  }
  const double redistribution = report.redistribution_seconds() + change.redistribution;
  if (!new_blocks) {
    lambda_.try_emplace(predicted.processes, 3)
        .first->second.observe(predicted.raw.communication, comm_seconds);
  }
  MoveCorrection& correction = move_correction_[predicted.move];
  correction.redistribution.observe(predicted.raw.redistribution, redistribution);
  correction.reconfiguration.observe(predicted.raw.reconfiguration, change.reconfiguration);
  const PredictedInterval& t = predicted.corrected;
  return {{"prediction",
           {{"machine_profile", profile_.source},
            {"predicted",
             {{"computation", t.computation},
              {"communication", t.communication},
              {"redistribution", t.redistribution},
              {"reconfiguration", t.reconfiguration},
              {"total", t.total()},
              {"work", predicted.work}}},
            {"measured",
             {{"computation", computation},
              {"work", total},
              {"communication", comm_seconds},
              {"redistribution", redistribution},
              {"reconfiguration", change.reconfiguration}}},
            {"relative_error",
             {{"computation", relative_error(t.computation, computation)},
              {"communication", relative_error(t.communication, comm_seconds)},
              {"redistribution", relative_error(t.redistribution, redistribution)},
              {"reconfiguration", relative_error(t.reconfiguration, change.reconfiguration)},
              {"work", relative_error(predicted.work, total)}}},
            {"lambda", lambda(report.processes.size())},
            {"redistribution_lambda", correction.redistribution.lambda()},
            {"reconfiguration_lambda", correction.reconfiguration.lambda()},
            {"work_source", predicted.work_source}}}};
}

void IntervalForecaster::forecast(const IntervalReport& report,
                                  std::span<const std::int64_t> measured_rows, Candidate next,
                                  std::vector<CommOpCount> ops) {
  pending_.reset();
  const std::size_t processes = report.processes.size();
  if (processes == 0 || measured_rows.size() != processes || total_work_.empty()) return;
  if (next.speeds.empty()) next.speeds = speeds();
  if (next.speeds.size() != next.rows.size()) return;  // no speed known for every process
  CurrentState state;
  for (const ProcessInterval& measured : report.processes) state.work.push_back(measured.metric);
  state.rows.assign(measured_rows.begin(), measured_rows.end());
  const auto [work, source] = next_work(report.index + 1, report.processes.front().iterations);
  state.next_work = work;
  state.comm = std::move(ops);
  if (next.busiest_bytes > 0.0 && next.busiest_messages == 0) next.busiest_messages = 1;
  // The model alone (state.lambda = 1), then each correction on its phase:
  // the corrections learn from what the model alone missed.
  const IntervalPredictor predictor(profile_, library_, std::move(state));
  const MoveKind move = next.spawned > 0 ? kSpawn : next.removed > 0 ? kRemove : kRebalance;
  const PredictedInterval raw = predictor.predict(next);
  Pending pending{.raw = raw,
                  .corrected = raw,
                  .move = move,
                  .processes = next.rows.size(),
                  .work_source = source,
                  .work = work};
  const MoveCorrection& correction = move_correction_[move];
  pending.corrected.communication *= lambda(next.rows.size());
  pending.corrected.redistribution = correction.redistribution.correct(pending.raw.redistribution);
  pending.corrected.reconfiguration =
      correction.reconfiguration.correct(pending.raw.reconfiguration);
  pending_ = pending;
}

}  // namespace flexmpi
