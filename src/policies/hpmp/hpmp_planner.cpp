// HPMP's walk over spawns and removals (hpmp_planner.hpp; thesis 5.4.2).
#include "policies/hpmp/hpmp_planner.hpp"

#include <fmt/format.h>

#include <numeric>
#include <utility>

#include "policies/planner/planner_support.hpp"

namespace flexmpi {

using namespace planning;  // NOLINT(google-build-using-namespace)

MalleabilityDecision plan_hpmp(std::span<const NodeClassOffer> offers,
                               const PredictRemaining& predict) {
  validate_offers(offers, "HPMP");
  check_callback(predict, "HPMP");
  const std::vector<int> free_pes = column(offers, &NodeClassOffer::free_pes);
  const std::vector<std::size_t> fastest_first =
      classes_by_speed(column(offers, &NodeClassOffer::speed), true);
  const int max_spawn = std::accumulate(free_pes.begin(), free_pes.end(), 0);

  // Alg. 7 lines 7-15: s = 0 is the current configuration (Test_P); the
  // strictly lowest prediction wins, so ties go to fewer changes. Beyond
  // Alg. 7, removing the r slowest removable processes is a candidate too:
  // with the model corrected on the counts the job ran (RunLearning), a
  // spawn that did not pay is given back (docs/design/malleability.md).
  MalleabilityDecision decision = keep(offers.size(), 0.0, "");
  int best_count = 0;
  const auto consider = [&](Counts delta, int count) {
    const double seconds = predict_and_record(offers, predict, "HPMP", delta, "hpmp", decision);
    if (count == 0 || seconds < decision.predicted_seconds) {
      decision.delta = std::move(delta);
      decision.predicted_seconds = seconds;
      best_count = count;
    }
  };
  for (int s = 0; s <= max_spawn; ++s) consider(take_in_order(free_pes, fastest_first, s), s);
  const int max_remove = total_removable(offers);
  for (int r = 1; r <= max_remove; ++r) consider(slowest_removal(offers, r), -r);
  decision.reason =
      best_count == 0 ? "hpmp: no change is predicted faster than the current configuration"
      : best_count > 0
          ? fmt::format("hpmp: spawn {} on the fastest free PEs, the minimum predicted time",
                        best_count)
          : fmt::format(
                "hpmp: remove {} of the slowest spawned processes, the minimum predicted "
                "time",
                -best_count);
  return decision;
}

}  // namespace flexmpi
