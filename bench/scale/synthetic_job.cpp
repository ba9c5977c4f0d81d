#include "synthetic_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "config/config.hpp"

namespace flexmpi::bench {
namespace {

// Work units per second of a PE of relative speed 1: 50 ms per iteration for
// 1000 rows, a computation-bound job that more processes speed up.
constexpr double kUnitSpeed = 2e4;
// Share of the interval spent in MPI and the CPU a dedicated PE loses to the OS.
constexpr double kMpiShare = 0.05;
constexpr double kCpuLoss = 0.005;
// Per-process spread of the speeds of one class (uniform, relative).
constexpr double kJitter = 0.03;
// Interval-to-interval measurement noise (relative): well under the imbalance threshold.
constexpr double kNoise = 0.01;

// A deterministic noise in [1 - kNoise, 1 + kNoise] per (rank, interval), so
// that a report asked for twice is the same: one splitmix64 step (seeding a
// Mersenne twister per record took most of the benchmark's setup time).
double noise(int rank, int index) {
  std::uint64_t z = (static_cast<std::uint64_t>(rank) << 32U) + static_cast<std::uint64_t>(index) +
                    0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
  z ^= z >> 31U;
  const double unit = static_cast<double>(z >> 11U) * 0x1.0p-53;  // [0, 1)
  return 1.0 - kNoise + 2.0 * kNoise * unit;
}

std::string class_name(int c) { return fmt::format("class{:02d}", c); }

// Rows per process in proportion to `speeds`, exactly (largest remainder).
Decomposition proportional_blocks(std::int64_t rows, const std::vector<double>& speeds) {
  return blocks_from_counts(proportional_counts(rows, speeds, 1));
}

}  // namespace

SyntheticJob::SyntheticJob(JobShape shape) : shape_(shape) {
  const int p = shape_.processes;
  const int c = shape_.node_classes;
  if (p < 1 || c < 1 || c > p || shape_.cores_per_node < 1 || shape_.rows_per_process < 1) {
    throw std::invalid_argument("a job needs processes >= node classes >= 1 and a row each");
  }
  std::mt19937 random(12345);
  std::uniform_real_distribution<double> spread(1.0 - kJitter, 1.0 + kJitter);
  std::vector<int> running(static_cast<std::size_t>(c), 0);
  for (int rank = 0; rank < p; ++rank) {
    // Whole nodes go to one class: the node of a rank decides its class.
    const int node = rank / shape_.cores_per_node;
    const int nodes = (p + shape_.cores_per_node - 1) / shape_.cores_per_node;
    const int cls = static_cast<int>(static_cast<long long>(node) * c / nodes);
    class_of_rank_.push_back(cls);
    jitter_.push_back(spread(random));
    ++running[static_cast<std::size_t>(cls)];
    resources_.process_classes.push_back(class_name(cls));
  }
  for (int k = 0; k < c; ++k) {
    const double speed = 1.0 + static_cast<double>(k) / c;
    const double cost = 0.05 * (1.0 + k);  // faster classes cost more per PE-hour
    classes_.push_back({class_name(k), speed, cost, 100.0 + 10.0 * k});
    const int on_class = running[static_cast<std::size_t>(k)];
    resources_.classes.push_back(
        {class_name(k), on_class + (on_class + 3) / 4, on_class, on_class / 8, cost});
  }
  equal_blocks_ = block_decomposition(global_rows(), p);
  std::vector<double> speeds;
  for (int rank = 0; rank < p; ++rank) speeds.push_back(speed_of(rank, 0));
  balanced_blocks_ = proportional_blocks(global_rows(), speeds);
}

double SyntheticJob::speed_of(int rank, int index) const {
  const auto r = static_cast<std::size_t>(rank);
  const double relative = classes_.empty() ? 1.0 : classes_[class_of_rank_[r]].speed;
  return kUnitSpeed * relative * jitter_[r] * (index > 0 ? noise(rank, index) : 1.0);
}

IntervalReport SyntheticJob::report(int index, const Decomposition& blocks) const {
  IntervalReport report;
  report.index = index;
  report.first_iteration = static_cast<long long>(index) * shape_.iterations_per_interval;
  report.metric_name = "work";
  const double iterations = shape_.iterations_per_interval;
  report.processes.reserve(blocks.size());
  for (int rank = 0; rank < shape_.processes; ++rank) {
    ProcessInterval p;
    p.rank = rank;
    p.iterations = shape_.iterations_per_interval;
    p.metric = static_cast<double>(blocks[static_cast<std::size_t>(rank)].count) * iterations;
    const double computation = p.metric / speed_of(rank, index);
    p.mpi = kMpiShare * computation;
    p.wall = computation + p.mpi;
    p.cpu = p.wall * (1.0 - kCpuLoss);
    p.typical_computation = computation;
    p.mpi_calls = 4.0 * iterations;
    p.bytes_sent = 2.0 * iterations * (8.0 + 8.0 * 1024.0);
    p.bytes_received = p.bytes_sent;
    p.host_id = 1.0 + rank / shape_.cores_per_node;  // one id per node
    p.node_cores = shape_.cores_per_node;
    p.run_seconds = (index + 1) * p.wall;
    report.processes.push_back(p);
  }
  report.mark_oversubscribed_nodes();
  return report;
}

PartitionInput SyntheticJob::partition_input(const IntervalReport& report,
                                             const Decomposition& blocks) const {
  PartitionInput input;
  input.global_size = global_rows();
  input.current = blocks;
  const Config defaults;
  // The nodes' measures as LoadBalancer::node_measures sets them (filled for
  // every partitioner: those that do not read them ignore them).
  NodeMeasures& nodes = input.nodes.emplace();
  for (const ProcessInterval& p : report.processes) {
    const double time = p.effective_computation(defaults.dedicated_threshold);
    input.computation_time.push_back(time);
    input.iterations.push_back(p.iterations);
    input.wall_time.push_back(p.wall);
    input.cpu_time.push_back(p.cpu);
    input.speed.push_back(time > 0.0 ? p.metric / time : 0.0);
    input.work.push_back(p.metric / p.iterations);
    nodes.host_id.push_back(p.host_id);
    nodes.node_cores.push_back(p.node_cores);
    nodes.node_idle_cpus.push_back(p.node_idle_cpus);
    nodes.node_communication_power.push_back(p.node_communication_power);
    nodes.node_caf.push_back(p.node_caf);
  }
  return input;
}

std::vector<CommOpCount> SyntheticJob::operations() const {
  const auto calls = 2 * static_cast<std::uint64_t>(shape_.iterations_per_interval);
  const double dot = 8.0 * static_cast<double>(calls);
  const double halo = 8.0 * 1024.0 * static_cast<double>(calls);
  return {
      {Routine::allreduce, shape_.processes, calls, dot, dot},
      {Routine::send_recv, shape_.processes, calls, halo, halo},
  };
}

CommunicationReplay SyntheticJob::replay(const MachineProfile& profile) const {
  CommunicationReplay replay;
  replay.ops = operations();
  replay.processes = shape_.processes;
  replay.iterations = shape_.iterations_per_interval;
  replay.library = MpiLibrary::open_mpi;
  replay.link = profile.link(false);
  replay.fits = profile.fits_for(MpiLibrary::open_mpi);
  return replay;
}

}  // namespace flexmpi::bench
