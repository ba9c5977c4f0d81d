// The integer program of AMP's search (thesis 5.4.3.1), solved by GLPK.
#pragma once

#include <optional>
#include <vector>

#include "policies/planner/planner_support.hpp"

struct glp_prob;  // GLPK's problem object (glpk.h)

namespace flexmpi::planning {

// The integer program of 5.4.3.1 in standard minimisation form (eq. 5.15):
// min sum_c objective_c x_c subject to sum_c x_c = count,
// sum_c speed_c x_c >= min_power, x_c integer in [0, bound_c].
//
// One AMP search solves it for many counts and power bounds over the same
// classes: the program is built once and each solve only changes the two
// rows' bounds, so the simplex starts from the previous optimal basis (a
// dual simplex step or two instead of a new problem: 32 classes at 1,024
// processes took 27 us a solve built afresh).
class IntegerProgram {
 public:
  IntegerProgram(const std::vector<double>& objective, const std::vector<double>& speeds,
                 const std::vector<int>& bounds);
  ~IntegerProgram();
  IntegerProgram(const IntegerProgram&) = delete;
  IntegerProgram& operator=(const IntegerProgram&) = delete;
  IntegerProgram(IntegerProgram&&) = delete;
  IntegerProgram& operator=(IntegerProgram&&) = delete;

  /// The optimum for these row bounds; nullopt when no integer point satisfies them.
  [[nodiscard]] std::optional<Counts> solve(int count, double min_power);

 private:
  std::vector<double> objective_;
  std::vector<double> speeds_;
  std::vector<int> bounds_;
  bool exact_;         ///< small enough for GLPK's branch and bound
  glp_prob* problem_;  ///< owned
};

}  // namespace flexmpi::planning
