#include "policies/amp/integer_program.hpp"

#include <fmt/format.h>
#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "flexmpi/error.hpp"

namespace flexmpi::planning {
namespace {

[[noreturn]] void glpk_failed(const char* call, int code) {
  throw Error(Errc::internal, fmt::format("AMP: GLPK {} failed with code {}", call, code));
}

// Above this many integer points the branch and bound gives way to a rounding
// of the relaxation (round_relaxation). With the power as its own objective
// (efficiency) the program is a subset sum, whose optimality GLPK's branch and
// bound could not prove at hundreds of processes: 1.5 s a decision at 256,
// none within 30 s at 1,024 under cost. Small programs, where the exact
// optimum is cheap and the tests check it against every point, stay exact.
constexpr double kExactPoints = 1e5;

double integer_points(const std::vector<int>& bounds) {
  double points = 1.0;
  for (const int bound : bounds) points *= bound + 1.0;
  return points;
}

// One process moved from one class to another while it lowers the objective
// and keeps the power: the rounding's few processes put right.
void exchange_processes(Counts& x, const std::vector<double>& objective,
                        const std::vector<double>& speeds, const std::vector<int>& bounds,
                        double min_power) {
  const std::size_t classes = x.size();
  for (std::size_t round = 0; round < 2 * classes; ++round) {
    double best_gain = 1e-12 * (1.0 + std::abs(weighted_sum(x, objective)));
    std::size_t from = classes, to = classes;
    const double power = weighted_sum(x, speeds);
    for (std::size_t i = 0; i < classes; ++i) {
      for (std::size_t j = 0; j < classes && x[i] > 0; ++j) {
        if (j == i || x[j] >= bounds[j] || power - speeds[i] + speeds[j] < min_power) continue;
        if (objective[i] - objective[j] > best_gain) {
          best_gain = objective[i] - objective[j];
          from = i;
          to = j;
        }
      }
    }
    if (from == classes) return;
    --x[from];
    ++x[to];
  }
}

// The relaxation's optimum is a vertex of a program with two rows, so at most
// two classes hold a fractional count, whose fractions add up to one. The
// process they share goes to the faster: the power stays at least the
// relaxation's, and the objective exceeds the optimum by less than one
// process's objective (one PE of ~1,000: 0.1 %). Exchanges then lower it.
std::optional<Counts> round_relaxation(glp_prob* problem, const std::vector<double>& objective,
                                       const std::vector<double>& speeds,
                                       const std::vector<int>& bounds, int count,
                                       double min_power) {
  const std::size_t classes = bounds.size();
  Counts x(classes);
  std::vector<bool> fractional(classes);
  for (std::size_t c = 0; c < classes; ++c) {
    const double relaxed = glp_get_col_prim(problem, static_cast<int>(c) + 1);
    const double nearest = std::round(relaxed);
    fractional[c] = std::abs(relaxed - nearest) > 1e-9;
    x[c] = static_cast<int>(fractional[c] ? std::floor(relaxed) : nearest);
  }
  // The fractions add up to the processes still missing: one each, fastest first.
  int missing = count - std::accumulate(x.begin(), x.end(), 0);
  for (const std::size_t c : classes_by_speed(speeds, true)) {
    if (missing > 0 && fractional[c] && x[c] < bounds[c]) {
      ++x[c];
      --missing;
    }
  }
  if (missing != 0 || weighted_sum(x, speeds) < min_power) return std::nullopt;
  exchange_processes(x, objective, speeds, bounds, min_power);
  return x;
}

}  // namespace

IntegerProgram::IntegerProgram(const std::vector<double>& objective,
                               const std::vector<double>& speeds, const std::vector<int>& bounds)
    : objective_(objective),
      speeds_(speeds),
      bounds_(bounds),
      exact_(integer_points(bounds) <= kExactPoints),
      problem_(glp_create_prob()) {
  const int classes = static_cast<int>(bounds.size());
  glp_set_obj_dir(problem_, GLP_MIN);
  glp_add_rows(problem_, 2);
  glp_add_cols(problem_, classes);
  // GLPK's arrays are 1-based: element 0 is unused.
  std::vector<int> rows{0};
  std::vector<int> cols{0};
  std::vector<double> values{0.0};
  for (int c = 1; c <= classes; ++c) {
    const std::size_t i = static_cast<std::size_t>(c - 1);
    glp_set_col_kind(problem_, c, GLP_IV);
    if (bounds[i] == 0) {
      glp_set_col_bnds(problem_, c, GLP_FX, 0.0, 0.0);
    } else {
      glp_set_col_bnds(problem_, c, GLP_DB, 0.0, bounds[i]);
    }
    glp_set_obj_coef(problem_, c, objective[i]);
    rows.insert(rows.end(), {1, 2});
    cols.insert(cols.end(), {c, c});
    values.insert(values.end(), {1.0, speeds[i]});
  }
  glp_load_matrix(problem_, 2 * classes, rows.data(), cols.data(), values.data());
  glp_std_basis(problem_);
}

IntegerProgram::~IntegerProgram() { glp_delete_prob(problem_); }

std::optional<Counts> IntegerProgram::solve(int count, double min_power) {
  glp_set_row_bnds(problem_, 1, GLP_FX, count, count);
  glp_set_row_bnds(problem_, 2, GLP_LO, min_power, 0.0);

  // The relaxation first (glp_intopt needs its optimum). Only row bounds
  // changed since the last solve, so the last optimal basis stays dual
  // feasible: the dual simplex restores primal feasibility from it.
  glp_smcp simplex;
  glp_init_smcp(&simplex);
  simplex.msg_lev = GLP_MSG_OFF;
  simplex.meth = GLP_DUALP;
  int simplex_code = glp_simplex(problem_, &simplex);
  if (simplex_code == GLP_EBADB || simplex_code == GLP_ESING || simplex_code == GLP_ECOND) {
    glp_std_basis(problem_);  // a basis the last branch and bound left unusable
    simplex_code = glp_simplex(problem_, &simplex);
  }
  if (simplex_code != 0) glpk_failed("glp_simplex", simplex_code);
  const int relaxation = glp_get_status(problem_);
  if (relaxation == GLP_NOFEAS) return std::nullopt;
  if (relaxation != GLP_OPT) glpk_failed("glp_simplex (status)", relaxation);

  if (!exact_) return round_relaxation(problem_, objective_, speeds_, bounds_, count, min_power);
  glp_iocp branch_and_bound;
  glp_init_iocp(&branch_and_bound);
  branch_and_bound.msg_lev = GLP_MSG_OFF;
  // The default integrality tolerance (1e-5) takes x = 0.99998 for 1: a power
  // bound just above a level would then return that level again.
  branch_and_bound.tol_int = 1e-9;
  const int intopt_code = glp_intopt(problem_, &branch_and_bound);
  if (intopt_code != 0) glpk_failed("glp_intopt", intopt_code);
  const int status = glp_mip_status(problem_);
  if (status == GLP_NOFEAS) return std::nullopt;
  if (status != GLP_OPT) glpk_failed("glp_intopt (status)", status);

  Counts x(bounds_.size());
  for (std::size_t c = 0; c < x.size(); ++c) {
    x[c] = static_cast<int>(std::lround(glp_mip_col_val(problem_, static_cast<int>(c) + 1)));
  }
  return x;
}

}  // namespace flexmpi::planning
