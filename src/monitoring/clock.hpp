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

inline double cpu_seconds() noexcept {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace flexmpi
