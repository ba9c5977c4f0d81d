// The remaining-run prediction (run_predictor.hpp; thesis 5.4.2-5.4.3 on eq. 5.2).
#include "model/run_predictor.hpp"

#include <algorithm>
#include <iterator>
#include <span>

#include "model/reconfiguration_cost.hpp"

namespace flexmpi {

nlohmann::json RunPrediction::to_json() const {
  return {{"iterations", iterations},
          {"iteration",
           {{"computation", iteration.computation}, {"communication", iteration.communication}}},
          {"iterations_seconds", iterations_seconds},
          {"settling", settling},
          {"reconfiguration", reconfiguration},
          {"redistribution", redistribution},
          {"seconds", seconds}};
}

double correction_at(const std::map<int, double>& measured, int processes, bool rising) {
  // Many processes on few cores wait for each other more than the model
  // says, and more so the more there are (CG's collectives on the emulated
  // cluster): a correction learnt on one count is not another's.
  if (measured.empty()) return 1.0;
  const auto above = measured.lower_bound(processes);
  if (above == measured.end()) {
    // Beyond the largest measured count, the trend over the measured range
    // where it rises: kept flat, the correction let a goal-driven policy spawn one process at
    // a time on CG, each spawn predicted to meet the goal and each measured
    // no faster (corrections 1.31 on 10 processes ... 1.93 on 17). Never the
    // trend where it falls: that would promise a speed nobody measured.
    const auto& [low_count, low] = *measured.begin();
    const auto& [high_count, high] = *measured.rbegin();
    const double rise = rising && high_count > low_count
                            ? std::max(0.0, (high - low) / (high_count - low_count))
                            : 0.0;
    return high + rise * (processes - high_count);
  }
  if (above->first == processes || above == measured.begin()) return above->second;
  const auto below = std::prev(above);
  const double at = static_cast<double>(processes - below->first) / (above->first - below->first);
  return below->second + at * (above->second - below->second);
}

double offset_at(const std::map<int, double>& measured, int processes) {
  if (measured.empty()) return 0.0;
  return correction_at(measured, processes, false);
}

namespace {

// Eq. 5.1's communication term per iteration: the last interval's operations
// on the candidate's process count (5.3.2).
double communication_seconds(const RunState& state, int processes) {
  return state.communication != nullptr ? state.communication->per_iteration(processes) : 0.0;
}

// profiled_iteration with the replayed communication's difference given:
// eq. 5.2's computation term of the step's work, and the profiled overhead.
IterationSplit split_of(const ProfiledStep& step, double work_per_iteration, double speed,
                        double more_communication) {
  const double work = step.inefficiency * work_per_iteration;
  return {
      predict_interval({.work = std::span(&work, 1), .speeds = std::span(&speed, 1)}).computation,
      std::max(0.0, step.overhead_seconds + more_communication)};
}

// The remaining iterations' seconds, corrected, into `run` (iterations,
// iteration, iterations_seconds).
void predict_iterations(const RunState& state, double speed, int processes, RunPrediction& run) {
  run.iterations = static_cast<double>(std::max(0LL, state.remaining_iterations));
  const double remaining = run.iterations;
  const std::vector<ProfiledStep>& steps = state.profiled_steps;
  const double correction = correction_at(state.iteration_corrections, processes);
  if (steps.empty()) {
    const PredictedInterval modelled = modelled_iteration(state, speed, processes);
    run.iteration.computation = modelled.computation * correction;
    run.iteration.communication = modelled.communication * correction;
    run.iterations_seconds = remaining * modelled.total() * correction;
    return;
  }
  const double offset = offset_at(state.overhead_offsets, processes);
  // The replayed communication on the candidate's count, and on each profiled
  // count once: replayed per step, it was two replays of the interval's
  // operations for each of 60 steps of each candidate.
  const double candidate = communication_seconds(state, processes);
  std::map<int, double> profiled;
  const auto corrected = [&](const ProfiledStep& step, double work_per_iteration) {
    const auto [at, fresh] = profiled.try_emplace(step.processes, 0.0);
    if (fresh) at->second = communication_seconds(state, step.processes);
    const IterationSplit split = split_of(step, work_per_iteration, speed, candidate - at->second);
    return PredictedInterval{.computation = correction * split.computation,
                             .communication = std::max(0.0, split.overhead + offset)};
  };
  if (steps.size() == 1) {  // nothing profiled after the interval measured: like it
    run.iteration = corrected(steps.front(), state.work_per_iteration);
    run.iterations_seconds = remaining * run.iteration.total();
    return;
  }
  // The profiled intervals still to come, scaled to the iterations left (a
  // run as long as the profiled one leaves them as they are).
  double seconds = 0.0, iterations = 0.0;
  for (auto step = steps.begin() + 1; step != steps.end(); ++step) {
    const PredictedInterval one = corrected(*step, step->work_per_iteration);
    seconds += step->iterations * one.total();
    run.iteration.computation += step->iterations * one.computation;
    run.iteration.communication += step->iterations * one.communication;
    iterations += step->iterations;
  }
  run.iteration.computation /= iterations;
  run.iteration.communication /= iterations;
  run.iterations_seconds = seconds * remaining / iterations;
}

}  // namespace

PredictedInterval modelled_iteration(const RunState& state, double speed, int processes) {
  return predict_interval({.work = std::span(&state.work_per_iteration, 1),
                           .speeds = std::span(&speed, 1),
                           .communication = state.communication,
                           .processes = processes});
}

IterationSplit profiled_iteration(const RunState& state, const ProfiledStep& step,
                                  double work_per_iteration, double speed, int processes) {
  return split_of(
      step, work_per_iteration, speed,
      communication_seconds(state, processes) - communication_seconds(state, step.processes));
}

RunPrediction predict_run(const RunState& state, const RunChange& change) {
  const double speed = change.speed > 0.0 ? change.speed : state.current_speed;
  const int processes = state.processes + change.spawned - change.removed;
  RunPrediction run;
  predict_iterations(state, speed, processes, run);
  if (change.spawned > 0 || change.removed > 0) run.settling = state.change_settling_seconds;
  if (change.spawned > 0) {
    run.reconfiguration += spawn_cost(state.profile, change.spawned);
    run.redistribution +=
        state.redistribution_cost.predict(state.data_bytes * change.added_speed / speed);
  }
  if (change.removed > 0) {
    // The removed processes' share of the data moves to the others.
    run.reconfiguration += remove_cost(state.profile, change.removed);
    run.redistribution += state.redistribution_cost.predict(
        state.data_bytes * change.removed_speed / state.current_speed);
  }
  run.seconds = run.iterations_seconds + run.settling + run.reconfiguration + run.redistribution;
  return run;
}

}  // namespace flexmpi
