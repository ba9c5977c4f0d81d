// Interval reports for the balancer's unit tests.
#pragma once

#include <utility>
#include <vector>

#include "balancing/load_balancer.hpp"
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

/// A decomposition of 1000 rows to balance, `remaining` iterations left, 16 KiB per row.
inline LoadBalancer::Situation situation(Decomposition current, long long remaining = 1000) {
  LoadBalancer::Situation s;
  s.current = std::move(current);
  s.global_size = 1000;
  s.remaining_iterations = remaining;
  s.bytes_per_row = 16384.0;
  return s;
}

/// Alg. 5 as the thesis has it: the first unbalanced interval moves, whatever it costs.
inline Config thesis_balancing(Config config = {}) {
  config.lb_confirm = 1;
  config.lb_window = 1;
  config.lb_margin = 0.0;
  config.lb_refine = 0.0;
  return config;
}

}  // namespace flexmpi::test
