#include "util/clock.hpp"

#include <fstream>
#include <string>

namespace flexmpi {
namespace {

// The TSC is a usable clock only if it ticks at a constant rate through
// frequency changes and sleep states (constant_tsc + nonstop_tsc), and the
// kernel itself trusts it across cores.
bool invariant_tsc() {
#if defined(__x86_64__) || defined(__i386__)
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) {
      if (line.find(" constant_tsc") == std::string::npos ||
          line.find(" nonstop_tsc") == std::string::npos) {
        return false;
      }
      std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
      std::string name;
      return static_cast<bool>(source >> name) && name == "tsc";
    }
  }
#endif
  return false;
}

}  // namespace

IntervalTimer::IntervalTimer() {
#if defined(__x86_64__) || defined(__i386__)
  if (!invariant_tsc()) return;
  // 2 ms against CLOCK_MONOTONIC: the two reads' ~30 ns uncertainty is
  // then about 1e-5 of the rate.
  const double wall_start = wall_seconds();
  const std::uint64_t tsc_start = __rdtsc();
  while (wall_seconds() - wall_start < 2e-3) {
  }
  const std::uint64_t tsc_end = __rdtsc();
  const double wall_end = wall_seconds();
  if (tsc_end > tsc_start) {
    seconds_per_tick_ = (wall_end - wall_start) / static_cast<double>(tsc_end - tsc_start);
    use_tsc_ = true;
  }
#endif
}

}  // namespace flexmpi
