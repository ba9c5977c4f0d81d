// AMP's search for the configuration that meets a goal (thesis 5.4.3, Alg.
// 8): the reasoning is at the top of amp_search.cpp.
#pragma once

#include <cmath>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "policies/amp/amp_planner.hpp"
#include "policies/amp/integer_program.hpp"
#include "policies/planner/planner_support.hpp"

namespace flexmpi::planning {

// AMP's search for one direction (spawn or removal).
class AmpSearch {
 public:
  // spawn: x_c processes spawned on class c, bound free_pes;
  // removal: x_c of the removable processes kept, bound removable.
  AmpSearch(std::span<const NodeClassOffer> offers, const AmpGoal& goal,
            const PredictRemaining& predict, bool spawn, MalleabilityDecision& decision);

  struct Configuration {
    Counts x;
    double power = 0.0;      // sum x_c speed_c
    double objective = 0.0;  // sum x_c objective_c
    double predicted_seconds = 0.0;
  };

  // A configuration meets the goal when it is predicted within `seconds`
  // (the band's upper edge until told otherwise).
  void aim_at(double seconds) { target_seconds_ = seconds; }

  [[nodiscard]] int total_bound() const {
    return std::accumulate(bounds_.begin(), bounds_.end(), 0);
  }

  // The best configuration over the counts in [first, last] (x processes),
  // nullopt if none meets the goal.
  std::optional<Configuration> find_best(int first, int last);

  // The most-power configuration predicted fastest over the counts searched
  // (Alg. 7's candidates): the best effort when nothing meets the goal.
  [[nodiscard]] const std::optional<Configuration>& fastest_seen() const { return fastest_seen_; }

  [[nodiscard]] Counts delta(const Counts& x) const;

 private:
  static bool better(double objective, double best) {
    return objective < best - kTieTolerance * (1.0 + std::abs(best));
  }

  [[nodiscard]] bool meets(const Configuration& c) const {
    return c.predicted_seconds <= target_seconds_;
  }

  Configuration evaluate(Counts x, std::string step);

  // The search for the configuration of k processes with the least objective
  // that meets the goal, one step at a time. Invariant: every configuration
  // of power <= `missing` misses (the assumption above), so the program over
  // powers above `missing` holds every one that meets: its optimum, if it
  // meets, is the answer; if it misses, its objective bounds every one that
  // meets from below (`lower_bound`). A miss raises `missing` to the power it
  // had; a probe halfway to `enough` (a power that suffices) raises it
  // faster. Should the programs run out (the assumption fails), the cheapest
  // configuration met stands.
  struct CountSearch {
    int k = 0;
    double missing = 0.0;
    double enough = 0.0;
    double lower_bound = 0.0;
    Configuration cheapest_met;
  };

  // The search of k processes, or nullopt when even the most power k
  // processes reach (their fastest PEs) misses: then every configuration of k does.
  std::optional<CountSearch> start(int k);

  // One program (and one probe); false when the search of that count is over.
  bool refine(CountSearch& search);

  // Cost and energy: the searches of all counts that can meet, best first.
  std::optional<Configuration> find_cheapest(int first, int last);

  std::span<const NodeClassOffer> offers_;
  const PredictRemaining& predict_;
  bool spawn_;
  MalleabilityDecision& decision_;
  double target_seconds_;
  bool efficiency_;
  std::string program_step_;
  std::vector<double> speeds_;
  std::vector<int> bounds_;
  std::vector<double> objective_;
  std::vector<std::size_t> fastest_first_;
  std::vector<std::size_t> cheapest_first_;
  IntegerProgram program_;  ///< over objective_, speeds_, bounds_
  double level_tolerance_ = 0.0;
  std::optional<Configuration> fastest_seen_;
};

}  // namespace flexmpi::planning
