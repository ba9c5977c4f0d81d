#include "balancing/fpm_akima/akima_speed_function.hpp"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>

#include <algorithm>
#include <cmath>

#include "balancing/fpm_akima/gsl_errors_off.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {

std::vector<SpeedPoint> akima_knots(const std::vector<SpeedPoint>& points, double total) {
  std::vector<SpeedPoint> inside;
  inside.reserve(points.size());
  for (const SpeedPoint& point : points) {
    if (point.size > 0.0 && point.size < total && point.speed > 0.0 && std::isfinite(point.speed)) {
      inside.push_back(point);
    }
  }
  std::sort(inside.begin(), inside.end(),
            [](const SpeedPoint& a, const SpeedPoint& b) { return a.size < b.size; });
  inside.erase(
      std::unique(inside.begin(), inside.end(),
                  [](const SpeedPoint& a, const SpeedPoint& b) { return a.size == b.size; }),
      inside.end());
  if (inside.empty()) return {};
  const SpeedPoint first = inside.front();
  const SpeedPoint last = inside.back();
  std::vector<SpeedPoint> knots;
  knots.reserve(inside.size() + 4);  // 0, a midpoint or two, n
  knots.push_back({0.0, first.speed});
  if (inside.size() == 1) knots.push_back({first.size / 2.0, first.speed});
  knots.insert(knots.end(), inside.begin(), inside.end());
  if (inside.size() <= 2) knots.push_back({(last.size + total) / 2.0, last.speed});
  knots.push_back({total, last.speed});
  return knots;
}

void AkimaSpeedFunction::InterpDeleter::operator()(gsl_interp* interp) const {
  gsl_interp_free(interp);
}

AkimaSpeedFunction::AkimaSpeedFunction(const std::vector<SpeedPoint>& points, double total) {
  refit(points, total);
}

void AkimaSpeedFunction::refit(const std::vector<SpeedPoint>& points, double total) {
  const GslErrorsOff errors_off;
  std::vector<SpeedPoint> knots = akima_knots(points, total);
  if (knots.size() < gsl_interp_type_min_size(gsl_interp_akima)) {
    throw Error(Errc::invalid_argument, "a speed function needs a measured point inside (0, n)");
  }
  knots_ = std::move(knots);
  total_ = total;
  double lowest = knots_.front().speed;
  xs_.clear();
  ys_.clear();
  for (const SpeedPoint& knot : knots_) {
    xs_.push_back(knot.size);
    ys_.push_back(knot.speed);
    lowest = std::min(lowest, knot.speed);
  }
  // Akima splines barely overshoot, but t = x / s needs s > 0 everywhere.
  floor_ = 1e-3 * lowest;
  // A spline of as many knots is initialised again in place: GSL allocates
  // six blocks a spline, which was most of fpm-akima's time at 16,384 processes.
  if (!interp_ || interp_->size != xs_.size()) {
    interp_.reset(gsl_interp_alloc(gsl_interp_akima, xs_.size()));
  }
  if (!interp_ ||
      gsl_interp_init(interp_.get(), xs_.data(), ys_.data(), xs_.size()) != GSL_SUCCESS) {
    interp_.reset();
    throw Error(Errc::invalid_argument, "GSL could not build the Akima spline");
  }
}

AkimaSpeedFunction::AkimaSpeedFunction(AkimaSpeedFunction&&) noexcept = default;
AkimaSpeedFunction& AkimaSpeedFunction::operator=(AkimaSpeedFunction&&) noexcept = default;
AkimaSpeedFunction::~AkimaSpeedFunction() = default;

void AkimaSpeedFunction::evaluate(double x, double& s, double& ds) const {
  // Outside [0, n] the model extends the end speeds (sec. 3.2): the solver
  // may step there on its way to the root.
  const double clamped = std::clamp(x, 0.0, total_);
  s = gsl_interp_eval(interp_.get(), xs_.data(), ys_.data(), clamped, nullptr);
  ds = (x < 0.0 || x > total_)
           ? 0.0
           : gsl_interp_eval_deriv(interp_.get(), xs_.data(), ys_.data(), clamped, nullptr);
  if (!(s > floor_)) {
    s = floor_;
    ds = 0.0;
  }
}

double AkimaSpeedFunction::speed(double x) const {
  double s = 0.0, ds = 0.0;
  evaluate(x, s, ds);
  return s;
}

double AkimaSpeedFunction::slope(double x) const {
  double s = 0.0, ds = 0.0;
  evaluate(x, s, ds);
  return ds;
}

double AkimaSpeedFunction::time_derivative(double x) const {
  double t = 0.0, dt = 0.0;
  time_and_derivative(x, t, dt);
  return dt;
}

void AkimaSpeedFunction::time_and_derivative(double x, double& t, double& dt) const {
  double s = 0.0, ds = 0.0;
  evaluate(x, s, ds);
  t = x / s;
  dt = (s - x * ds) / (s * s);
}

}  // namespace flexmpi
