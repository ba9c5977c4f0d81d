#include "balancing/evidence_measures.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "util/statistics.hpp"

namespace flexmpi {

// (max - min) / max, 0 without a positive time (Alg. 5 evaluateLoadBalance).
double imbalance_of(const std::vector<double>& times) {
  if (times.empty()) return 0.0;
  const auto [low, high] = std::minmax_element(times.begin(), times.end());
  return *high > 0.0 ? (*high - *low) / *high : 0.0;
}

// Workload of a block in the model's units: rows, or the sum of its rows' work.
double block_work(const RowBlock& block, const std::vector<double>& row_work) {
  if (row_work.empty()) return static_cast<double>(block.count);
  const auto first = row_work.begin() + block.displ;
  return std::accumulate(first, first + block.count, 0.0);
}

// The largest change of a block, in rows, over the mean block: how far the
// blocks are from a partitioner's own target.
double departure(const Decomposition& current, const Decomposition& target,
                 std::int64_t global_size) {
  if (current.empty() || global_size <= 0) return 0.0;
  std::int64_t largest = 0;
  for (std::size_t p = 0; p < current.size() && p < target.size(); ++p) {
    largest = std::max(largest, std::abs(target[p].count - current[p].count));
  }
  return static_cast<double>(largest) * static_cast<double>(current.size()) /
         static_cast<double>(global_size);
}

// The run's time per iteration on the evidence's blocks: per interval the
// slowest process's wall time per iteration, the median over the intervals.
double slowest_wall_per_iteration(const std::deque<IntervalReport>& evidence) {
  std::vector<double> slowest;
  for (const IntervalReport& report : evidence) {
    double most = 0.0;
    for (const ProcessInterval& p : report.processes) {
      if (p.iterations > 0) most = std::max(most, p.wall / p.iterations);
    }
    if (most > 0.0) slowest.push_back(most);
  }
  return slowest.empty() ? 0.0 : median(slowest);
}

// Per process, the median speed (metric per second of effective computation)
// over `window`.
std::vector<double> median_speeds(const std::deque<IntervalReport>& window,
                                  double dedicated_threshold) {
  if (window.empty()) return {};
  std::vector<double> speeds;
  for (std::size_t p = 0; p < window.back().processes.size(); ++p) {
    std::vector<double> samples;
    for (const IntervalReport& report : window) {
      if (p < report.processes.size())
        samples.push_back(report.processes[p].speed(dedicated_threshold));
    }
    speeds.push_back(median(samples));
  }
  return speeds;
}

// The slowest process's time per iteration of `blocks` at `speeds` (metric
// per second, all positive).
double slowest_block_seconds(const Decomposition& blocks, const std::vector<double>& speeds,
                             const std::vector<double>& row_work) {
  double slowest = 0.0;
  for (std::size_t i = 0; i < blocks.size() && i < speeds.size(); ++i) {
    slowest = std::max(slowest, block_work(blocks[i], row_work) / speeds[i]);
  }
  return slowest;
}

}  // namespace flexmpi
