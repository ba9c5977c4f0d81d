// The node-class offers and the adapter to the remaining-run model (class_offers.hpp).
#include "policies/class_offers.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <numeric>
#include <utility>

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

double iteration_correction_at(const OfferSituation& situation, int processes) {
  return correction_at(situation.iteration_corrections, processes);
}

double overhead_offset_at(const OfferSituation& situation, int processes) {
  return offset_at(situation.overhead_offsets, processes);
}

RunState run_state(const OfferSituation& situation, const ClassOffers& offers) {
  return {.profile = situation.profile,
          .redistribution_cost = situation.redistribution_cost,
          .processes = static_cast<int>(situation.report.processes.size()),
          .remaining_iterations = situation.remaining_iterations,
          .work_per_iteration = offers.work_per_iteration,
          .current_speed = offers.current_speed,
          .data_bytes = situation.data_bytes,
          .communication = situation.communication,
          .iteration_corrections = situation.iteration_corrections,
          .overhead_offsets = situation.overhead_offsets,
          .change_settling_seconds = situation.change_settling_seconds,
          .profiled_steps = situation.profiled_steps};
}

namespace {

// The processes and speed the per-class change `delta` spawns or removes.
RunChange run_change(const ClassOffers& offers, const std::vector<int>& delta) {
  RunChange change{.speed = offers.current_speed};
  for (std::size_t c = 0; c < delta.size() && c < offers.offers.size(); ++c) {
    const double power = delta[c] * offers.offers[c].speed;
    change.speed += power;
    if (delta[c] > 0) {
      change.added_speed += power;
      change.spawned += delta[c];
    } else if (delta[c] < 0) {
      change.removed_speed -= power;
      change.removed -= delta[c];
    }
  }
  return change;
}

}  // namespace

CandidatePredictor::CandidatePredictor(const OfferSituation& situation, ClassOffers offers)
    : offers_(std::move(offers)), state_(run_state(situation, offers_)) {}

const RunPrediction& CandidatePredictor::predict(const std::vector<int>& delta) {
  auto found = predicted_.find(delta);
  if (found == predicted_.end()) {
    found = predicted_.emplace(delta, predict_run(state_, run_change(offers_, delta))).first;
  }
  return found->second;
}

PredictRemaining CandidatePredictor::callback() {
  return [this](const std::vector<int>& delta) { return seconds(delta); };
}

double CandidatePredictor::iteration_correction() const {
  return correction_at(state_.iteration_corrections, state_.processes);
}

double CandidatePredictor::overhead_offset() const {
  return offset_at(state_.overhead_offsets, state_.processes);
}

}  // namespace flexmpi
