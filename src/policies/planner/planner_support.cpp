#include "policies/planner/planner_support.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "flexmpi/error.hpp"

namespace flexmpi::planning {
namespace {

PlannedCandidate make_candidate(std::span<const NodeClassOffer> offers, Counts delta,
                                double predicted_seconds, std::string step) {
  PlannedCandidate candidate;
  for (std::size_t c = 0; c < delta.size(); ++c) {
    candidate.processes += delta[c];
    candidate.power += delta[c] * offers[c].speed;
    candidate.cost += delta[c] * offers[c].cost;
    candidate.watts += delta[c] * offers[c].watts;
  }
  candidate.delta = std::move(delta);
  candidate.predicted_seconds = predicted_seconds;
  candidate.step = std::move(step);
  return candidate;
}

}  // namespace

[[noreturn]] void invalid(std::string_view policy, const std::string& message) {
  throw Error(Errc::invalid_argument, fmt::format("{}: {}", policy, message));
}

bool finite_at_least(double value, double minimum) {
  return std::isfinite(value) && value >= minimum;
}

void validate_offers(std::span<const NodeClassOffer> offers, std::string_view policy) {
  for (std::size_t c = 0; c < offers.size(); ++c) {
    const NodeClassOffer& offer = offers[c];
    const std::string which = fmt::format("offers[{}] ('{}')", c, offer.name);
    if (!std::isfinite(offer.speed) || offer.speed <= 0.0) {
      invalid(policy,
              fmt::format("{}.speed: expected a finite value > 0, got {}", which, offer.speed));
    }
    if (!finite_at_least(offer.cost, 0.0)) {
      invalid(policy,
              fmt::format("{}.cost: expected a finite value >= 0, got {}", which, offer.cost));
    }
    if (!finite_at_least(offer.watts, 0.0)) {
      invalid(policy,
              fmt::format("{}.watts: expected a finite value >= 0, got {}", which, offer.watts));
    }
    if (offer.free_pes < 0) {
      invalid(policy, fmt::format("{}.free_pes: expected >= 0, got {}", which, offer.free_pes));
    }
    if (offer.running < 0) {
      invalid(policy, fmt::format("{}.running: expected >= 0, got {}", which, offer.running));
    }
    if (offer.removable < 0 || offer.removable > offer.running) {
      invalid(policy, fmt::format("{}.removable: expected 0..running ({}), got {}", which,
                                  offer.running, offer.removable));
    }
  }
}

double weighted_sum(const Counts& x, const std::vector<double>& weights) {
  double sum = 0.0;
  for (std::size_t c = 0; c < x.size(); ++c) sum += x[c] * weights[c];
  return sum;
}

std::vector<double> column(std::span<const NodeClassOffer> offers, double NodeClassOffer::*field) {
  std::vector<double> values;
  values.reserve(offers.size());
  for (const NodeClassOffer& offer : offers) values.push_back(offer.*field);
  return values;
}

std::vector<int> column(std::span<const NodeClassOffer> offers, int NodeClassOffer::*field) {
  std::vector<int> values;
  values.reserve(offers.size());
  for (const NodeClassOffer& offer : offers) values.push_back(offer.*field);
  return values;
}

std::vector<std::size_t> classes_by_speed(const std::vector<double>& speeds, bool fastest_first) {
  std::vector<std::size_t> order(speeds.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return fastest_first ? speeds[a] > speeds[b] : speeds[a] < speeds[b];
  });
  return order;
}

Counts take_in_order(const std::vector<int>& bounds, const std::vector<std::size_t>& order,
                     int count) {
  Counts x(bounds.size(), 0);
  for (const std::size_t c : order) {
    x[c] = std::min(count, bounds[c]);
    count -= x[c];
  }
  return x;
}

double predict_and_record(std::span<const NodeClassOffer> offers, const PredictRemaining& predict,
                          std::string_view policy, Counts delta, std::string step,
                          MalleabilityDecision& decision) {
  const double seconds = predict(delta);
  if (!finite_at_least(seconds, 0.0)) {
    invalid(policy, fmt::format("predict: expected finite seconds >= 0, got {} for delta {}",
                                seconds, delta));
  }
  decision.considered.push_back(make_candidate(offers, std::move(delta), seconds, std::move(step)));
  return seconds;
}

int total_removable(std::span<const NodeClassOffer> offers) {
  const std::vector<int> removable = column(offers, &NodeClassOffer::removable);
  return std::accumulate(removable.begin(), removable.end(), 0);
}

Counts slowest_removal(std::span<const NodeClassOffer> offers, int r) {
  Counts delta = take_in_order(column(offers, &NodeClassOffer::removable),
                               classes_by_speed(column(offers, &NodeClassOffer::speed), false), r);
  for (int& d : delta) d = -d;
  return delta;
}

void check_callback(const PredictRemaining& predict, std::string_view policy) {
  if (!predict) invalid(policy, "predict: expected a prediction callback, got an empty function");
}

MalleabilityDecision keep(std::size_t classes, double predicted_seconds, std::string reason) {
  MalleabilityDecision decision;
  decision.delta.assign(classes, 0);
  decision.predicted_seconds = predicted_seconds;
  decision.reason = std::move(reason);
  return decision;
}

}  // namespace flexmpi::planning
