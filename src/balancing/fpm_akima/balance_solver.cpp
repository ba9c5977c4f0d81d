#include "balancing/fpm_akima/balance_solver.hpp"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multiroots.h>
#include <gsl/gsl_vector.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "balancing/fpm_akima/gsl_errors_off.hpp"

namespace flexmpi {
namespace {

// Eq. (2) scaled so that every equation is dimensionless and O(1): the first
// counts units (rows), the others seconds, 10^6 apart.
struct System {
  const TimeFunction* time;
  std::size_t p;
  double n;
  double t_ref;
  mutable std::vector<double> t, dt;

  bool evaluate(const double* x) const {
    for (std::size_t i = 0; i < p; ++i) {
      time->operator()(i, x[i], t[i], dt[i]);
      if (!std::isfinite(t[i]) || !std::isfinite(dt[i])) return false;
    }
    return true;
  }
  // F from the last evaluate().
  void residuals(const double* x, double* f) const {
    double sum = 0.0;
    for (std::size_t i = 0; i < p; ++i) sum += x[i];
    f[0] = (n - sum) / n;
    for (std::size_t i = 1; i < p; ++i) f[i] = (t[i] - t[0]) / t_ref;
  }
  [[nodiscard]] double max_residual(const double* x) const {
    std::vector<double> f(p);
    residuals(x, f.data());
    double worst = 0.0;
    for (const double v : f) worst = std::max(worst, std::abs(v));
    return worst;
  }
};

double mean_time(const TimeFunction& time, std::size_t p, const std::vector<double>& x) {
  double sum = 0.0;
  for (std::size_t i = 0; i < p; ++i) {
    double t = 0.0, dt = 0.0;
    time(i, x[i], t, dt);
    sum += t;
  }
  return sum / static_cast<double>(p);
}

int gsl_f(const gsl_vector* x, void* params, gsl_vector* f) {
  const auto& system = *static_cast<const System*>(params);
  if (!system.evaluate(x->data)) return GSL_EBADFUNC;
  system.residuals(x->data, f->data);
  return GSL_SUCCESS;
}

// The analytic Jacobian, eq. (5), in the scaling of System.
int gsl_df(const gsl_vector* x, void* params, gsl_matrix* jacobian) {
  const auto& system = *static_cast<const System*>(params);
  if (!system.evaluate(x->data)) return GSL_EBADFUNC;
  gsl_matrix_set_zero(jacobian);
  for (std::size_t j = 0; j < system.p; ++j) gsl_matrix_set(jacobian, 0, j, -1.0 / system.n);
  for (std::size_t i = 1; i < system.p; ++i) {
    gsl_matrix_set(jacobian, i, 0, -system.dt[0] / system.t_ref);
    gsl_matrix_set(jacobian, i, i, system.dt[i] / system.t_ref);
  }
  return GSL_SUCCESS;
}

int gsl_fdf(const gsl_vector* x, void* params, gsl_vector* f, gsl_matrix* jacobian) {
  const int status = gsl_df(x, params, jacobian);  // evaluates t and t'
  if (status != GSL_SUCCESS) return status;
  static_cast<const System*>(params)->residuals(x->data, f->data);
  return GSL_SUCCESS;
}

// Finite sizes, none clearly negative (the root of a model with a strange
// shape may lie there); tiny negatives from round-off become 0.
bool acceptable(std::vector<double>& x, double n) {
  for (double& v : x) {
    if (!std::isfinite(v) || v < -1e-9 * n) return false;
    v = std::max(v, 0.0);
  }
  return true;
}

// x with t_i(x) = target within `tolerance`, from x (t, dt: t_i and t_i' at
// x, kept up to date). Newton steps inside a bracket [low, high] with
// t_i(low) < target < t_i(high); a step that leaves it bisects, or doubles x
// while no upper end is known (beyond n the model keeps its end speed, so
// t_i grows without bound). false if t_i is not finite, or the bracket closes
// without reaching the target (no root, or none this side of a jump).
bool size_at_time(const TimeFunction& time, std::size_t i, double target, double n,
                  double tolerance, double& x, double& t, double& dt) {
  double low = 0.0;
  double high = std::numeric_limits<double>::infinity();
  for (int step = 0; step < 200; ++step) {
    if (!std::isfinite(t) || !std::isfinite(dt)) return false;
    const double residual = t - target;
    if (std::abs(residual) <= tolerance) return true;
    (residual < 0.0 ? low : high) = x;
    double next = dt > 0.0 ? x - residual / dt : -1.0;
    if (!(next > low && next < high)) {
      next = std::isfinite(high) ? 0.5 * (low + high) : std::max(2.0 * x, 1e-3 * n);
    }
    if (next == x || high - low <= 1e-15 * std::max(1.0, low)) return false;
    x = next;
    time(i, x, t, dt);
  }
  return false;
}

struct SolverDeleter {
  void operator()(gsl_multiroot_fdfsolver* s) const { gsl_multiroot_fdfsolver_free(s); }
};
struct VectorDeleter {
  void operator()(gsl_vector* v) const { gsl_vector_free(v); }
};

}  // namespace

std::vector<double> solve_hybridsj(const TimeFunction& time, std::size_t p, double n,
                                   const std::vector<double>& guess, FpmSolveStats& stats,
                                   const SolverOptions& options) {
  stats = {"hybridsj", 0, 0.0, false};
  if (p == 0 || guess.size() != p || !(n > 0.0)) return {};
  const GslErrorsOff errors_off;
  System system{
      &time, p, n, mean_time(time, p, guess), std::vector<double>(p), std::vector<double>(p)};
  if (!(system.t_ref > 0.0) || !std::isfinite(system.t_ref)) return {};

  std::unique_ptr<gsl_multiroot_fdfsolver, SolverDeleter> solver(
      gsl_multiroot_fdfsolver_alloc(gsl_multiroot_fdfsolver_hybridsj, p));
  std::unique_ptr<gsl_vector, VectorDeleter> start(gsl_vector_alloc(p));
  if (!solver || !start) return {};
  std::copy(guess.begin(), guess.end(), start->data);
  gsl_multiroot_function_fdf function{&gsl_f, &gsl_df, &gsl_fdf, p, &system};
  if (gsl_multiroot_fdfsolver_set(solver.get(), &function, start.get()) != GSL_SUCCESS) return {};

  auto residual = [&] {
    double worst = 0.0;
    for (std::size_t i = 0; i < p; ++i)
      worst = std::max(worst, std::abs(gsl_vector_get(solver->f, i)));
    return worst;
  };
  stats.residual = residual();
  while (stats.residual >= options.tolerance && stats.iterations < options.max_iterations) {
    const int status = gsl_multiroot_fdfsolver_iterate(solver.get());
    ++stats.iterations;
    stats.residual = residual();
    // GSL_ENOPROG(J): no progress; a residual this small is still a root.
    if (status != GSL_SUCCESS) break;
  }
  stats.converged = stats.residual < std::max(options.tolerance, 1e-8);
  if (!stats.converged) return {};
  std::vector<double> x(solver->x->data, solver->x->data + p);
  if (!acceptable(x, n)) {
    stats.converged = false;
    return {};
  }
  return x;
}

std::vector<double> solve_arrowhead_newton(const TimeFunction& time, std::size_t p, double n,
                                           const std::vector<double>& guess, FpmSolveStats& stats,
                                           const SolverOptions& options) {
  stats = {"newton-arrowhead", 0, 0.0, false};
  if (p == 0 || guess.size() != p || !(n > 0.0)) return {};
  const double t_ref = mean_time(time, p, guess);
  if (!(t_ref > 0.0) || !std::isfinite(t_ref)) return {};

  // The arrow's diagonal block eliminated: for a common time T every
  // process's size solves its own equation t_i(x_i) = T (size_at_time), and
  // Newton runs on the one equation left, sum_i x_i(T) = n, whose derivative
  // is sum_i 1 / t_i'(x_i). Newton on the whole system with a line search on
  // |F|^2 stalled at 4,096 processes of 32 speed classes (residual 2e-3
  // after 100 steps of ever shorter length): the kinks of the splines make
  // |F|^2 a poor guide in thousands of dimensions, while a 1-D equation can
  // be kept inside a bracket.
  const double time_tolerance = 0.25 * options.tolerance * t_ref;
  std::vector<double> x(guess), t(p), dt(p);
  for (std::size_t i = 0; i < p; ++i) {
    x[i] = std::max(x[i], 0.0);
    time(i, x[i], t[i], dt[i]);
  }
  double common = t_ref;
  double below = 0.0;                                      // sum_i x_i(below) < n
  double above = std::numeric_limits<double>::infinity();  // sum_i x_i(above) > n
  while (stats.iterations < options.max_iterations) {
    ++stats.iterations;
    double sum = 0.0, slope = 0.0, fastest = common, slowest = common;
    for (std::size_t i = 0; i < p; ++i) {
      if (!size_at_time(time, i, common, n, time_tolerance, x[i], t[i], dt[i])) return {};
      sum += x[i];
      if (dt[i] > 0.0) slope += 1.0 / dt[i];
      fastest = std::min(fastest, t[i]);
      slowest = std::max(slowest, t[i]);
    }
    const double excess = sum - n;
    stats.residual = std::max(std::abs(excess) / n, (slowest - fastest) / t_ref);
    if (stats.residual < options.tolerance) break;
    (excess < 0.0 ? below : above) = common;
    double next = slope > 0.0 ? common - excess / slope : common;
    if (!(next > below && next < above)) {
      next = std::isfinite(above) ? 0.5 * (below + above) : 2.0 * common;
    }
    if (next == common) break;  // the bracket closed without a root
    common = next;
  }
  stats.converged = stats.residual < options.tolerance;
  if (!stats.converged || !acceptable(x, n)) {
    stats.converged = false;
    return {};
  }
  return x;
}

}  // namespace flexmpi
