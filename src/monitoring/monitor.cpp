#include "monitoring/monitor.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "flexmpi/error.hpp"
#include "machine/powers.hpp"
#include "util/caller_state.hpp"
#include "util/clock.hpp"

namespace flexmpi {
namespace {

// The node's CPU times now (/proc/stat, one read per interval, ~30 us);
// empty where the file cannot be read.
std::vector<machine::CpuTimes> node_cpu_times() {
  try {
    return machine::parse_proc_stat(machine::read_kernel_file("/proc/stat"));
  } catch (const Error&) {
    return {};
  }
}

// The node's interface counters now (/proc/net/dev: this network
// namespace's); empty where the file cannot be read.
std::vector<machine::InterfaceCounters> node_interfaces() {
  try {
    return machine::parse_net_dev(machine::read_kernel_file("/proc/net/dev"));
  } catch (const Error&) {
    return {};
  }
}

}  // namespace

Monitor::Monitor(MetricBackend& metric, const CommProfile& profile, IterationHook* hook,
                 int sampling_interval, bool probe_network)
    : metric_(metric),
      profile_(profile),
      hook_(hook),
      sampling_interval_(sampling_interval),
      stopwatch_(profile),
      interval_start_operations_(profile.records()),
      cpu_times_(node_cpu_times()),
      probe_network_(probe_network),
      interfaces_(probe_network ? node_interfaces() : std::vector<machine::InterfaceCounters>{}),
      interfaces_time_(wall_seconds()) {}

void Monitor::begin(std::span<const std::string> events) {
  if (open_) throw Error(Errc::bad_state, "an iteration is already being monitored");
  std::vector<std::size_t> requested;
  requested.reserve(events.size());
  for (const std::string& event : events) requested.push_back(metric_.require(event));
  requested_ = std::move(requested);
  counts_.assign(metric_.events().size(), 0);
  open_ = true;
  iteration_thread_ = std::this_thread::get_id();
  // The wall-time window encloses the CPU-time reads. The thread CPU clock
  // is a real system call, and the kernel often preempts a thread that
  // shares its core at the return of a system call (lazy preemption): read
  // outside the window, that time would vanish from the iteration, and the
  // loaded process would look as fast and as dedicated as the others.
  if (!run_start_) run_start_ = std::chrono::steady_clock::now();
  stopwatch_.start();
  reads_cpu_ = iterations_ % cpu_stride_ == 0;
  const long long read_iterations = std::max(1LL, sampling_interval_ / cpu_stride_);
  reads_stretches_ =
      reads_cpu_ &&
      cpu_reads_in_interval_++ % std::max(1LL, read_iterations / kStretchSamples) == 0;
  if (reads_cpu_) cpu_start_ = cpu_seconds();
  stretch_cpu_start_ = cpu_start_;
  computation_cpu_ = 0.0;
  mpi_depth_ = 0;
  if (hook_ != nullptr) hook_->computation_starts();
  metric_.start();
}

IterationSample Monitor::end(std::span<long long> counts) {
  if (!open_) throw Error(Errc::bad_state, "no iteration is being monitored");
  IterationSample sample;
  if (hook_ != nullptr) {
    // The emulated slower core needs more time for the computation only,
    // not for the communication.
    sample.emulation_late = hook_->after_computation(stopwatch_.computation());
  }
  metric_.stop(counts_);
  if (reads_cpu_) {
    const double cpu_end = cpu_seconds();
    sample.cpu = cpu_end - cpu_start_;
    sample.wall = stopwatch_.wall();  // after the CPU read: see begin()
    if (reads_stretches_)
      sample.computation_cpu = computation_cpu_ + (cpu_end - stretch_cpu_start_);
    sampled_cpu_ += sample.cpu;
    sampled_wall_ += sample.wall;
  } else {
    sample.wall = stopwatch_.wall();
    sample.cpu = sample.wall * cpu_share();
  }
  // The next reads: as often as the budget allows on iterations this long.
  const double budget = kCpuClockBudget * sample.wall;
  cpu_stride_ = budget * static_cast<double>(kMaxCpuStride) <= kCpuReadSeconds
                    ? kMaxCpuStride
                    : std::max(1LL, static_cast<long long>(std::ceil(kCpuReadSeconds / budget)));
  // The emulated core is a dedicated one. In burn mode the process shows it
  // by itself (it spins through its wait, and Open MPI polls through MPI
  // waits: CPU ~ wall); a sleeping process reports CPU = wall, or its sleep
  // (and, with several ranks per core, its real work's preemptions) would
  // read as a shared PE. Its computation is still wall - MPI.
  if (hook_ != nullptr && hook_->reports_cpu_as_wall()) sample.cpu = sample.wall;
  // The MPI time is the time any thread was inside MPI (CommProfile::mpi_seconds), within
  // the wall time but for the two clocks' reads: min() keeps their rounding out.
  sample.mpi = std::min(stopwatch_.mpi(), sample.wall);
  sample.metric = metric_.metric_value(counts_);
  open_ = false;
  if (reads_stretches_ && (hook_ == nullptr || !hook_->reports_cpu_as_wall())) {
    cpu_samples_.push_back({sample.wall, sample.cpu, sample.computation(), sample.computation_cpu});
  }
  ++iterations_;
  current_.add(sample);
  iteration_computation_.push_back(sample.computation());
  iteration_wall_.push_back(sample.wall);
  totals_.add(sample);
  for (std::size_t i = 0; i < requested_.size() && i < counts.size(); ++i) {
    counts[i] = counts_[requested_[i]];
  }
  return sample;
}

void Monitor::end_stretch() {
  const PreservedCallerState caller;
  if (hook_ != nullptr) hook_->before_communication(stopwatch_.computation());
  if (reads_stretches_) computation_cpu_ += cpu_seconds() - stretch_cpu_start_;
}

void Monitor::start_stretch() {
  const PreservedCallerState caller;
  if (reads_stretches_) stretch_cpu_start_ = cpu_seconds();
  if (hook_ != nullptr) hook_->computation_starts();
}

double Monitor::cpu_share() const {
  return sampled_wall_ > 0.0 ? std::min(1.0, sampled_cpu_ / sampled_wall_) : last_cpu_share_;
}

ProcessInterval Monitor::take_interval() {
  last_cpu_share_ = cpu_share();
  sampled_cpu_ = sampled_wall_ = 0.0;
  const std::vector<OpRecord> now = profile_.records();
  last_interval_operations_ = profile_difference(now, interval_start_operations_);
  interval_start_operations_ = now;
  ProcessInterval finished = current_;
  if (run_start_) {
    finished.run_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - *run_start_).count();
  }
  finished.typical_computation = typical_computation(iteration_computation_);
  finished.stall_free_computation = stall_free_computation(iteration_computation_, iteration_wall_);
  finished.share_correction =
      share_correction(cpu_samples_, iteration_computation_, iteration_wall_);
  cpu_samples_.clear();
  cpu_reads_in_interval_ = 0;
  iteration_computation_.clear();
  iteration_wall_.clear();
  for (const OpRecord& row : last_interval_operations_) {
    finished.mpi_calls += static_cast<double>(row.stats.calls);
    finished.bytes_sent += static_cast<double>(row.stats.bytes_sent);
    finished.bytes_received += static_cast<double>(row.stats.bytes_received);
  }
  const std::vector<machine::CpuTimes> cpu_times = node_cpu_times();
  if (cpu_times.size() == cpu_times_.size()) {
    for (std::size_t cpu = 0; cpu < cpu_times.size(); ++cpu) {
      finished.node_idle_cpus += machine::idle_fraction(cpu_times_[cpu], cpu_times[cpu]);
    }
  }
  cpu_times_ = cpu_times;
  measure_network(finished);
  current_ = ProcessInterval{};
  return finished;
}

void Monitor::measure_network(ProcessInterval& finished) {
  if (!probe_network_) return;
  std::vector<machine::InterfaceCounters> interfaces = node_interfaces();
  const double now = wall_seconds();
  std::vector<machine::InterfaceActivity> activity =
      machine::interface_activity(interfaces_, interfaces, now - interfaces_time_);
  for (machine::InterfaceActivity& interface : activity) {
    // A link's speed changes with the hardware, not between intervals.
    const auto known = capacities_.find(interface.name);
    interface.capacity =
        known != capacities_.end()
            ? known->second
            : (capacities_[interface.name] = machine::interface_capacity(interface.name));
  }
  const std::optional<double> power =
      machine::communication_power(machine::CommunicationPowerForm::available_bandwidth, activity);
  finished.node_communication_power = power.value_or(-1.0);
  finished.node_caf = machine::mean_caf(activity);
  interfaces_ = std::move(interfaces);
  interfaces_time_ = now;
}

}  // namespace flexmpi
