#include "balancing/fpm_akima/fpm_akima_partitioner.hpp"

#include <cmath>
#include <sstream>
#include <vector>

#include "balancing/fpm_akima/akima_speed_function.hpp"
#include "balancing/fpm_akima/balance_solver.hpp"
#include "balancing/fpm_akima/gsl_errors_off.hpp"

namespace flexmpi {

FpmPartitioner::Solution FpmAkimaPartitioner::solve(const SpeedHistory& history,
                                                    const FpmMeasurement& current) {
  const GslErrorsOff errors_off;  // evaluations too: a GSL error must not abort the application
  const std::size_t p = history.processes();
  const double n = history.total();
  // The splines of the last decision are refitted, not built anew (refit).
  if (speeds_.size() > p)
    speeds_.erase(speeds_.begin() + static_cast<std::ptrdiff_t>(p), speeds_.end());
  for (std::size_t i = 0; i < p; ++i) {
    if (i < speeds_.size()) {
      speeds_[i].refit(history.points(i), n);
    } else {
      speeds_.emplace_back(history.points(i), n);
    }
  }
  const TimeFunction time = [&](std::size_t i, double x, double& t, double& dt) {
    speeds_[i].time_and_derivative(x, t, dt);
  };
  auto run = [&](const std::vector<double>& guess) {
    return p <= dense_limit_ ? solve_hybridsj(time, p, n, guess, stats_, options_)
                             : solve_arrowhead_newton(time, p, n, guess, stats_, options_);
  };

  // Eq. (4): the equal distribution is the initial guess.
  std::vector<double> x = run(std::vector<double>(p, n / static_cast<double>(p)));
  if (!x.empty()) return {x, ""};
  const FpmSolveStats first = stats_;

  // Near steep changes the root may be far from n/p: retry from the
  // constant-speed partition of the measured speeds (relative computing power).
  std::vector<double> proportional(p);
  double speed_sum = 0.0;
  for (std::size_t i = 0; i < p; ++i) speed_sum += current.size[i] / current.time[i];
  for (std::size_t i = 0; i < p; ++i)
    proportional[i] = n * (current.size[i] / current.time[i]) / speed_sum;
  x = run(proportional);
  if (!x.empty()) return {x, ""};

  // The solver found no root (the paper's proposition 3 needs smooth,
  // positive models; noisy ones may have none): bisection on the
  // shape-restricted piecewise-linear models always has one (sec. 2).
  std::ostringstream why;
  why << first.method << " did not converge (" << first.iterations << " iterations, residual "
      << first.residual << "): bisection of the same history's piecewise-linear models used";
  Solution fallback = solve_by_bisection(history);
  if (fallback.sizes.empty())
    return {{}, why.str() + " and failed too (" + fallback.fallback + ")"};
  fallback.fallback = why.str();
  return fallback;
}

PartitionerDescriptor fpm_akima_partitioner() {
  return {"fpm-akima",
          "speed functions of the partition size from the measurement history, Akima splines, "
          "root of the balance equations by HYBRJ (Rychkov et al. sec. 3)",
          {},
          false,
          [](const Config&) { return std::make_unique<FpmAkimaPartitioner>(); }};
}

}  // namespace flexmpi
