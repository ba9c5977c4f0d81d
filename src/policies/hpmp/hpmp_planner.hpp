// HPMP's decision (thesis 5.4.2, Alg. 7): the configuration predicted
// fastest. Pure logic, no MPI (policies/planner/malleability_planner.hpp).
#pragma once

#include <span>

#include "policies/planner/malleability_planner.hpp"

namespace flexmpi {

/// HPMP spawning action (Alg. 7 lines 6-15): for every count s = 0..sum of
/// free_pes, the s PEs of the fastest classes (class order breaks speed
/// ties), and, beyond Alg. 7, for every r = 1..sum of removable, the r
/// removable processes of the slowest classes (delta < 0), predicted with
/// `predict`; the lowest predicted time wins, ties to the fewest changes
/// (s = 0 first, then spawns, then removals). Throws flexmpi::Error (invalid_argument) for invalid
/// offers, an empty callback or a prediction that is not finite and >= 0.
MalleabilityDecision plan_hpmp(std::span<const NodeClassOffer> offers,
                               const PredictRemaining& predict);

}  // namespace flexmpi
