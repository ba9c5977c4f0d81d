#include "policies/planner/integer_program.hpp"

#include <fmt/format.h>
#include <glpk.h>

#include <cmath>
#include <memory>

#include "flexmpi/error.hpp"

namespace flexmpi::planning {
namespace {

[[noreturn]] void glpk_failed(const char* call, int code) {
  throw Error(Errc::internal, fmt::format("AMP: GLPK {} failed with code {}", call, code));
}

}  // namespace

std::optional<Counts> solve_program(const std::vector<double>& objective,
                                    const std::vector<double>& speeds,
                                    const std::vector<int>& bounds, int count, double min_power) {
  const std::unique_ptr<glp_prob, decltype(&glp_delete_prob)> owner(glp_create_prob(),
                                                                    &glp_delete_prob);
  glp_prob* const problem = owner.get();
  const int classes = static_cast<int>(bounds.size());
  glp_set_obj_dir(problem, GLP_MIN);
  glp_add_rows(problem, 2);
  glp_set_row_bnds(problem, 1, GLP_FX, count, count);
  glp_set_row_bnds(problem, 2, GLP_LO, min_power, 0.0);
  glp_add_cols(problem, classes);
  // GLPK's arrays are 1-based: element 0 is unused.
  std::vector<int> rows{0};
  std::vector<int> cols{0};
  std::vector<double> values{0.0};
  for (int c = 1; c <= classes; ++c) {
    const std::size_t i = static_cast<std::size_t>(c - 1);
    glp_set_col_kind(problem, c, GLP_IV);
    if (bounds[i] == 0) {
      glp_set_col_bnds(problem, c, GLP_FX, 0.0, 0.0);
    } else {
      glp_set_col_bnds(problem, c, GLP_DB, 0.0, bounds[i]);
    }
    glp_set_obj_coef(problem, c, objective[i]);
    rows.insert(rows.end(), {1, 2});
    cols.insert(cols.end(), {c, c});
    values.insert(values.end(), {1.0, speeds[i]});
  }
  glp_load_matrix(problem, 2 * classes, rows.data(), cols.data(), values.data());

  // The LP relaxation first (glp_intopt needs its optimum without presolve).
  glp_smcp simplex;
  glp_init_smcp(&simplex);
  simplex.msg_lev = GLP_MSG_OFF;
  simplex.presolve = GLP_ON;
  const int simplex_code = glp_simplex(problem, &simplex);
  if (simplex_code == GLP_ENOPFS) return std::nullopt;  // presolve: relaxation infeasible
  if (simplex_code != 0) glpk_failed("glp_simplex", simplex_code);
  const int relaxation = glp_get_status(problem);
  if (relaxation == GLP_NOFEAS) return std::nullopt;
  if (relaxation != GLP_OPT) glpk_failed("glp_simplex (status)", relaxation);

  glp_iocp branch_and_bound;
  glp_init_iocp(&branch_and_bound);
  branch_and_bound.msg_lev = GLP_MSG_OFF;
  // The default integrality tolerance (1e-5) takes x = 0.99998 for 1: a power
  // bound just above a level would then return that level again.
  branch_and_bound.tol_int = 1e-9;
  const int intopt_code = glp_intopt(problem, &branch_and_bound);
  if (intopt_code != 0) glpk_failed("glp_intopt", intopt_code);
  const int status = glp_mip_status(problem);
  if (status == GLP_NOFEAS) return std::nullopt;
  if (status != GLP_OPT) glpk_failed("glp_intopt (status)", status);

  Counts x(bounds.size());
  for (int c = 1; c <= classes; ++c) {
    x[static_cast<std::size_t>(c - 1)] = static_cast<int>(std::lround(glp_mip_col_val(problem, c)));
  }
  return x;
}

}  // namespace flexmpi::planning
