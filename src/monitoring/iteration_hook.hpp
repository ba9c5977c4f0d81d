// What runs at the end of a monitored iteration, between its computation and
// the reading of its times. The emulation of a slower processing element
// (src/emulation) is one: Monitor calls it without knowing it,
// so measuring does not depend on emulating.
#pragma once

namespace flexmpi {

class IterationHook {
 public:
  virtual ~IterationHook() = default;
  /// Called when a stretch of computation of the open iteration starts: the
  /// iteration opens, or one of its MPI calls returns.
  virtual void computation_starts() = 0;
  /// Called when the open iteration enters an MPI call (the PMPI wrappers),
  /// with its computation time so far: the end of a stretch of computation.
  /// May wait, to pad that stretch (the emulation pads each one, so that a
  /// loop with several synchronisations per iteration is slow where it
  /// computes, not at one place).
  virtual void before_communication(double computation_seconds) = 0;
  /// Called with the iteration's computation time so far (wall - MPI,
  /// seconds); may wait. Returns true if the iteration ran late
  /// (IterationSample::emulation_late).
  virtual bool after_computation(double computation_seconds) = 0;
  /// true if the process's CPU time is not its PE's (it sleeps instead of
  /// computing): Monitor then reports CPU time = wall time.
  [[nodiscard]] virtual bool reports_cpu_as_wall() const = 0;
};

}  // namespace flexmpi
