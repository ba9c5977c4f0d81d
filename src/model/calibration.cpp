// Calibration arithmetic (calibration.hpp): robust timings, link bands,
// per-collective fits.
#include "model/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "flexmpi/error.hpp"
#include "util/statistics.hpp"

namespace flexmpi {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Errc::invalid_argument, "calibration: " + message);
}

void check_points(std::span<const double> bytes, std::span<const double> seconds,
                  std::size_t at_least) {
  if (bytes.size() != seconds.size() || bytes.size() < at_least) {
    invalid("expected as many sizes as times and at least " + std::to_string(at_least) + ", got " +
            std::to_string(bytes.size()) + " sizes and " + std::to_string(seconds.size()) +
            " times");
  }
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (!(seconds[i] > 0.0) || !std::isfinite(seconds[i])) {
      invalid("time at " + std::to_string(bytes[i]) + " bytes: expected > 0, got " +
              std::to_string(seconds[i]));
    }
    if (!(bytes[i] >= 0.0) || (i > 0 && !(bytes[i] > bytes[i - 1]))) {
      invalid("sizes: expected increasing bytes >= 0 at point " + std::to_string(i));
    }
  }
}

// The best split of points [first, last) into two bands of >= 2 points each:
// the index where the second starts, or `last` when none fits better.
std::size_t best_split(std::span<const double> bytes, std::span<const double> seconds,
                       std::size_t first, std::size_t last) {
  std::size_t best = last;
  double best_error = max_relative_error(
      fit_hockney(bytes.subspan(first, last - first), seconds.subspan(first, last - first)),
      bytes.subspan(first, last - first), seconds.subspan(first, last - first));
  for (std::size_t cut = first + 2; cut + 2 <= last; ++cut) {
    double error = 0.0;
    for (const auto& [a, b] : {std::pair{first, cut}, std::pair{cut, last}}) {
      const auto n = bytes.subspan(a, b - a);
      const auto t = seconds.subspan(a, b - a);
      error = std::max(error, max_relative_error(fit_hockney(n, t), n, t));
    }
    if (error < best_error) {
      best_error = error;
      best = cut;
    }
  }
  return best;
}

}  // namespace

RobustTime median_of_minima(const std::vector<std::vector<double>>& rounds) {
  if (rounds.empty()) invalid("expected at least one round of timings");
  std::vector<double> minima;
  for (const std::vector<double>& round : rounds) {
    if (round.empty()) invalid("expected at least one repetition per round");
    const double least = *std::min_element(round.begin(), round.end());
    if (!(least >= 0.0)) invalid("expected times >= 0, got " + std::to_string(least));
    minima.push_back(least);
  }
  const double seconds = median(minima);
  const auto [lo, hi] = std::minmax_element(minima.begin(), minima.end());
  return {seconds, seconds > 0.0 ? (*hi - *lo) / seconds : 0.0};
}

LinkBand fit_hockney(std::span<const double> bytes, std::span<const double> seconds) {
  check_points(bytes, seconds, 1);
  // Rows divided by t: minimise sum ((alpha + n beta) / t - 1)^2.
  double aa = 0, ab = 0, bb = 0, a1 = 0, b1 = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const double x = 1.0 / seconds[i], y = bytes[i] / seconds[i];
    aa += x * x;
    ab += x * y;
    bb += y * y;
    a1 += x;
    b1 += y;
  }
  const double det = aa * bb - ab * ab;
  if (det > 1e-12 * aa * bb) {
    const double alpha = (a1 * bb - b1 * ab) / det, beta = (b1 * aa - a1 * ab) / det;
    if (alpha >= 0.0 && beta >= 0.0) return {bytes.back(), alpha, beta};
  }
  // One parameter only: the better of latency alone and bandwidth alone.
  const LinkBand latency{bytes.back(), a1 / aa, 0.0};
  const LinkBand bandwidth{bytes.back(), 0.0, bb > 0.0 ? b1 / bb : 0.0};
  return max_relative_error(latency, bytes, seconds) <=
                 max_relative_error(bandwidth, bytes, seconds)
             ? latency
             : bandwidth;
}

double max_relative_error(const LinkBand& band, std::span<const double> bytes,
                          std::span<const double> seconds) {
  double worst = 0.0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    worst = std::max(worst, std::abs(band.alpha + bytes[i] * band.beta - seconds[i]) / seconds[i]);
  }
  return worst;
}

std::vector<LinkBand> fit_link_bands(std::span<const double> bytes, std::span<const double> seconds,
                                     std::span<const double> edges, double tolerance) {
  check_points(bytes, seconds, 2);
  // Starts of the bands: at each edge, then one-point groups joined to the left.
  std::vector<std::size_t> starts = {0};
  for (std::size_t i = 1; i < bytes.size(); ++i) {
    const bool crosses = std::any_of(edges.begin(), edges.end(),
                                     [&](double e) { return bytes[i - 1] <= e && bytes[i] > e; });
    if (crosses && i - starts.back() >= 2 && bytes.size() - i >= 2) starts.push_back(i);
  }
  starts.push_back(bytes.size());
  // Split bands that miss a point by more than the tolerance.
  for (std::size_t b = 0; b + 1 < starts.size();) {
    const std::size_t first = starts[b], last = starts[b + 1];
    const auto n = bytes.subspan(first, last - first);
    const auto t = seconds.subspan(first, last - first);
    const std::size_t cut = max_relative_error(fit_hockney(n, t), n, t) > tolerance
                                ? best_split(bytes, seconds, first, last)
                                : last;
    if (cut < last) {
      starts.insert(starts.begin() + static_cast<std::ptrdiff_t>(b + 1), cut);
    } else {
      ++b;
    }
  }
  std::vector<LinkBand> bands;
  for (std::size_t b = 0; b + 1 < starts.size(); ++b) {
    const std::size_t first = starts[b], last = starts[b + 1];
    LinkBand band =
        fit_hockney(bytes.subspan(first, last - first), seconds.subspan(first, last - first));
    if (last < bytes.size()) band.up_to = std::sqrt(bytes[last - 1] * bytes[last]);
    bands.push_back(band);
  }
  return bands;
}

CollectiveFit fit_collective(MpiLibrary library, Routine routine, int processes,
                             std::span<const double> bytes, std::span<const double> seconds,
                             const PiecewiseLink& link) {
  check_points(bytes, seconds, 1);
  CollectiveFit fit{processes, {}};
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const double modelled = call_seconds(library, routine, bytes[i], processes, link);
    fit.points.push_back({std::max(bytes[i], 1.0), modelled > 0.0 ? seconds[i] / modelled : 1.0});
  }
  return fit;
}

}  // namespace flexmpi
