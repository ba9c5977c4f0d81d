// The arithmetic of calibration (thesis 6.3.1), kept apart from the MPI that
// measures so that it is unit-tested: robust summaries of repeated timings,
// the message-size bands of a link, the per-collective fits.
//
// Pure functions, no MPI; flexmpi-calibrate and bench/comm_model use them.
#pragma once

#include <span>
#include <vector>

#include "model/comm_model.hpp"

namespace flexmpi {

/// A robust time from repeated measurements of one size.
struct RobustTime {
  double seconds = 0.0;  ///< median over rounds of each round's minimum
  double spread = 0.0;   ///< (largest - smallest round minimum) / seconds: the noise
};

/// `rounds[r]` holds the repetitions of round r (the sizes were interleaved
/// between rounds). The minimum of a round is its undisturbed time (the OS
/// and the other tenants only ever add); the median over rounds removes a
/// round whose every repetition was disturbed. Throws flexmpi::Error
/// (invalid_argument) for no rounds, an empty round or a negative time.
RobustTime median_of_minima(const std::vector<std::vector<double>>& rounds);

/// The two-parameter fit alpha + n beta (both >= 0) minimising the squared
/// relative error over the points (the model is judged by relative error).
/// Throws flexmpi::Error for sizes and seconds of different lengths, no
/// point, or a time <= 0.
LinkBand fit_hockney(std::span<const double> bytes, std::span<const double> seconds);

/// The largest |alpha + n beta - t| / t of `band` over the points.
double max_relative_error(const LinkBand& band, std::span<const double> bytes,
                          std::span<const double> seconds);

/// Message-size bands of a link from one-way times at increasing `bytes`:
/// the points are first split at `edges` (a band holds the sizes <= an edge:
/// the transport's eager limit, the cache sizes), groups of one point join
/// their left neighbour, then every band whose fit misses a point by more
/// than `tolerance` (relative) is split where the two halves fit best, as
/// long as each half keeps two points. A band ends halfway (geometrically)
/// between its last size and the next band's first. Throws flexmpi::Error
/// for fewer than two points, sizes not increasing, or a time <= 0.
std::vector<LinkBand> fit_link_bands(std::span<const double> bytes, std::span<const double> seconds,
                                     std::span<const double> edges, double tolerance);

/// The per-collective fit: measured / call_seconds(no fit) at each
/// calibrated size on `processes` ranks. Throws flexmpi::Error for sizes and
/// seconds of different lengths or a time <= 0.
CollectiveFit fit_collective(MpiLibrary library, Routine routine, int processes,
                             std::span<const double> bytes, std::span<const double> seconds,
                             const PiecewiseLink& link);

}  // namespace flexmpi
