// Speed function of one process interpolated by an Akima spline (FPM paper,
// sec. 3.2): smooth, with a continuous first derivative for the Jacobian of
// eq. (5), stable to outliers, and passing through every measured point.
#pragma once

#include <gsl/gsl_interp.h>

#include <memory>
#include <vector>

#include "balancing/fpm/speed_history.hpp"

namespace flexmpi {

/**
 * The knots the spline is built on, for a problem of `total` units: the
 * measured points (0 < x < total) plus (0, s_1) and (total, s_k), extended
 * below 5 knots as in sec. 3.2 by duplicating the left- and rightmost speeds:
 *   k = 1: (0,s1) (x1/2,s1) (x1,s1) ((x1+n)/2,s1) (n,s1)
 *   k = 2: (0,s1) (x1,s1) (x2,s2) ((x2+n)/2,s2) (n,s2)
 *   k >= 3: (0,s1) (x1,s1) ... (xk,sk) (n,sk)
 * The paper prints the midpoint as (n - x)/2, which for x > n/3 lies left of
 * x and would break the increasing abscissae GSL needs: the midpoint of
 * [x, n] is meant. Points outside (0, total) are dropped. Empty if no point is left.
 */
std::vector<SpeedPoint> akima_knots(const std::vector<SpeedPoint>& points, double total);

class AkimaSpeedFunction {
 public:
  /// Throws Error(invalid_argument) if `points` has no point inside (0, total).
  AkimaSpeedFunction(const std::vector<SpeedPoint>& points, double total);
  AkimaSpeedFunction(AkimaSpeedFunction&&) noexcept;
  AkimaSpeedFunction& operator=(AkimaSpeedFunction&&) noexcept;
  ~AkimaSpeedFunction();

  /// The function of other points (the same contract as the constructor),
  /// reusing this one's buffers.
  void refit(const std::vector<SpeedPoint>& points, double total);

  /// s(x); constant outside [0, total]. Never below a small positive floor,
  /// so that t = x / s stays finite where the spline would undershoot.
  [[nodiscard]] double speed(double x) const;
  /// s'(x) (0 where s is constant or floored).
  [[nodiscard]] double slope(double x) const;
  /// t(x) = x / s(x): seconds per iteration for x units.
  [[nodiscard]] double time(double x) const { return x / speed(x); }
  /// t'(x) = (s(x) - x s'(x)) / s(x)^2, the diagonal terms of eq. (5).
  [[nodiscard]] double time_derivative(double x) const;
  /// Both at once (one spline evaluation each).
  void time_and_derivative(double x, double& t, double& dt) const;

  [[nodiscard]] const std::vector<SpeedPoint>& knots() const { return knots_; }

 private:
  void evaluate(double x, double& s, double& ds) const;

  std::vector<SpeedPoint> knots_;
  std::vector<double> xs_, ys_;  // the arrays gsl_interp keeps pointers to
  double total_ = 0.0;
  double floor_ = 0.0;
  struct InterpDeleter {
    void operator()(gsl_interp* interp) const;
  };
  std::unique_ptr<gsl_interp, InterpDeleter> interp_;
};

}  // namespace flexmpi
