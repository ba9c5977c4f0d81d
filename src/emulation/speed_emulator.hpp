// Emulation of slower processing elements (docs/reference/behaviour.md, Emulation).
//
// A process emulated at relative speed s < 1 waits, after each monitored
// iteration, until its computation has taken as long as a core of speed s
// needs for its work. Nothing is active unless FLEXMPI_EMULATE_SPEED is set.
// FLEXMPI_EMULATE_MODE says how it waits:
// - burn (default): it spins on the CPU, so it looks like a dedicated slower
//   core by itself (CPU time ~ wall time), but each emulated core takes a real one;
// - sleep: it sleeps, and the monitor counts the sleep as computation and as
//   CPU time, so that the balancer sees the same dedicated slower core while
//   ~20 emulated cores share 2 real ones. Its real work must
//   stay well below the emulated time: an iteration whose real computation
//   already exceeds it is counted as late (ProcessInterval::emulation_late_iterations).
//
// The slower core's time comes from the work the process really did: the
// thread CPU time of its computation between MPI calls (a stretch), times
// (1/s - 1). The PMPI wrappers mark where each stretch starts and ends
// (IterationHook::computation_starts, before_communication), so that a loop
// with several synchronisations per iteration (CG's reductions, a halo
// exchange then a norm) is slow where it computes: padded once at the end of
// the iteration, the wait landed before the next iteration's first
// collective, where the fast rank waited for it whatever its share of the
// rows, and a balanced HPCCG gained nothing.
// - burn: each stretch is followed by a spin until the thread has used
//   (1/s - 1) times the stretch's CPU time more. Counted in CPU time, the
//   emulated core does 1/s times the work: on a core shared with another
//   program it is slowed by its share like a real one, and a preemption is
//   not multiplied by 1/s (waiting t (1/s - 1) of *wall* time after t made
//   the asked 2.0 ratio come out between 1.5 and 2.5).
// - sleep: the iteration's computation is padded (slept) up to its CPU time
//   / s. The time a process waits for one of the real cores, which 8-20
//   emulated PEs on 2 share, is not CPU time: it is absorbed by the pad, and
//   every PE of a class emulates the same speed.
// The target is not (a robust estimate of the time per work unit) x (the
// work units the application reported): that would make the emulated
// cluster's cost depend on the balancer's workload model: under EpiGraph's
// weight model, whose units are a forecast of the work, every emulated PE
// would sleep three times as long in total as under the count model.
//
// FLEXMPI_EMULATE_UNIT_SECONDS fixes instead the full-speed time per work
// unit (measured once beforehand on an idle core): the iteration is padded
// to that time x its work units / s, whatever its measured time. For work
// whose time per unit is truly constant (Jacobi's rows, CG's nonzeros), it
// makes every run of an experiment emulate exactly the same cluster.
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
/// to its emulated time `emulated_seconds`. Never negative.
double emulation_delay(double computation_seconds, double emulated_seconds);

/// true when an iteration that computed `computation_seconds` already took
/// longer than its emulated time: the emulation could not keep up, and the
/// iteration shows the real core's speed, not the emulated one's.
bool emulation_late(double computation_seconds, double emulated_seconds);

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

/// Spins on the CPU until this thread has used `seconds` more CPU time
/// (CLOCK_THREAD_CPUTIME_ID); returns the CPU time it used. On a core shared
/// with another program it takes longer than `seconds`, as the work of a
/// slower core would.
double burn_cpu(double seconds);

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
  /// Fixes the full-speed time per work unit (FLEXMPI_EMULATE_UNIT_SECONDS)
  /// instead of measuring the work's CPU time; seconds > 0, finite.
  void fix_unit_seconds(double seconds);
  /// Waits (burns or sleeps) what the iteration's computation, this long so
  /// far (the stretches' padding included), still needs on the emulated core,
  /// on a partition of the work units the work source reports. Returns true
  /// if the iteration was late: its real computation alone (waits for a core
  /// included) took longer than its emulated time (sleep mode, or a fixed
  /// unit time).
  bool slow_down(double computation_seconds);
  /// The same for a partition of `work_units` given by the caller.
  bool slow_down(double computation_seconds, double work_units);

  /// IterationHook: a stretch of computation starts (the iteration opens,
  /// or an MPI call returns): reads the thread's CPU time.
  void computation_starts() override;
  /// IterationHook: the stretch that ends at this MPI call is padded by its
  /// CPU time x (1/s - 1).
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
  /// Adds the open stretch's CPU time to the iteration's work.
  void close_stretch();
  /// Pads the open iteration as far as its work so far asks (all of it when
  /// `iteration_ends`); returns true if it ended late.
  bool pad(double computation_seconds, double work_units, bool iteration_ends);
  /// Burns or sleeps `seconds` of wall time, as the mode says; returns the seconds it took.
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
  double unit_seconds_ = 0.0;  // FLEXMPI_EMULATE_UNIT_SECONDS; 0: measured CPU time
  // The open iteration (reset at its end).
  bool in_stretch_ = false;         // between computation_starts and the next MPI call
  double stretch_cpu_start_ = 0.0;  // the thread's CPU time when the stretch started
  double work_cpu_ = 0.0;           // CPU time of its real work so far
  double burned_cpu_ = 0.0;         // burn mode: CPU time spun so far
  double padded_ = 0.0;             // wall time waited so far: computation, but not real work
};

}  // namespace flexmpi
