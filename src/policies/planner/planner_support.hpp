// What the policies' planners (malleability_planner.hpp) share: checking
// their inputs, columns of the offers, configurations taken class by class,
// and the predictions they record.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policies/planner/malleability_planner.hpp"

namespace flexmpi::planning {

using Counts = std::vector<int>;

// Objectives within this relative distance are ties (they differ by rounding only).
inline constexpr double kTieTolerance = 1e-9;

[[noreturn]] void invalid(std::string_view policy, const std::string& message);

bool finite_at_least(double value, double minimum);

void validate_offers(std::span<const NodeClassOffer> offers, std::string_view policy);

double weighted_sum(const Counts& x, const std::vector<double>& weights);

std::vector<double> column(std::span<const NodeClassOffer> offers, double NodeClassOffer::*field);
std::vector<int> column(std::span<const NodeClassOffer> offers, int NodeClassOffer::*field);

// Class indices by speed, fastest (or slowest) first; class order breaks ties.
std::vector<std::size_t> classes_by_speed(const std::vector<double>& speeds, bool fastest_first);

// `count` processes taken class by class in `order`, each class up to its
// bound: Alg. 7's mapping of s PEs onto the fastest ones.
Counts take_in_order(const std::vector<int>& bounds, const std::vector<std::size_t>& order,
                     int count);

// Calls the caller's prediction, checks its answer and records it in `decision`.
double predict_and_record(std::span<const NodeClassOffer> offers, const PredictRemaining& predict,
                          std::string_view policy, Counts delta, std::string step,
                          MalleabilityDecision& decision);

// The removable processes of all classes.
int total_removable(std::span<const NodeClassOffer> offers);

// Removing r removable processes, those of the slowest classes first (class
// order breaks speed ties), as a delta (<= 0).
Counts slowest_removal(std::span<const NodeClassOffer> offers, int r);

void check_callback(const PredictRemaining& predict, std::string_view policy);

// No change: `predicted_seconds` as now, for `reason`.
MalleabilityDecision keep(std::size_t classes, double predicted_seconds, std::string reason);

}  // namespace flexmpi::planning
