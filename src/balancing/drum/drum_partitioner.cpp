#include "balancing/drum/drum_partitioner.hpp"

#include <algorithm>
#include <map>

#include "balancing/rcp/rcp_partitioner.hpp"
#include "machine/powers.hpp"

namespace flexmpi {
namespace {

// u_j = Tcpu / Treal, in [0, 1]; 1 where the times are unknown (dedicated).
double utilization(const PartitionInput& input, std::size_t p) {
  if (p >= input.wall_time.size() || p >= input.cpu_time.size() || input.wall_time[p] <= 0.0) {
    return 1.0;
  }
  return std::clamp(input.cpu_time[p] / input.wall_time[p], 0.0, 1.0);
}

}  // namespace

std::vector<double> drum_processing_powers(const PartitionInput& input) {
  const std::size_t n = input.speed.size();
  std::vector<double> u(n);
  std::map<double, std::vector<std::size_t>> nodes;  // host id -> its processes
  for (std::size_t p = 0; p < n; ++p) {
    u[p] = utilization(input, p);
    nodes[p < input.host_id.size() ? input.host_id[p] : static_cast<double>(p)].push_back(p);
  }
  std::vector<double> powers(n, 0.0);
  for (const auto& [host, processes] : nodes) {
    std::vector<double> utilizations;
    for (const std::size_t p : processes) utilizations.push_back(u[p]);
    const std::size_t first = processes.front();
    const double idle_cpus =
        first < input.node_idle_cpus.size() ? input.node_idle_cpus[first] : 0.0;
    // ī_n (3.1.2.1): Σ_t i_t is one number here, the node's idle CPUs.
    const double idle = machine::exploitable_idle_per_process(utilizations, {&idle_cpus, 1});
    for (const std::size_t p : processes) {
      // b_j: work per CPU-second (speed is per second of the share of the PE it got).
      const double rate = u[p] > 0.0 ? input.speed[p] / u[p] : 0.0;
      powers[p] = rate * (u[p] + idle);
    }
  }
  return powers;
}

PartitionResult DrumPartitioner::partition(const PartitionInput& input) {
  // The powers become the speeds of rcp's arithmetic (exact rounding, the
  // row weights of the nnz/weight models, the fallback on missing speeds).
  PartitionInput by_power = input;
  by_power.speed = drum_processing_powers(input);
  return RcpPartitioner().partition(by_power);
}

}  // namespace flexmpi
