#include "policies/remaining_time_model.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>
#include <numeric>
#include <utility>

#include "model/reconfiguration_cost.hpp"

namespace flexmpi {

std::vector<std::string> ClassOffers::spawn_classes(const std::vector<int>& delta) const {
  std::vector<std::string> classes;
  for (std::size_t c = 0; c < offers.size() && c < delta.size(); ++c) {
    for (int k = 0; k < delta[c]; ++k) classes.push_back(offers[c].name);
  }
  return classes;
}

std::vector<std::string> ClassOffers::remove_classes(const std::vector<int>& delta) const {
  std::vector<std::string> classes;
  for (std::size_t c = 0; c < offers.size() && c < delta.size(); ++c) {
    for (int k = 0; k < -delta[c]; ++k) classes.push_back(offers[c].name);
  }
  return classes;
}

nlohmann::json ClassOffers::to_json() const {
  nlohmann::json classes = nlohmann::json::array();
  for (const NodeClassOffer& o : offers) {
    classes.push_back({{"name", o.name},
                       {"speed", o.speed},
                       {"cost", o.cost},
                       {"watts", o.watts},
                       {"free_pes", o.free_pes},
                       {"running", o.running},
                       {"removable", o.removable}});
  }
  return {{"offers", std::move(classes)},
          {"work_per_iteration", work_per_iteration},
          {"current_speed", current_speed}};
}

int spawn_headroom(const OfferSituation& situation) {
  int headroom = 0;
  for (const NodeClassStatus& c : situation.resources.classes) {
    headroom += std::max(0, c.granted_pes - c.running);
  }
  const int nprocs = static_cast<int>(situation.report.processes.size());
  if (situation.max_procs > 0) headroom = std::min(headroom, situation.max_procs - nprocs);
  return headroom;
}

std::optional<ClassOffers> build_class_offers(const OfferSituation& situation) {
  const ResourceView& view = situation.resources;
  const auto& processes = situation.report.processes;

  // Measured: the work of one iteration and each process's speed, summed per class.
  ClassOffers plan;
  std::map<std::string, std::pair<double, int>> per_class;  // sum of speeds, processes
  for (std::size_t p = 0; p < processes.size(); ++p) {
    const ProcessInterval& process = processes[p];
    if (process.iterations > 0) plan.work_per_iteration += process.metric / process.iterations;
    const double speed = process.speed(situation.dedicated_threshold);
    if (!(speed > 0.0)) continue;
    plan.current_speed += speed;
    if (p < view.process_classes.size() && !view.process_classes[p].empty()) {
      auto& entry = per_class[view.process_classes[p]];
      entry.first += speed;
      ++entry.second;
    }
  }
  if (!(plan.work_per_iteration > 0.0) || !(plan.current_speed > 0.0)) return std::nullopt;

  // The speed of a PE of relative speed 1, from the fastest measured class;
  // with no class known, the fastest process.
  double unit_speed = 0.0;
  for (const auto& [name, entry] : per_class) {
    const double mean = entry.first / entry.second;
    unit_speed = std::max(unit_speed, mean / relative_speed(situation.node_classes, name));
  }
  if (unit_speed <= 0.0) {
    for (const ProcessInterval& process : processes) {
      unit_speed = std::max(unit_speed, process.speed(situation.dedicated_threshold));
    }
  }

  for (const NodeClassStatus& c : view.classes) {
    NodeClassOffer offer;
    offer.name = c.name;
    const auto measured = per_class.find(c.name);
    offer.speed = measured != per_class.end()
                      ? measured->second.first / measured->second.second
                      : relative_speed(situation.node_classes, c.name) * unit_speed;
    offer.cost = c.cost;
    if (const auto described = find_node_class(situation.node_classes, c.name)) {
      offer.watts = described->watts;
    }
    offer.free_pes = std::max(0, c.granted_pes - c.running);
    offer.running = c.running;
    offer.removable = std::min(c.removable, c.running);
    plan.offers.push_back(std::move(offer));
  }
  // The headroom goes to the fastest classes first, as plan_hpmp takes them
  // (class order breaks speed ties, as there).
  int headroom = std::max(0, spawn_headroom(situation));
  std::vector<std::size_t> order(plan.offers.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return plan.offers[a].speed > plan.offers[b].speed;
  });
  for (const std::size_t c : order) {
    plan.offers[c].free_pes = std::min(plan.offers[c].free_pes, headroom);
    headroom -= plan.offers[c].free_pes;
  }
  return plan;
}

