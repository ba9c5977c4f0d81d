#include "balancing/fpm/piecewise_linear_speed.hpp"

#include <algorithm>
#include <cmath>

#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

// Raises the points of knots[0..last] onto their upper concave hull.
void raise_to_concave_hull(std::vector<SpeedPoint>& knots, std::size_t last) {
  std::vector<std::size_t> hull;  // indices, monotone chain
  for (std::size_t j = 0; j <= last; ++j) {
    while (hull.size() >= 2) {
      const SpeedPoint& a = knots[hull[hull.size() - 2]];
      const SpeedPoint& b = knots[hull.back()];
      const SpeedPoint& c = knots[j];
      // b is below the chord a-c (or on it): not a vertex of the upper hull.
      const double cross =
          (b.size - a.size) * (c.speed - a.speed) - (b.speed - a.speed) * (c.size - a.size);
      if (cross >= 0.0) {
        hull.pop_back();
      } else {
        break;
      }
    }
    hull.push_back(j);
  }
  for (std::size_t h = 0; h + 1 < hull.size(); ++h) {
    const SpeedPoint& a = knots[hull[h]];
    const SpeedPoint& c = knots[hull[h + 1]];
    for (std::size_t j = hull[h] + 1; j < hull[h + 1]; ++j) {
      knots[j].speed = a.speed + (c.speed - a.speed) * (knots[j].size - a.size) / (c.size - a.size);
    }
  }
}

}  // namespace

PiecewiseLinearSpeed::PiecewiseLinearSpeed(const std::vector<SpeedPoint>& points) {
  for (const SpeedPoint& point : points) {
    if (point.size > 0.0 && std::isfinite(point.size) && point.speed > 0.0 &&
        std::isfinite(point.speed)) {
      knots_.push_back(point);
    }
  }
  if (knots_.empty())
    throw Error(Errc::invalid_argument,
                "a speed function needs a point of positive size and speed");
  std::sort(knots_.begin(), knots_.end(),
            [](const SpeedPoint& a, const SpeedPoint& b) { return a.size < b.size; });
  knots_.erase(
      std::unique(knots_.begin(), knots_.end(),
                  [](const SpeedPoint& a, const SpeedPoint& b) { return a.size == b.size; }),
      knots_.end());

  const auto peak = static_cast<std::size_t>(
      std::max_element(knots_.begin(), knots_.end(),
                       [](const SpeedPoint& a, const SpeedPoint& b) { return a.speed < b.speed; }) -
      knots_.begin());
  raise_to_concave_hull(knots_, peak);
  for (std::size_t j = 1; j < knots_.size(); ++j) {
    if (j > peak) knots_[j].speed = std::min(knots_[j].speed, knots_[j - 1].speed);
    // t_j > t_{j-1}: s_j < s_{j-1} x_j / x_{j-1} (a relative margin keeps it strict).
    const double bound = knots_[j - 1].speed * knots_[j].size / knots_[j - 1].size * (1.0 - 1e-6);
    knots_[j].speed = std::min(knots_[j].speed, bound);
  }
  for (const SpeedPoint& knot : knots_) times_.push_back(knot.size / knot.speed);
}

double PiecewiseLinearSpeed::speed(double x) const {
  if (x <= knots_.front().size) return knots_.front().speed;
  if (x >= knots_.back().size) return knots_.back().speed;
  const auto upper = std::upper_bound(knots_.begin(), knots_.end(), x,
                                      [](double v, const SpeedPoint& k) { return v < k.size; });
  const SpeedPoint& b = *upper;
  const SpeedPoint& a = *(upper - 1);
  return a.speed + (b.speed - a.speed) * (x - a.size) / (b.size - a.size);
}

double PiecewiseLinearSpeed::size_at_time(double T) const {
  if (!(T > 0.0)) return 0.0;
  // Constant extensions: x = T s.
  if (T <= times_.front()) return T * knots_.front().speed;
  if (T >= times_.back()) return T * knots_.back().speed;
  const auto j =
      static_cast<std::size_t>(std::upper_bound(times_.begin(), times_.end(), T) - times_.begin());
  // On the piece s = a + b x between knots j-1 and j: x = T (a + b x).
  const SpeedPoint& left = knots_[j - 1];
  const SpeedPoint& right = knots_[j];
  const double b = (right.speed - left.speed) / (right.size - left.size);
  const double a = left.speed - b * left.size;
  const double x = T * a / (1.0 - T * b);
  return std::clamp(x, left.size, right.size);  // round-off only
}

BisectionResult bisect_lines(const std::vector<PiecewiseLinearSpeed>& speeds, double n,
                             double tolerance, int max_iterations) {
  BisectionResult result;
  if (speeds.empty() || !(n > 0.0)) return result;
  auto total_at = [&](double T) {
    double sum = 0.0;
    for (const PiecewiseLinearSpeed& s : speeds) sum += s.size_at_time(T);
    return sum;
  };
  // Outer bounds: T = 0 (the vertical line, total 0 < n) and the slowest
  // time for all n units (every process then takes >= n units).
  double low = 0.0;
  double high = 0.0;
  for (const PiecewiseLinearSpeed& s : speeds) high = std::max(high, s.time(n));
  double T = high;
  double total = total_at(high);
  while (result.iterations < max_iterations && std::abs(total - n) > tolerance * n) {
    ++result.iterations;
    T = 0.5 * (low + high);
    total = total_at(T);
    if (total < n) {
      low = T;
    } else {
      high = T;
    }
    if (high - low <= 1e-15 * high) break;
  }
  result.time = T;
  for (const PiecewiseLinearSpeed& s : speeds) result.sizes.push_back(s.size_at_time(T));
  const double scale = n / total;
  for (double& x : result.sizes) x *= scale;
  return result;
}

}  // namespace flexmpi
