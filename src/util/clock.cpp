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

#if defined(__x86_64__) || defined(__i386__)
// One CLOCK_MONOTONIC read paired with the TSC at its middle: of 5 tries,
// the one whose two TSC reads around it lie closest, so a preemption between
// the reads (several ms with 8-18 processes starting on 2 cores) cannot
// shift the pair.
struct ClockPair {
  double wall = 0.0;
  std::uint64_t tsc = 0;
};

constexpr int kPairTries = 5;

ClockPair tight_pair() {
  ClockPair best;
  std::uint64_t best_width = UINT64_MAX;
  for (int attempt = 0; attempt < kPairTries; ++attempt) {
    const std::uint64_t before = __rdtsc();
    const double wall = wall_seconds();
    const std::uint64_t after = __rdtsc();
    if (after >= before && after - before < best_width) {
      best_width = after - before;
      best = {wall, before + (after - before) / 2};
    }
  }
  return best;
}
#endif

}  // namespace

IntervalTimer::IntervalTimer() {
#if defined(__x86_64__) || defined(__i386__)
  if (!invariant_tsc()) return;
  // 2 ms against CLOCK_MONOTONIC: each end's uncertainty is then about 1e-5
  // of the rate. Each end is a tight pair: with the two clocks read one
  // after the other, a process preempted between the first two reads got a
  // rate off by the preemption (one rank's every MPI call then outlasted its
  // iteration: computation 0 in the trace, and the balancer gave it all the
  // rows).
  const ClockPair start = tight_pair();
  while (wall_seconds() - start.wall < 2e-3) {
  }
  const ClockPair end = tight_pair();
  if (end.tsc > start.tsc && end.wall > start.wall) {
    seconds_per_tick_ = (end.wall - start.wall) / static_cast<double>(end.tsc - start.tsc);
    use_tsc_ = true;
  }
#endif
}

}  // namespace flexmpi
