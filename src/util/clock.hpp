// Clocks used by monitoring. Wall time is CLOCK_MONOTONIC (vDSO, ~20 ns);
// CPU time is the calling thread's CPU clock, i.e. the CPU the computing
// thread actually got (thesis 4.2.1: Tcpu against Treal tells a shared PE).
#pragma once

#include <ctime>

namespace flexmpi {

inline double wall_seconds() noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

/// Seconds since the epoch (CLOCK_REALTIME): for traces, to be matched with
/// what happened outside the job (a batch job's start, a script's clock).
inline double unix_seconds() noexcept {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

inline double cpu_seconds() noexcept {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace flexmpi

#include <cstdint>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace flexmpi {

/// A cheap interval timer for the PMPI wrappers, which read a clock twice per
/// MPI call: the invariant time-stamp counter where the CPU has one (about
/// 10 ns a read on the reference VM against 27 ns for the vDSO clock), else
/// CLOCK_MONOTONIC. Calibrated once against CLOCK_MONOTONIC at start-up.
class IntervalTimer {
 public:
  IntervalTimer();

  /// Ticks of the timer now.
  [[nodiscard]] std::uint64_t now() const noexcept {
#if defined(__x86_64__) || defined(__i386__)
    if (use_tsc_) return __rdtsc();
#endif
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(t.tv_nsec);
  }
  /// Seconds in `ticks` of this timer.
  [[nodiscard]] double seconds(std::uint64_t ticks) const noexcept {
    return static_cast<double>(ticks) * seconds_per_tick_;
  }
  [[nodiscard]] bool uses_tsc() const noexcept { return use_tsc_; }

 private:
  bool use_tsc_ = false;
  double seconds_per_tick_ = 1e-9;
};

}  // namespace flexmpi
