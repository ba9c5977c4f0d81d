#include "balancing/fpm/fpm_partitioner.hpp"

#include <algorithm>
#include <cmath>
#include <exception>

#include "balancing/fpm/piecewise_linear_speed.hpp"

namespace flexmpi {

PartitionResult FpmPartitioner::partition(const PartitionInput& input) {
  const std::string who = std::string(name()) + ": ";
  auto keep = [&](const std::string& why) {
    return PartitionResult{input.current, who + why + ": partition kept"};
  };
  stats_ = {};
  if (input.current.size() == 1) return keep("one process, nothing to balance");
  FpmMeasurement m;
  if (const std::string problem = learn(input, m); !problem.empty()) return keep(problem);
  const std::size_t p = input.current.size();
  for (std::size_t i = 0; i < p; ++i) {
    // An empty block (fewer rows than processes) gives no speed: with no
    // earlier measurement there is nothing to model this process with.
    if (history_.points(i).empty())
      return keep("process " + std::to_string(i) + " has no measurement yet");
  }
  try {
    Solution solution = solve(history_, m);
    if (solution.sizes.size() != p)
      return keep(solution.fallback.empty() ? "no solution" : solution.fallback);
    PartitionResult result{blocks_for_sizes(input, solution.sizes), solution.fallback};
    if (!result.fallback.empty()) result.fallback = who + result.fallback;
    if (!covers_exactly(result.blocks, input.global_size) || result.blocks.size() != p) {
      return keep("the rounded sizes do not cover the rows");
    }
    return result;
  } catch (const std::exception& e) {
    // GSL allocation failures, sizes that sum to zero: never a crash.
    return keep(std::string("failed (") + e.what() + ")");
  }
}

void FpmPartitioner::observe(const PartitionInput& input) {
  FpmMeasurement m;
  if (input.current.size() > 1) learn(input, m);
}

std::string FpmPartitioner::learn(const PartitionInput& input, FpmMeasurement& m) {
  if (std::string problem = measure(input, m); !problem.empty()) return problem;
  const std::size_t p = input.current.size();
  // A model is valid for one set of processes and one problem size only.
  if (history_.processes() != p || history_.total() != m.total) history_.reset(p, m.total);
  for (std::size_t i = 0; i < p; ++i) history_.add(i, m.size[i], m.size[i] / m.time[i]);
  return "";
}

FpmPartitioner::Solution FpmPartitioner::solve_by_bisection(const SpeedHistory& history) {
  std::vector<PiecewiseLinearSpeed> speeds;
  speeds.reserve(history.processes());
  for (std::size_t i = 0; i < history.processes(); ++i) speeds.emplace_back(history.points(i));
  const double n = history.total();
  const BisectionResult result = bisect_lines(speeds, n);
  // Residual as for the solvers: the sizes sum to n exactly, so the largest
  // relative time difference to process 1.
  double residual = 0.0;
  for (std::size_t i = 1; i < speeds.size(); ++i) {
    residual = std::max(
        residual, std::abs(speeds[i].time(result.sizes[i]) - speeds[0].time(result.sizes[0])) /
                      std::max(result.time, 1e-300));
  }
  stats_ = {"bisection", result.iterations, residual, residual < 1e-6};
  if (result.sizes.size() != history.processes()) return {{}, "bisection found no line"};
  return {result.sizes, ""};
}

}  // namespace flexmpi
