// Piecewise-linear speed functions kept to the shape the geometrical
// partitioning algorithm needs (FPM paper, sec. 2.1-2.2; Lastovetsky and
// Reddy 2007).
#pragma once

#include <vector>

#include "balancing/fpm/speed_history.hpp"

namespace flexmpi {

/**
 * The speed function through a process's points, adjusted after the paper's
 * sec. 2.2 so that any line through the origin meets it exactly once:
 *  - up to the fastest point X it is increasing and concave: points below
 *    the upper concave hull of [x_1, X] are raised onto it;
 *  - beyond X it is non-increasing: s_j = min(s_j, s_{j-1});
 *  - the time t = x / s strictly increases from knot to knot. This is the
 *    condition the bisection relies on: on a piece s = a + b x the line
 *    s = x / T meets it once iff a > 0, i.e. iff t_j > t_{j-1}. The first two
 *    rules imply it except where the function rises steeply from its
 *    constant extension below x_1; there s_j is lowered to meet it.
 * Below the first point and beyond the last the speed is constant (the same
 * extension as the Akima models, sec. 3.2).
 */
class PiecewiseLinearSpeed {
 public:
  /// Throws Error(invalid_argument) without a point of positive size and speed.
  explicit PiecewiseLinearSpeed(const std::vector<SpeedPoint>& points);

  /// The knots after the shape adjustment.
  [[nodiscard]] const std::vector<SpeedPoint>& knots() const { return knots_; }
  [[nodiscard]] double speed(double x) const;
  /// t(x) = x / s(x), strictly increasing.
  [[nodiscard]] double time(double x) const { return x <= 0.0 ? 0.0 : x / speed(x); }
  /// The size x with t(x) = T: where the line s = x / T through the origin
  /// meets the function (the intersection of the paper's Fig. 2). O(log k).
  [[nodiscard]] double size_at_time(double T) const;

 private:
  std::vector<SpeedPoint> knots_;
  std::vector<double> times_;  // t at each knot, strictly increasing
};

struct BisectionResult {
  std::vector<double> sizes;  ///< x_i, summing to n
  int iterations = 0;
  double time = 0.0;  ///< the common time T of the final line
};

/**
 * The geometrical partitioning algorithm (sec. 2.1): the lower line (slope
 * 1/T_lo, total size < n) and the upper line (total > n) are bisected until
 * the line's intersections x_i(T) sum to n within `tolerance` * n. Returns the
 * x_i(T) scaled to sum to n exactly.
 */
BisectionResult bisect_lines(const std::vector<PiecewiseLinearSpeed>& speeds, double n,
                             double tolerance = 1e-10, int max_iterations = 200);

}  // namespace flexmpi