double correction_at(const std::map<int, double>& measured, int processes, bool rising) {
  // Many processes on few cores wait for each other more than the model
  // says, and more so the more there are (CG's collectives on the emulated
  // cluster): a correction learnt on one count is not another's.
  if (measured.empty()) return 1.0;
  const auto above = measured.lower_bound(processes);
  if (above == measured.end()) {
    // Beyond the largest measured count, the trend over the measured range
    // where it rises: kept flat, the correction let AMP spawn one process at
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

double iteration_correction_at(const OfferSituation& situation, int processes) {
  return correction_at(situation.iteration_corrections, processes);
}

double overhead_offset_at(const OfferSituation& situation, int processes) {
  if (situation.overhead_offsets.empty()) return 0.0;
  return correction_at(situation.overhead_offsets, processes, false);
}

namespace {

// Eq. 5.1's communication term: the last interval's operations on the
// candidate's process count (5.3.2).
double communication_seconds(const OfferSituation& situation, int processes) {
  return situation.communication != nullptr ? situation.communication->per_iteration(processes)
                                            : 0.0;
}

// profiled_iteration with the replayed communication's difference given.
IterationSplit split_of(const ProfiledStep& step, double work_per_iteration, double speed,
                        double more_communication) {
  return {step.inefficiency * work_per_iteration / speed,
          std::max(0.0, step.overhead_seconds + more_communication)};
}

// The per-iteration term of the remaining run, corrected.
double remaining_iterations_seconds(const OfferSituation& situation, const ClassOffers& offers,
                                    double speed, int processes) {
  const double remaining = static_cast<double>(std::max(0LL, situation.remaining_iterations));
  const std::vector<ProfiledStep>& steps = situation.profiled_steps;
  if (steps.empty()) {
    return remaining * modelled_iteration_seconds(situation, offers, speed, processes) *
           iteration_correction_at(situation, processes);
  }
  const double computation = iteration_correction_at(situation, processes);
  const double offset = overhead_offset_at(situation, processes);
  // The replayed communication on the candidate's count, and on each profiled
  // count once: replayed per step, it was two replays of the interval's
  // operations for each of 60 steps of each candidate.
  const double candidate = communication_seconds(situation, processes);
  std::map<int, double> profiled;
  const auto corrected = [&](const ProfiledStep& step, double work_per_iteration) {
    const auto [at, fresh] = profiled.try_emplace(step.processes, 0.0);
    if (fresh) at->second = communication_seconds(situation, step.processes);
    const IterationSplit split = split_of(step, work_per_iteration, speed, candidate - at->second);
    return computation * split.computation + std::max(0.0, split.overhead + offset);
  };
  if (steps.size() == 1) {  // nothing profiled after the interval measured: like it
    return remaining * corrected(steps.front(), offers.work_per_iteration);
  }
  // The profiled intervals still to come, scaled to the iterations left (a
  // run as long as the profiled one leaves them as they are).
  double seconds = 0.0, iterations = 0.0;
  for (auto step = steps.begin() + 1; step != steps.end(); ++step) {
    seconds += step->iterations * corrected(*step, step->work_per_iteration);
    iterations += step->iterations;
  }
  return seconds * remaining / iterations;
}

}  // namespace

IterationSplit profiled_iteration(const OfferSituation& situation, const ProfiledStep& step,
                                  double work_per_iteration, double speed, int processes) {
  return split_of(step, work_per_iteration, speed,
                  communication_seconds(situation, processes) -
                      communication_seconds(situation, step.processes));
}

double modelled_iteration_seconds(const OfferSituation& situation, const ClassOffers& offers,
                                  double speed, int processes) {
  return offers.work_per_iteration / speed + communication_seconds(situation, processes);
}

double predict_remaining(const OfferSituation& situation, const ClassOffers& offers,
                         const std::vector<int>& delta) {
  double speed = offers.current_speed;
  double added = 0.0, removed = 0.0;
  int spawned = 0, gone = 0;
  for (std::size_t c = 0; c < delta.size() && c < offers.offers.size(); ++c) {
    const double power = delta[c] * offers.offers[c].speed;
    speed += power;
    if (delta[c] > 0) {
      added += power;
      spawned += delta[c];
    } else if (delta[c] < 0) {
      removed -= power;
      gone -= delta[c];
    }
  }
  if (!(speed > 0.0)) speed = offers.current_speed;  // unreachable for valid offers
  const int processes = static_cast<int>(situation.report.processes.size()) + spawned - gone;
  double seconds = remaining_iterations_seconds(situation, offers, speed, processes);
  if (spawned > 0 || gone > 0) seconds += situation.change_settling_seconds;
  if (spawned > 0) {
    seconds += spawn_cost(situation.profile, spawned);
    seconds += situation.redistribution_cost.predict(situation.data_bytes * added / speed);
  }
  if (gone > 0) {
    // The removed processes' share of the data moves to the others.
    seconds += remove_cost(situation.profile, gone);
    seconds += situation.redistribution_cost.predict(situation.data_bytes * removed /
                                                     offers.current_speed);
  }
  return seconds;
}

}  // namespace flexmpi
