// Emulation of slower processing elements (SPEC section 6).
//
// A process emulated at relative speed s < 1 waits, after each monitored
// iteration, until its computation has taken as long as a core of speed s
// needs for its work. Nothing is active unless FLEXMPI_EMULATE_SPEED is set.
// FLEXMPI_EMULATE_MODE says how it waits:
// - burn (default): it spins on the CPU, so it looks like a dedicated slower
//   core by itself (CPU time ~ wall time), but each emulated core takes a real one;
// - sleep: it sleeps, and the monitor counts the sleep as computation and as
//   CPU time, so that the balancer sees the same dedicated slower core while
//   ~20 emulated cores share 2 real ones (SPEC section 6). Its real work must
//   stay well below the emulated time: an iteration whose real computation
//   already exceeds it is counted as late (ProcessInterval::emulation_late_iterations).
//
// The wait is spread over the iteration's stretches of computation: when the
// iteration enters an MPI call (IterationHook::before_communication), the
// stretch that ends there is padded by its own time x (1/s - 1), never past
// the iteration's target, and the iteration's end pads what is left up to
// the target. Padding once at the end of the iteration made a loop with
// several synchronisations per iteration (CG's reductions, a halo exchange
// then a norm) slow at one place only: the wait landed before the next
// iteration's first collective, where the fast rank waited for it whatever
// its share of the rows, and a balanced HPCCG evened its computation and
// gained nothing (issue 35).
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

#include <ctime>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "monitoring/iteration_hook.hpp"

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

/// How an emulated core waits out the time its slower speed adds (FLEXMPI_EMULATE_MODE).
enum class EmulationMode {
  burn,   ///< spins on the CPU: one real core per emulated one
  sleep,  ///< sleeps; the monitor counts the sleep as computation and CPU time
};

/// "burn" or "sleep"; nothing for any other text.
std::optional<EmulationMode> parse_emulation_mode(std::string_view text);

/// Time that pads an iteration which computed `computation_seconds` up
/// to the emulated time `unit_seconds` x `emulated_units` (unit_seconds: the
/// typical full-speed time per work unit; emulated_units: the work in
/// full-speed units, SpeedFunction::emulated_units). Never negative.
double emulation_delay(double computation_seconds, double unit_seconds, double emulated_units);

/// true when an iteration that computed `computation_seconds` already took
/// longer than its emulated time (same arguments as emulation_delay): the
/// emulation could not keep up, and the iteration shows the real core's
/// speed, not the emulated one's.
bool emulation_late(double computation_seconds, double unit_seconds, double emulated_units);

/// Spins on the CPU (no sleeping) for `seconds`, with the CPU's spin-wait
/// hint (x86 PAUSE), so that a sibling hardware thread running another
/// process keeps most of the core.
void busy_wait(double seconds);

/// The CLOCK_MONOTONIC time `seconds` >= 0 after `start_seconds` (both in
/// seconds, as wall_seconds() reads it), normalised for clock_nanosleep.
timespec monotonic_deadline(double start_seconds, double seconds);

/// Sleeps for `seconds`: clock_nanosleep to an absolute CLOCK_MONOTONIC
/// deadline, which a signal cannot stretch (the sleep resumes towards the
/// same deadline). Wakes up late by the timer slack (~50 us) plus the time
/// the scheduler takes to run the process again.
void sleep_wait(double seconds);

/// The full-speed time per work unit of a process, the base of its emulated
/// time (emulated units x unit seconds):
/// - `typical` (burn mode): the (lower) median of its last kWindow iterations
///   on the same work (a change of more than 1 % starts afresh, since the
///   time per unit may depend on the partition size). The median ignores the
///   odd slow iteration (first touch of a new block, a preemption) that a
///   mean or the last sample would carry into the target, and follows a core
///   whose own speed drifts.
/// - `uncontended` (sleep mode): the kUncontendedQuantile (a low quantile)
///   of its last kUncontendedWindow iterations, whatever the work. A
///   sleeping emulated PE stands for a
///   dedicated core: the wait for one of the real cores, which 8-20 emulated
///   PEs on 2 share, is an artefact of the emulation. At relative speeds of
///   0.006-0.015 (the thesis's cluster, bench/malleability) the target is
///   65-160 times the real work, and the processes of a synchronised
///   iteration all start their real work at once: with the median, a process
///   that waited for a core in most of its iterations emulated a PE up to
///   twice slower than another of its class, and the balancer moved CG's rows
///   every third interval without ever balancing them. Waiting only lengthens
///   a real time, so the least one is the core's. Not started afresh on a new
///   block: its first iterations, all waiting, made every moved process look
///   slow in the interval after a move, which asked for the next move
///   (docs/architecture.md, "sleep mode"). A long window: with the least
///   of the last 64 iterations, a VM whose cores slowed down for a few
///   seconds (measured: a pinned 0.5 ms loop varies 1.4x) made the emulated
///   PEs 25 % slower with the same rows, since the emulated time is the real
///   one times 1/s. A low quantile, not the least: the least since the start
///   let one iteration whose work was reported larger than it was done
///   (EpiGraph) make a PE 3 times faster for the rest of the run.
/// - `given` (FLEXMPI_EMULATE_UNIT_SECONDS): a fixed time per unit, measured
///   once beforehand on an idle core. Every emulated PE then runs at exactly
///   its speed in every run: with `uncontended` the level still followed what
///   the first iterations of a run met (the window of a 250-iteration CG run
///   never fills), and a CG run's PEs were up to 2 times slower than in the
///   run before, so a goal predicted from its first intervals differed by
///   40 % between runs of one cell. For work whose time per unit is truly
///   constant (Jacobi's rows, CG's nonzeros); not for a forecast of the work
///   (EpiGraph's weights), which it would make exact.
class UnitTimeEstimate {
 public:
  enum class Reference { typical, uncontended, given };
  static constexpr std::size_t kWindow = 15;
  static constexpr std::size_t kUncontendedWindow = 512;
  static constexpr double kUncontendedQuantile = 0.1;
  explicit UnitTimeEstimate(Reference reference = Reference::typical) : reference_(reference) {}
  /// The `given` reference: `seconds_per_unit` > 0 whatever the iterations add.
  static UnitTimeEstimate given(double seconds_per_unit);
  /// Adds an iteration that computed `units` work units in `seconds`
  /// (units <= 0: the work is unknown, one unit per iteration).
  void add(double seconds, double units);
  /// The seconds per unit of the estimate; 0 before the first sample.
  [[nodiscard]] double unit_seconds() const;

