#include "monitoring/interval.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "util/statistics.hpp"

namespace flexmpi {

namespace {
// Under this share of the wall time in MPI there is no wait to tell spinning
// from sleeping by, and nothing for the share to be misspread over.
constexpr double kMpiWallShare = 0.01;
}  // namespace

void ProcessInterval::add(const IterationSample& sample) {
  ++iterations;
  wall += sample.wall;
  cpu += sample.cpu;
  mpi += sample.mpi;
  metric += sample.metric;
  if (sample.emulation_late) ++emulation_late_iterations;
}

double typical_computation(const std::vector<double>& iteration_computation) {
  return median(iteration_computation) * static_cast<double>(iteration_computation.size());
}

double stall_free_computation(const std::vector<double>& computation,
                              const std::vector<double>& wall) {
  if (computation.empty() || computation.size() != wall.size()) return 0.0;
  const double stall = kStallIterations * median(wall);
  const double typical = median(computation);
  double sum = 0.0;
  for (const double seconds : computation) sum += seconds > stall ? typical : seconds;
  return sum;
}

double share_correction(const std::vector<CpuSample>& sampled,
                        const std::vector<double>& iteration_computation,
                        const std::vector<double>& iteration_wall) {
  if (sampled.empty() || iteration_wall.empty()) return 0.0;
  const double stall = kStallIterations * median(iteration_wall);
  if (std::any_of(iteration_computation.begin(), iteration_computation.end(),
                  [stall](double seconds) { return seconds > stall; })) {
    return 0.0;
  }
  CpuSample sum;
  for (const CpuSample& s : sampled) {
    sum.wall += s.wall;
    sum.cpu += s.cpu;
    sum.computation += s.computation;
    sum.computation_cpu += s.computation_cpu;
  }
  if (sum.wall <= 0.0 || sum.cpu <= 0.0 || sum.computation <= 0.0 || sum.computation_cpu <= 0.0) {
    return 0.0;
  }
  const double share = std::min(1.0, sum.cpu / sum.wall);
  // Spinning in MPI: the wait got at least half the interval's share (a
  // process that sleeps there gets none of the core while it waits).
  const double mpi_wall = sum.wall - sum.computation;
  const double mpi_cpu = std::max(0.0, sum.cpu - sum.computation_cpu);
  if (mpi_wall > kMpiWallShare * sum.wall && mpi_cpu < 0.5 * share * mpi_wall) return 0.0;
  return sum.computation_cpu / share / sum.computation;
}

double ProcessInterval::shared_fraction() const {
  if (wall <= 0.0) return 0.0;
  return std::clamp((wall - cpu) / wall, 0.0, 1.0);
}

double ProcessInterval::effective_computation(double dedicated_threshold) const {
  if (node_oversubscribed || shared_fraction() <= dedicated_threshold) return robust_computation();
  const double time = stall_free_computation > 0.0 ? stall_free_computation : computation();
  return share_correction > 0.0 ? time * share_correction : time;
}

double ProcessInterval::speed(double dedicated_threshold) const {
  const double time = effective_computation(dedicated_threshold);
  return time > 0.0 ? metric / time : 0.0;
}

void ProcessInterval::pack(std::span<double, kFieldCount> out) const {
  out[0] = rank;
  out[1] = iterations;
  out[2] = wall;
  out[3] = cpu;
  out[4] = mpi;
  out[5] = metric;
  out[6] = mpi_calls;
  out[7] = bytes_sent;
  out[8] = bytes_received;
  out[9] = host_id;
  out[10] = node_cores;
  out[11] = typical_computation;
  out[12] = redistribution_seconds;
  out[13] = emulation_late_iterations;
  out[14] = node_idle_cpus;
  out[15] = reconfiguration_seconds;
  out[16] = run_seconds;
  out[17] = node_communication_power;
  out[18] = node_caf;
  out[19] = stall_free_computation;
  out[20] = share_correction;
}

ProcessInterval ProcessInterval::unpack(std::span<const double, kFieldCount> in) {
  ProcessInterval p;
  p.rank = static_cast<int>(in[0]);
  p.iterations = static_cast<int>(in[1]);
  p.wall = in[2];
  p.cpu = in[3];
  p.mpi = in[4];
  p.metric = in[5];
  p.mpi_calls = in[6];
  p.bytes_sent = in[7];
  p.bytes_received = in[8];
  p.host_id = in[9];
  p.node_cores = in[10];
  p.typical_computation = in[11];
  p.redistribution_seconds = in[12];
  p.emulation_late_iterations = static_cast<int>(in[13]);
  p.node_idle_cpus = in[14];
  p.reconfiguration_seconds = in[15];
  p.run_seconds = in[16];
  p.node_communication_power = in[17];
  p.node_caf = in[18];
  p.stall_free_computation = in[19];
  p.share_correction = in[20];
  return p;
}

double IntervalReport::imbalance(double dedicated_threshold) const {
  if (processes.empty()) return 0.0;
  std::vector<double> times;
  times.reserve(processes.size());
  for (const ProcessInterval& p : processes)
    times.push_back(p.effective_computation(dedicated_threshold));
  const auto [low, high] = std::minmax_element(times.begin(), times.end());
  return *high > 0.0 ? (*high - *low) / *high : 0.0;
}

void IntervalReport::mark_oversubscribed_nodes() {
  std::map<double, int> on_node;
  for (const ProcessInterval& p : processes) ++on_node[p.host_id];
  for (ProcessInterval& p : processes) {
    p.node_oversubscribed = p.node_cores > 0.0 && on_node[p.host_id] > p.node_cores;
  }
}

void IntervalReport::make_times_comparable(double dedicated_threshold) {
  const auto uncorrected = [&](const ProcessInterval& p) {
    return !p.node_oversubscribed && p.shared_fraction() > dedicated_threshold &&
           p.share_correction <= 0.0;
  };
  if (std::none_of(processes.begin(), processes.end(), uncorrected)) return;
  for (ProcessInterval& p : processes) p.share_correction = 0.0;
}

std::vector<bool> IntervalReport::shared_flags(double dedicated_threshold) const {
  std::vector<bool> flags;
  flags.reserve(processes.size());
  for (const auto& p : processes) flags.push_back(p.shared_fraction() > dedicated_threshold);
  return flags;
}

double IntervalReport::longest(double ProcessInterval::*seconds) const {
  double longest = 0.0;
  for (const ProcessInterval& p : processes) longest = std::max(longest, p.*seconds);
  return longest;
}

double IntervalReport::shortest(double ProcessInterval::*seconds) const {
  if (processes.empty()) return 0.0;
  double shortest = processes.front().*seconds;
  for (const ProcessInterval& p : processes) shortest = std::min(shortest, p.*seconds);
  return shortest;
}

}  // namespace flexmpi
