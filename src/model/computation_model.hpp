// The computation part of the prediction model (thesis 5.3.1, eq. 5.3): the
// work of the next sampling interval, spread over a candidate partition, over
// each process's measured speed.
//
//   Regular applications: the work per iteration of the next interval by
//   linear extrapolation of the past intervals' (least squares over a short
//   window: one noisy interval does not tilt the line as a two-point
//   extrapolation would).
//   Irregular applications: the work of that interval in a profile of an
//   earlier run (a flexmpi trace, docs/reference/trace.md), corrected at run time by the
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
  double speed = 0.0;              ///< "speed" summed over the processes (0: not traced)
  double least_mpi = 0.0;          ///< "mpi_time" of the process that spent least in MPI

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
  /// are skipped. Ranges: interval 0..2147483647, iterations 1..2147483647,
  /// metric_count and speed 0..1e18, wall_time and mpi_time 0..1e9 s,
  /// partition rows whole numbers 0..2147483647. Throws flexmpi::Error
  /// (bad_config) naming the file, the line and the key: missing file, bad
  /// JSON, missing or wrong key, a number out of its range, no line.
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

/// One interval of a profiled run as the remaining-run prediction reads it:
/// an iteration took inefficiency x work / speed of computation, and
/// overhead_seconds besides.
struct ProfiledStep {
  int iterations = 0;
  int processes = 0;  ///< of the profiled run in this interval
  /// Work of one iteration, in the units of the speed measured at the
  /// interval the prediction starts from (see profiled_steps).
  double work_per_iteration = 0.0;
  /// How much longer the computation took than work / summed speed (the
  /// imbalance left between rebalances): (seconds - overhead) / (work / speed).
  double inefficiency = 1.0;
  /// Seconds of one iteration beyond the computation: what the process that
  /// waited least spent in MPI.
  double overhead_seconds = 0.0;
};

/// The profiled intervals from `current` on (the first is `current`; empty
/// when the profile lacks it), for the performance-aware policies'
/// prediction of the whole remaining run: thesis 5.3.1 reads the profile for
/// the next interval only, and an epidemic's steps take 20 times longer at
/// its peak than in its first weeks.
///  - Work per iteration is rescaled by the profiled speed at `current` over
///    the interval's own: EpiGraph's work units (an update per individual, a
///    contact per infectious one) differ in cost, and its summed speed in
///    units per second rose 15 % towards the peak and fell 25 % after it.
///  - Computation and overhead apart: EpiGraph's quiet weeks are mostly
///    communication, its peak computation (1.1-1.4 times work / speed), and a
///    correction of the whole iteration learnt on one misjudged the other.
///    The inefficiency is 1 and the overhead 0 where the profile traced no
///    wall time, speed or MPI time.
///  - Every value is the median over the interval and its two neighbours on
///    each side: one interval of the profiled run (its start, a rebalance's
///    first touch of moved rows) is no forecast of this one's.
[[nodiscard]] std::vector<ProfiledStep> profiled_steps(const WorkProfile& profile, int current);

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
