#include "machine/resource_monitor.hpp"

#include <ctime>
#include <string>

#include "flexmpi/error.hpp"

namespace flexmpi::machine {
namespace {

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace

ResourceMonitor::~ResourceMonitor() {
  if (running()) stop();
}

ResourceMonitor::Counters ResourceMonitor::read_counters() const {
  Counters counters;
  counters.time = std::chrono::steady_clock::now();
  counters.process_ticks = parse_process_cpu_ticks(read_kernel_file("/proc/self/stat"));
  if (options_.probe_node) {
    counters.cpus = parse_proc_stat(read_kernel_file("/proc/stat"));
    counters.interfaces = parse_net_dev(read_kernel_file("/proc/net/dev"));
  }
  return counters;
}

void ResourceMonitor::sample_load_and_memory() {
  const LoadAverages load = parse_loadavg(read_kernel_file("/proc/loadavg"));
  load_sum_.one_minute += load.one_minute;
  load_sum_.five_minutes += load.five_minutes;
  load_sum_.fifteen_minutes += load.fifteen_minutes;
  if (options_.monitor_memory) {
    const MemoryInfo memory = parse_meminfo(read_kernel_file("/proc/meminfo"));
    memory_sum_.total_kb += memory.total_kb;
    memory_sum_.available_kb += memory.available_kb;
  }
  ++samples_;
}

void ResourceMonitor::run_agent() {
  std::unique_lock lock(mutex_);
  // Sleeps between samples: the agent costs only the few file reads of each sample.
  while (!wake_.wait_for(lock, options_.period, [this] { return stop_requested_; })) {
    sample_load_and_memory();
  }
  agent_cpu_seconds_ = thread_cpu_seconds();
}

void ResourceMonitor::start() {
  if (running()) throw Error(Errc::bad_state, "DRUM monitoring is already running");
  samples_ = 0;
  load_sum_ = {};
  memory_sum_ = {};
  stop_requested_ = false;
  first_ = read_counters();
  sample_load_and_memory();
  agent_ = std::thread([this] { run_agent(); });
}

MonitorReport ResourceMonitor::stop() {
  if (!running()) throw Error(Errc::bad_state, "DRUM monitoring is not running");
  {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_one();
  agent_.join();
  const Counters last = read_counters();
  MonitorReport report;
  report.seconds = std::chrono::duration<double>(last.time - first_.time).count();
  report.samples = samples_;
  report.agent_cpu_seconds = agent_cpu_seconds_;
  if (report.seconds > 0) {
    const double process_seconds =
        static_cast<double>(last.process_ticks - first_.process_ticks) / sysconf(_SC_CLK_TCK);
    report.process_utilization = process_seconds / report.seconds;
  }
  for (std::size_t cpu = 0; cpu < std::min(first_.cpus.size(), last.cpus.size()); ++cpu) {
    report.cpu_idle.push_back(idle_fraction(first_.cpus[cpu], last.cpus[cpu]));
  }
  report.interfaces = interface_activity(first_.interfaces, last.interfaces, report.seconds);
  for (InterfaceActivity& activity : report.interfaces) {
    activity.capacity = interface_capacity(activity.name);
  }
  const double n = samples_;
  report.load = {load_sum_.one_minute / n, load_sum_.five_minutes / n,
                 load_sum_.fifteen_minutes / n};
  report.memory = {static_cast<std::uint64_t>(memory_sum_.total_kb / n),
                   static_cast<std::uint64_t>(memory_sum_.available_kb / n)};
  return report;
}

}  // namespace flexmpi::machine
