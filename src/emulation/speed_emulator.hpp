// Emulation of slower processing elements (SPEC section 6).
//
// A process emulated at relative speed s < 1 busy-waits, after each monitored
// iteration, until its computation has taken as long as a core of speed s
// needs for its work: it looks like a dedicated slower core (CPU time ~ wall
// time), which a sleep would not. Nothing is active unless
// FLEXMPI_EMULATE_SPEED is set.
//
// The target time is the process's *typical* full-speed time per work unit
// (the median of its recent iterations) times the work divided by s, and the
// wait pads each iteration up to it. Earlier versions waited t (1/s - 1)
// after an iteration that computed for t, which multiplied every disturbance
// of t (a preemption, a cold cache, the other rank's activity on a sibling
// hardware thread) by 1/s: the asked 2.0 ratio came out anywhere between 1.5
// and 2.5 (issue 11). Padding to a robust target absorbs the disturbance.
//
// The speed of a rank may also be a function of its partition size, to
// reproduce the memory cliffs of the FPM paper (Rychkov et al., sec. 1, 4) on
// one machine: "0.9@2000:0.3" runs the first 2000 work units of an iteration
// at 0.9 and the units beyond at 0.3, like a partition that no longer fits in
// memory and pages. The time is continuous in the size, so a balanced
// partition exists, but the speed x / t(x) falls beyond the cliff: a constant
// speed model mispredicts it.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace flexmpi {

/// Relative speed of an emulated core as a function of the work units x of
/// its partition: segment j (from sizes[j-1] to sizes[j]) runs at speeds[j].
class SpeedFunction {
 public:
  /// A constant relative speed in (0, 1] (implicit: a number is a constant function).
  SpeedFunction(double speed = 1.0);  // NOLINT(google-explicit-constructor)
  /// speeds.size() == sizes.size() + 1; sizes > 0, strictly increasing;
  /// speeds in (0, 1]. Throws Error(invalid_argument) otherwise.
  SpeedFunction(std::vector<double> speeds, std::vector<double> sizes);

  /// The speed of the first segment: the speed of small partitions.
  [[nodiscard]] double base_speed() const { return speeds_.front(); }
  [[nodiscard]] bool constant() const { return sizes_.empty(); }
  /// false when every segment runs at full speed.
  [[nodiscard]] bool slows_down() const;
  /// Time of `work_units` units in full-speed units: sum over segments of
  /// (units in the segment) / (speed of the segment).
  [[nodiscard]] double emulated_units(double work_units) const;
  /// Average relative speed over a partition of `work_units`: x / emulated_units(x);
  /// base_speed() for x <= 0 (unknown size).
  [[nodiscard]] double effective_speed(double work_units) const;
  /// "0.9@2000:0.3", the FLEXMPI_EMULATE_SPEED item it was parsed from.
  [[nodiscard]] std::string text() const;

  friend bool operator==(const SpeedFunction&, const SpeedFunction&) = default;
  friend std::ostream& operator<<(std::ostream& out, const SpeedFunction& f) {
    return out << f.text();
  }

 private:
  std::vector<double> speeds_;
  std::vector<double> sizes_;
};

/**
 * Parses FLEXMPI_EMULATE_SPEED: one item per rank, comma-separated; an item
 * is a relative speed in (0, 1] ("0.5"), or a speed function of the work
 * units of the partition, SPEED@SIZE:SPEED[@SIZE:SPEED...] with increasing
 * sizes ("0.9@2000:0.3": 0.9 for the first 2000 units, 0.3 beyond).
 * Throws Error(invalid_argument) saying which item is wrong and why.
 */
std::vector<SpeedFunction> parse_speed_list(std::string_view text);

/// Busy time that pads an iteration which computed `computation_seconds` up
/// to the emulated time `unit_seconds` x `emulated_units` (unit_seconds: the
/// typical full-speed time per work unit; emulated_units: the work in
/// full-speed units, SpeedFunction::emulated_units). Never negative.
double emulation_delay(double computation_seconds, double unit_seconds, double emulated_units);

/// Spins on the CPU (no sleeping) for `seconds`, with the CPU's spin-wait
/// hint (x86 PAUSE), so that a sibling hardware thread running another
/// process keeps most of the core.
void busy_wait(double seconds);

/// The typical full-speed time per work unit of a process: the (lower) median of its
/// last iterations on the same work (a change of more than 1 % starts
/// afresh, since the time per unit may depend on the partition size). The
/// median ignores the odd slow iteration (first touch of a new block, a
/// preemption) that a mean or the last sample would carry into the target.
class UnitTimeEstimate {
 public:
  static constexpr std::size_t kWindow = 15;
  /// Adds an iteration that computed `units` work units in `seconds`
  /// (units <= 0: the work is unknown, one unit per iteration).
  void add(double seconds, double units);
  /// The median seconds per unit of the window; 0 before the first sample.
  [[nodiscard]] double unit_seconds() const;

 private:
  std::vector<double> window_;  // per-unit times, oldest first
  double units_ = -1.0;         // work of the samples in the window
};

/// The slowdown of one process.
class SpeedEmulator {
 public:
  /// Work units of this process's partition now (the runtime's work()).
  using WorkSource = std::function<double()>;

  /// speed 1.0 disables the emulation.
  explicit SpeedEmulator(double speed = 1.0);
  /// A speed function; `work` tells the current partition size (may be empty
  /// for a constant function).
  SpeedEmulator(SpeedFunction function, WorkSource work);
  /// Constant speed of `rank` from a list; ranks past its end run at full speed.
  static SpeedEmulator for_rank(const std::vector<double>& speeds, int rank);
  /// Speed function of `rank` from parse_speed_list; `work` gives its partition size.
  static SpeedEmulator for_rank(const std::vector<SpeedFunction>& functions, int rank,
                                WorkSource work);

  [[nodiscard]] bool active() const { return function_.slows_down(); }
  /// The speed of small partitions (the constant speed of a constant function).
  [[nodiscard]] double speed() const { return function_.base_speed(); }
  [[nodiscard]] const SpeedFunction& function() const { return function_; }
  /// For log messages: "0.5" or "0.9@2000:0.3 (speed per work unit beyond each size)".
  [[nodiscard]] std::string describe() const;
  /// Busy-waits the emulation delay for an iteration that computed this long,
  /// on a partition of the work units the work source reports.
  void slow_down(double computation_seconds);
  /// The same for a partition of `work_units` given by the caller.
  void slow_down(double computation_seconds, double work_units);

 private:
  SpeedFunction function_;
  WorkSource work_;
  UnitTimeEstimate unit_time_;
};

}  // namespace flexmpi
