// Interval reports for the balancer's unit tests.
#pragma once

#include <utility>
#include <vector>

#include "monitoring/interval.hpp"

namespace flexmpi::test {

/// An interval where process i computed rows_and_seconds[i].first rows per
/// iteration for rows_and_seconds[i].second seconds of dedicated computation
/// (CPU time = wall time, no MPI) over 10 iterations.
inline IntervalReport dedicated_report(
    const std::vector<std::pair<double, double>>& rows_and_seconds) {
  IntervalReport r;
  r.metric_name = "work";
  int rank = 0;
  for (const auto& [rows, seconds] : rows_and_seconds) {
    ProcessInterval p;
    p.rank = rank++;
    p.iterations = 10;
    p.wall = p.cpu = seconds;
    p.metric = rows * 10;
    r.processes.push_back(p);
  }
  return r;
}

}  // namespace flexmpi::test
