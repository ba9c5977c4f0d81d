// The integer program of AMP's search (thesis 5.4.3.1), solved by GLPK.
#pragma once

#include <optional>
#include <vector>

#include "policies/planner/planner_support.hpp"

namespace flexmpi::planning {

// The integer program of 5.4.3.1 in standard minimisation form (eq. 5.15):
// min sum_c objective_c x_c subject to sum_c x_c = count,
// sum_c speed_c x_c >= min_power, x_c integer in [0, bound_c].
// nullopt when no integer point satisfies it.
std::optional<Counts> solve_program(const std::vector<double>& objective,
                                    const std::vector<double>& speeds,
                                    const std::vector<int>& bounds, int count, double min_power);

}  // namespace flexmpi::planning
