// The monitoring agent of DRUM (thesis 3.1.1, ch. 4, A.1): a thread that runs
// beside the application between start() and stop(), sampling the kernel
// statistics every monitoring period. It plays the cpuMemory object on every
// process and, on the node's elected process, the commInterface object too.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "machine/proc_readers.hpp"

namespace flexmpi::machine {

struct MonitorOptions {
  std::chrono::milliseconds period{1000};  ///< MONITORING_FREQUENCY
  /// Elected process of its node: also probe every CPU's idle time and the
  /// network interfaces (only one process per shared-memory node does, ch. 4).
  bool probe_node = true;
  bool monitor_memory = false;  ///< MONITOR_MEMORY
};

/// What one monitoring period measured.
struct MonitorReport {
  double seconds = 0;                         ///< length of the period
  int samples = 0;                            ///< load (and memory) samples averaged
  double process_utilization = 0;             ///< u_{n,j}: CPU time of this process / elapsed time
  std::vector<double> cpu_idle;               ///< i_t of every CPU (probe_node only)
  LoadAverages load;                          ///< mean of the samples
  MemoryInfo memory;                          ///< mean of the samples (monitor_memory only)
  std::vector<InterfaceActivity> interfaces;  ///< lambda, mu, C_i (probe_node only)
  /// CPU time the agent thread itself used: the monitoring overhead (Table 5.3).
  double agent_cpu_seconds = 0;
};

class ResourceMonitor {
 public:
  explicit ResourceMonitor(MonitorOptions options) : options_(options) {}
  ResourceMonitor(const ResourceMonitor&) = delete;
  ResourceMonitor& operator=(const ResourceMonitor&) = delete;
  /// Stops a running agent.
  ~ResourceMonitor();

  /// Takes the first snapshot and starts the agent thread; Error(bad_state) if running.
  void start();
  /// Stops and joins the agent and reports the period; Error(bad_state) if not running.
  MonitorReport stop();
  [[nodiscard]] bool running() const { return agent_.joinable(); }

 private:
  /// Cumulative counters: the period's averages need only their values at both ends.
  struct Counters {
    std::chrono::steady_clock::time_point time;
    std::uint64_t process_ticks = 0;
    std::vector<CpuTimes> cpus;
    std::vector<InterfaceCounters> interfaces;
  };

  [[nodiscard]] Counters read_counters() const;
  void sample_load_and_memory();
  void run_agent();

  MonitorOptions options_;
  Counters first_;
  int samples_ = 0;
  LoadAverages load_sum_;
  MemoryInfo memory_sum_;
  double agent_cpu_seconds_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_requested_ = false;
  std::thread agent_;
};

}  // namespace flexmpi::machine
