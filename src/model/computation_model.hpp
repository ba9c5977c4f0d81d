// The computation part of the prediction model (thesis 5.3.1, eq. 5.3): the
// work of the next sampling interval, spread over a candidate partition, over
// each process's measured speed.
//
//   Regular applications: the work per iteration of the next interval by
//   linear extrapolation of the past intervals' (least squares over a short
//   window: one noisy interval does not tilt the line as a two-point
//   extrapolation would).
//   Irregular applications: the work of that interval in a profile of an
//   earlier run (a flexmpi trace, SPEC §5), corrected at run time by the
//   ratio of measured to profiled work of the interval just ended when they
//   differ by more than ProfileCorrection's threshold.
//
// Work is in the metric's units (FLOPs with PAPI, work units otherwise), speed
// in units per second. Work is spread over rows with the density measured on
// the blocks it was measured on (constant within a block): a candidate block
// gets the work of the rows it would hold. Pure functions, no MPI.
#pragma once

#include <cstdint>
#include <istream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flexmpi {

/// One sampling interval of a work profile (one line of a flexmpi trace).
struct ProfiledInterval {
  int interval = 0;                ///< "interval"
  int iterations = 0;              ///< "iterations" of the interval (> 0)
  std::vector<double> work;        ///< "metric_count" per process
  std::vector<std::int64_t> rows;  ///< rows per process the work was measured on (empty:
                                   ///< the run traced no partition)
  double seconds = 0.0;            ///< "wall_time" of the slowest process (0: not traced)

  /// Sum of the processes' work.
  [[nodiscard]] double total() const;
};

/// A work profile: the intervals of an earlier run, by interval index.
class WorkProfile {
 public:
  /// Reads a JSON-lines flexmpi trace. Per line: "interval", "iterations",
  /// "metric_count" (one number >= 0 per process) and the partition the work
  /// was measured on: "partition_before" when the line has it (the trace
  /// writes "partition" as the blocks *after* that interval's decision),
  /// else "partition", with as many entries as "metric_count"; a run that
  /// did not balance (FLEXMPI_POLICY=none) traces neither. Blank lines
  /// are skipped. Throws flexmpi::Error (bad_config) naming the file, the
  /// line and the key: missing file, bad JSON, missing or wrong key, no line.
  static WorkProfile load(const std::string& path);
  /// The same from a stream; `source` names it in messages.
  static WorkProfile parse(std::istream& in, std::string_view source);

  /// The profiled interval `interval`, or nullptr when the profile has none.
  [[nodiscard]] const ProfiledInterval* find(int interval) const;
  [[nodiscard]] const std::vector<ProfiledInterval>& intervals() const { return intervals_; }
  /// The profiled run's time: the sum of its intervals' wall times (slowest
  /// process); 0 when an interval has none traced.
  [[nodiscard]] double traced_seconds() const;

 private:
  std::vector<ProfiledInterval> intervals_;  // sorted by interval
};

/// Linear extrapolation (thesis 5.3.1): the least-squares line through the
/// last `window` values of `history` (oldest first), one step ahead, never
/// below 0. One value: that value. Throws flexmpi::Error (invalid_argument)
/// for an empty history, a negative or non-finite value, or window < 1.
double extrapolate(std::span<const double> history, int window = 4);

/// The run-time correction of a profile (thesis 5.3.1).
class ProfileCorrection {
 public:
  /// Corrects only when |measured / profiled - 1| > threshold (default 5 %:
  /// above the interval-to-interval noise of the work metric on the
  /// development VM, below any change of pattern worth following). Throws
  /// flexmpi::Error for a negative or non-finite threshold.
  explicit ProfileCorrection(double threshold = 0.05);

  /// The interval just ended: `measured` work against the profile's
  /// `profiled`. Sets the factor to measured / profiled beyond the threshold,
  /// back to 1 within it. Throws flexmpi::Error for negative values;
  /// profiled 0 leaves the factor unchanged.
  void observe(double profiled, double measured);
  /// The factor applied to the profile's next interval.
  [[nodiscard]] double factor() const { return factor_; }

 private:
  double threshold_;
  double factor_ = 1.0;
};

/// How much longer an iteration of the rest of a run takes than one of
/// interval `current`, by a profile of an earlier run: the mean time per
/// iteration of the profiled intervals after `current` (their slowest
/// process's wall time over their iterations) over `current`'s; where the
/// profile traced no wall time, the same ratio of the work. The
/// performance-aware policies predict the whole remaining run with it:
/// thesis 5.3.1 reads the profile for the next interval only, and an
/// epidemic's steps take 20 times longer at its peak than in its first
/// weeks, so the next interval held to the end misjudged the rest by that
/// much. Time, not work, where it can: EpiGraph's work units (an update
/// per individual, a contact per infectious one) differ in cost, so its
/// work rose 6.5 times where its time rose 20. 1 when the profile lacks
/// `current` or anything after it, or `current` took nothing.
[[nodiscard]] double remaining_time_ratio(const WorkProfile& profile, int current);

/// The work of the next interval, irregular application: the profile's
/// interval `next`, scaled to `iterations` iterations and by the correction.
/// Throws flexmpi::Error (invalid_argument) naming the interval when the
/// profile has none, or iterations < 1.
double profiled_work(const WorkProfile& profile, int next, int iterations,
                     const ProfileCorrection& correction);

/// Spreads `total` work over the candidate `rows` per process, with the
/// per-row density of `measured_work` on `measured_rows` (constant within each
/// measured block; a block of 0 rows carries no density). Both partitions
/// cover the same rows in order. Writes one value per candidate process into
/// `out` (size of `rows`). O(processes), no allocation. Throws flexmpi::Error
/// (invalid_argument) for different row totals, sizes that disagree, or
/// negative values.
void spread_work(double total, std::span<const double> measured_work,
                 std::span<const std::int64_t> measured_rows, std::span<const std::int64_t> rows,
                 std::span<double> out);

/// Eq. 5.3 per process: work / speed. The interval's computation time is
/// the slowest process's; eq. 5.3 as printed (all the work over the sum of
/// the speeds) is what a perfect balance would give.
struct ComputationTime {
  double slowest = 0.0;   ///< max over processes of work_i / speed_i, seconds
  double balanced = 0.0;  ///< eq. 5.3: sum of work / sum of speeds, seconds
};

/// Throws flexmpi::Error (invalid_argument) for sizes that differ, negative
/// work, or a speed <= 0 of a process with work.
ComputationTime computation_time(std::span<const double> work, std::span<const double> speeds);

}  // namespace flexmpi
