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

nlohmann::json IntervalForecaster::settle(const IntervalReport& report) {
  double total = 0.0;
  for (const ProcessInterval& p : report.processes) total += p.metric;
  total_work_.push_back(total);
  const ProfiledInterval* profiled =
      work_profile_ ? work_profile_->find(report.index) : nullptr;
  if (profiled != nullptr && !report.processes.empty() && profiled->iterations > 0) {
    // Per iteration: the interval may be shorter than the profile's.
    profile_correction_.observe(
        profiled->total() / profiled->iterations * report.processes.front().iterations, total);
  }
  if (!pending_ || report.processes.empty()) return nlohmann::json::object();
  const Pending predicted = *std::exchange(pending_, std::nullopt);
  double computation = 0.0;
  double comm_seconds = report.processes.front().mpi;
  for (const ProcessInterval& p : report.processes) {
    computation = std::max(computation, p.computation());
    comm_seconds = std::min(comm_seconds, p.mpi);
  }
  const double redistribution = report.redistribution_seconds();
  lambda_.observe(predicted.uncorrected_communication, comm_seconds);
  const PredictedInterval& t = predicted.phases;
  return {{"prediction",
           {{"machine_profile", profile_.source},
            {"predicted",
             {{"computation", t.computation},
              {"communication", t.communication},
              {"redistribution", t.redistribution},
              {"total", t.total()},
              {"work", predicted.work}}},
            {"measured",
             {{"computation", computation},
              {"work", total},
              {"communication", comm_seconds},
              {"redistribution", redistribution}}},
            {"relative_error",
             {{"computation", relative_error(t.computation, computation)},
              {"communication", relative_error(t.communication, comm_seconds)},
              {"redistribution", relative_error(t.redistribution, redistribution)},
              {"work", relative_error(predicted.work, total)}}},
            {"lambda", lambda_.lambda()},
            {"work_source", predicted.work_source}}}};
}

void IntervalForecaster::forecast(const IntervalReport& report,
                                  std::span<const std::int64_t> measured_rows,
                                  std::span<const std::int64_t> next_rows, double busiest_bytes,
                                  std::vector<CommOpCount> ops) {
  pending_.reset();
  const std::size_t processes = report.processes.size();
  if (processes == 0 || measured_rows.size() != processes || next_rows.size() != processes ||
      total_work_.empty()) {
    return;
  }
  CurrentState state;
  Candidate same;
  for (std::size_t p = 0; p < processes; ++p) {
    const ProcessInterval& measured = report.processes[p];
    const double seconds = measured.computation();
    if (!(seconds > 0.0) || !(measured.metric > 0.0)) return;  // nothing to learn a speed from
    state.work.push_back(measured.metric);
    same.speeds.push_back(measured.metric / seconds);
  }
  state.rows.assign(measured_rows.begin(), measured_rows.end());
  const auto [work, source] =
      next_work(report.index + 1, report.processes.front().iterations);
  state.next_work = work;
  state.comm = std::move(ops);
  same.rows.assign(next_rows.begin(), next_rows.end());
  same.busiest_bytes = busiest_bytes;
  if (busiest_bytes > 0.0) same.busiest_messages = 1;
  // Communication before lambda, to learn lambda from what it missed.
  CurrentState uncorrected = state;
  uncorrected.lambda = 1.0;
  state.lambda = lambda_.lambda();
  const IntervalPredictor corrected_predictor(profile_, library_, std::move(state));
  const IntervalPredictor raw_predictor(profile_, library_, std::move(uncorrected));
  pending_ = Pending{corrected_predictor.predict(same), raw_predictor.predict(same).communication,
                     source, work};
}

}  // namespace flexmpi
