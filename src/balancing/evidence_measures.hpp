// Measures of the balancer's evidence (the intervals since the last change)
// and of blocks: what LoadBalancer decides from (thesis Alg. 5 and the
// do-no-harm checks of docs/design/balancing.md).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "balancing/partitioner.hpp"
#include "monitoring/interval.hpp"

namespace flexmpi {

// (max - min) / max, 0 without a positive time (Alg. 5 evaluateLoadBalance).
double imbalance_of(const std::vector<double>& times);

// Workload of a block in the model's units: rows, or the sum of its rows' work.
double block_work(const RowBlock& block, const std::vector<double>& row_work);

// The largest change of a block, in rows, over the mean block: how far the
// blocks are from a partitioner's own target.
double departure(const Decomposition& current, const Decomposition& target,
                 std::int64_t global_size);

// The run's time per iteration on the evidence's blocks: per interval the
// slowest process's wall time per iteration, the median over the intervals.
double slowest_wall_per_iteration(const std::deque<IntervalReport>& evidence);

// Per process, the median speed (metric per second of effective computation)
// over `window`.
std::vector<double> median_speeds(const std::deque<IntervalReport>& window,
                                  double dedicated_threshold);

// The slowest process's time per iteration of `blocks` at `speeds` (metric
// per second, all positive).
double slowest_block_seconds(const Decomposition& blocks, const std::vector<double>& speeds,
                             const std::vector<double>& row_work);

}  // namespace flexmpi
