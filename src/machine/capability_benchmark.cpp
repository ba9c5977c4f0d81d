#include "machine/capability_benchmark.hpp"

#include <string>

#include "flexmpi/error.hpp"
#include "util/statistics.hpp"

namespace flexmpi::machine {

double linpack_operations(int order) {
  if (order < 1) {
    throw Error(Errc::invalid_argument, "capability benchmark: matrix order " +
                                            std::to_string(order) + ": expected 1 or more");
  }
  const double n = order;
  return 2.0 / 3.0 * n * n * n + 2.0 * n * n;
}

double capability_mflops(int order, const std::vector<double>& seconds, double relative_speed) {
  if (seconds.empty()) {
    throw Error(Errc::invalid_argument, "capability benchmark: no solve time to rate");
  }
  if (!(relative_speed > 0 && relative_speed <= 1)) {
    throw Error(Errc::invalid_argument, "capability benchmark: relative speed " +
                                            std::to_string(relative_speed) +
                                            ": expected a number in (0, 1]");
  }
  // The median: a run disturbed by another process does not move the rating.
  const double typical = median(seconds);
  if (!(typical > 0)) {
    throw Error(Errc::invalid_argument, "capability benchmark: median solve time " +
                                            std::to_string(typical) + " s: expected > 0");
  }
  return linpack_operations(order) / typical * 1e-6 * relative_speed;
}

}  // namespace flexmpi::machine
