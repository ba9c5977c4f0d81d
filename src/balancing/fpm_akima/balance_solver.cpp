#include "balancing/fpm_akima/balance_solver.hpp"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multiroots.h>
#include <gsl/gsl_vector.h>

#include <algorithm>
#include <cmath>
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
  System system{
      &time, p, n, mean_time(time, p, guess), std::vector<double>(p), std::vector<double>(p)};
  if (!(system.t_ref > 0.0) || !std::isfinite(system.t_ref)) return {};

  std::vector<double> x = guess, trial(p), dx(p), f(p);
  if (!system.evaluate(x.data())) return {};
  auto merit = [&](const std::vector<double>& at) {
    system.residuals(at.data(), f.data());
    double sum = 0.0, worst = 0.0;
    for (const double v : f) {
      sum += v * v;
      worst = std::max(worst, std::abs(v));
    }
    return std::pair{sum, worst};
  };
  auto [phi, worst] = merit(x);
  stats.residual = worst;
  while (worst >= options.tolerance && stats.iterations < options.max_iterations) {
    ++stats.iterations;
    // Newton step J dx = -F with F unscaled (F_0 in units, F_i in seconds):
    // rows i >= 2 give dx_i = (t_1' dx_1 - F_i) / t_i'; row 1 then gives
    // dx_1 (1 + t_1' sum 1/t_i') = F_0 + sum F_i / t_i'.
    double sum_x = 0.0;
    for (const double v : x) sum_x += v;
    const double f0 = n - sum_x;
    const std::vector<double>& t = system.t;
    const std::vector<double>& dt = system.dt;
    double inverse_sum = 0.0, weighted = 0.0;
    bool singular = false;
    for (std::size_t i = 1; i < p; ++i) {
      if (!(std::abs(dt[i]) > 0.0)) {
        singular = true;
        break;
      }
      inverse_sum += 1.0 / dt[i];
      weighted += (t[i] - t[0]) / dt[i];
    }
    const double denominator = 1.0 + dt[0] * inverse_sum;
    if (singular || !(std::abs(denominator) > 0.0)) break;
    dx[0] = (f0 + weighted) / denominator;
    for (std::size_t i = 1; i < p; ++i) dx[i] = (dt[0] * dx[0] - (t[i] - t[0])) / dt[i];
    // Backtracking (Armijo) on |F|^2, never past the boundary x >= 0.
    double step = 1.0;
    for (std::size_t i = 0; i < p; ++i) {
      if (dx[i] < 0.0 && x[i] > 0.0) step = std::min(step, 0.99 * x[i] / -dx[i]);
    }
    bool accepted = false;
    for (int halving = 0; halving < 40 && step > 1e-12; ++halving, step *= 0.5) {
      for (std::size_t i = 0; i < p; ++i) trial[i] = std::max(x[i] + step * dx[i], 0.0);
      if (!system.evaluate(trial.data())) continue;
      const auto [trial_phi, trial_worst] = merit(trial);
      if (trial_phi <= (1.0 - 1e-4 * step) * phi) {
        x.swap(trial);
        phi = trial_phi;
        worst = trial_worst;
        accepted = true;
        break;
      }
    }
    if (!accepted) break;
    stats.residual = worst;
  }
  stats.converged = worst < options.tolerance;
  if (!stats.converged || !acceptable(x, n)) {
    stats.converged = false;
    return {};
  }
  return x;
}

}  // namespace flexmpi
