// Numerical solution of the optimal partitioning problem (FPM paper, sec. 3.1):
// the system F(x) = 0 of eq. (2),
//   F_0(x) = n - sum_i x_i,   F_i(x) = t_i(x_i) - t_1(x_1)  (i = 2..p),
// with t_i(x) = x / s_i(x) and the analytic Jacobian of eq. (5), from the
// equal distribution x_i = n / p of eq. (4).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "balancing/fpm/fpm_partitioner.hpp"

namespace flexmpi {

/// t_i(x) and t_i'(x) of process i.
using TimeFunction = std::function<void(std::size_t i, double x, double& t, double& dt)>;

struct SolverOptions {
  int max_iterations = 100;
  /// Converged when every scaled equation is below this: |F_0| / n and
  /// |F_i| / t_ref, t_ref being the mean time at the initial guess.
  double tolerance = 1e-10;
};

/**
 * Solves eq. (2) for p processes and n units with GSL's
 * gsl_multiroot_fdfsolver_hybridsj (MINPACK's HYBRJ, Powell's hybrid method
 * with scaling) and the analytic Jacobian. Dense: O(p^2) memory and per
 * update, O(p^3) per QR factorisation. Returns x (empty if it did not
 * converge to finite, non-negative sizes); fills stats.
 */
std::vector<double> solve_hybridsj(const TimeFunction& time, std::size_t p, double n,
                                   const std::vector<double>& guess, FpmSolveStats& stats,
                                   const SolverOptions& options = {});

/**
 * The same system for thousands of processes, where the dense HYBRJ does not
 * fit in time or memory, by Newton's method on the arrow shape of the
 * Jacobian (eq. 5: first row, first column and diagonal) with the diagonal
 * block eliminated: for a common time T each size solves t_i(x_i) = T by a
 * bracketed 1-D Newton, and Newton, bracketed too, solves sum_i x_i(T) = n.
 * O(p) a step. Same convergence test as solve_hybridsj; stats.iterations
 * counts the steps in T.
 */
std::vector<double> solve_arrowhead_newton(const TimeFunction& time, std::size_t p, double n,
                                           const std::vector<double>& guess, FpmSolveStats& stats,
                                           const SolverOptions& options = {});

}  // namespace flexmpi