 private:
  Reference reference_;
  std::vector<double> window_;  // per-unit times, oldest first
  double units_ = -1.0;         // work of the samples in the window (typical)
  double given_ = 0.0;          // seconds per unit (given)
};

/// The slowdown of one process; Monitor calls it at the end of every iteration.
class SpeedEmulator : public IterationHook {
 public:
  /// Work units of this process's partition now (the runtime's work()).
  using WorkSource = std::function<double()>;

  /// speed 1.0 disables the emulation.
  explicit SpeedEmulator(double speed = 1.0, EmulationMode mode = EmulationMode::burn);
  /// A speed function; `work` tells the current partition size (may be empty
  /// for a constant function).
  SpeedEmulator(SpeedFunction function, WorkSource work, EmulationMode mode = EmulationMode::burn);
  /// Constant speed of `rank` from a list; ranks past its end run at full speed.
  static SpeedEmulator for_rank(const std::vector<double>& speeds, int rank);
  /// Speed function of `rank` from parse_speed_list; `work` gives its partition size.
  static SpeedEmulator for_rank(const std::vector<SpeedFunction>& functions, int rank,
                                WorkSource work, EmulationMode mode = EmulationMode::burn);

  [[nodiscard]] bool active() const { return function_.slows_down(); }
  /// true when this process sleeps its emulated time: its real CPU time is
  /// then not the emulated core's (Monitor reports CPU time = wall time).
  [[nodiscard]] bool sleeps() const { return active() && mode_ == EmulationMode::sleep; }
  /// The speed of small partitions (the constant speed of a constant function).
  [[nodiscard]] double speed() const { return function_.base_speed(); }
  [[nodiscard]] const SpeedFunction& function() const { return function_; }
  /// For log messages: "0.5" or "0.9@2000:0.3 (speed per work unit beyond each size)",
  /// followed by ", sleeping the extra time (...)" in sleep mode.
  [[nodiscard]] std::string describe() const;
  /// Fixes the full-speed time per work unit (FLEXMPI_EMULATE_UNIT_SECONDS,
  /// UnitTimeEstimate::given) instead of measuring it; seconds > 0.
  void fix_unit_seconds(double seconds) { unit_time_ = UnitTimeEstimate::given(seconds); }
  /// Waits (burns or sleeps) the emulation delay for an iteration that
  /// computed this long (the stretches' padding included), on a partition of
  /// the work units the work source reports. Returns true if the iteration
  /// was late (emulation_late).
  bool slow_down(double computation_seconds);
  /// The same for a partition of `work_units` given by the caller.
  bool slow_down(double computation_seconds, double work_units);

  /// IterationHook: pads the stretch of computation that ends at this MPI
  /// call by its time x (1/s - 1), within the iteration's target.
  void before_communication(double computation_seconds) override;
  /// IterationHook: slow_down() if active, and sleeps().
  bool after_computation(double computation_seconds) override {
    return active() && slow_down(computation_seconds);
  }
  [[nodiscard]] bool reports_cpu_as_wall() const override { return sleeps(); }

 private:
  /// Emulated time per unit of real computation on `work_units`: 1/s for a
  /// constant speed, the average over the partition for a speed function.
  [[nodiscard]] double slowdown(double work_units) const;
  /// The target of an iteration on `work_units`: full-speed units (emulated_units).
  [[nodiscard]] double emulated(double work_units) const;
  /// Burns or sleeps, as the mode says; returns the seconds it took.
  double wait(double seconds) const;

  /// A pad shorter than this waits for a later stretch or the iteration's
  /// end: a sleep wakes ~50 us late, and a spin costs two clock reads.
  [[nodiscard]] double least_pad() const {
    return mode_ == EmulationMode::sleep ? kLeastSleepPad : kLeastBurnPad;
  }
  static constexpr double kLeastSleepPad = 200e-6;
  static constexpr double kLeastBurnPad = 1e-6;

  SpeedFunction function_;
  WorkSource work_;
  EmulationMode mode_;
  UnitTimeEstimate unit_time_;
  // The open iteration's stretches (reset at its end).
  double stretch_start_ = 0.0;  // its computation when the current stretch began
  double owed_ = 0.0;           // padding its stretches asked for and not yet waited
  double padded_ = 0.0;         // padding waited so far: computation, but not real work
};

}  // namespace flexmpi
