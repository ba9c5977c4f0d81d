// Monitoring of the iterations of one process (thesis 4.2): wall time, CPU
// time, MPI time of the monitored region and the metric backend's counts,
// summed per sampling interval.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "machine/proc_readers.hpp"
#include "monitoring/computation_stopwatch.hpp"
#include "monitoring/interval.hpp"
#include "monitoring/iteration_hook.hpp"
#include "monitoring/metric.hpp"
#include "profiling/comm_profile.hpp"
#include "util/clock.hpp"

namespace flexmpi {

class Monitor {
 public:
  /// `hook` (may be null) runs before every MPI call and at the end of every
  /// iteration (the emulation).
  /// With `probe_network` every interval also measures the node's network
  /// (ProcessInterval::node_communication_power, node_caf).
  Monitor(MetricBackend& metric, const CommProfile& profile, IterationHook* hook,
          int sampling_interval, bool probe_network = false);

  /// Opens an iteration. `events` are names whose counts end() will return;
  /// throws Error(event_unavailable) for one the backend cannot count, and
  /// Error(bad_state) if an iteration is already open.
  void begin(std::span<const std::string> events);
  /// Closes the open iteration; counts gets one value per event of begin().
  IterationSample end(std::span<long long> counts);
  /// The application enters an MPI call (PMPI wrappers): the hook sees the
  /// end of a stretch of computation of the open iteration, on the thread
  /// that opened it (other threads' calls are not its computation's end).
  /// On an iteration that reads the CPU clock at its MPI calls, the
  /// stretch's CPU time is added to the iteration's computation CPU
  /// (IterationSample::computation_cpu).
  /// An MPI call made inside another (an MPI library's own use of its
  /// interface) neither ends nor starts a stretch.
  /// Both run inside the application's MPI calls: cheap when no iteration
  /// is open or nothing reads the stretches, and leaving the caller's
  /// floating-point flags and errno as they were when something does.
  void before_communication() {
    if (!on_iteration_thread() || mpi_depth_++ > 0) return;
    if (hook_ != nullptr || reads_stretches_) end_stretch();
  }
  /// The application's MPI call returns: a stretch of computation starts.
  void after_communication() {
    if (!on_iteration_thread() || mpi_depth_ == 0 || --mpi_depth_ > 0) return;
    if (hook_ != nullptr || reads_stretches_) start_stretch();
  }

  [[nodiscard]] bool iteration_open() const { return open_; }
  [[nodiscard]] std::size_t requested_event_count() const { return requested_.size(); }
  [[nodiscard]] bool interval_complete() const { return current_.iterations >= sampling_interval_; }
  [[nodiscard]] long long iterations_monitored() const { return iterations_; }
  [[nodiscard]] const MetricBackend& metric() const { return metric_; }

  /// Sums over every iteration monitored since start-up.
  [[nodiscard]] const ProcessInterval& totals() const { return totals_; }

  /// The interval so far (with its communication totals and typical
  /// computation); starts a new one.
  ProcessInterval take_interval();
  /// Adds the wall time of a data redistribution to the current interval's
  /// record (ProcessInterval::redistribution_seconds).
  void record_redistribution(double seconds) { current_.redistribution_seconds += seconds; }
  /// Adds the wall time of a spawn or removal (ProcessInterval::reconfiguration_seconds).
  void record_reconfiguration(double seconds) { current_.reconfiguration_seconds += seconds; }
  /// Per-operation communication of the interval last taken (thesis 5.3.2 input).
  [[nodiscard]] const std::vector<OpRecord>& last_interval_operations() const {
    return last_interval_operations_;
  }

 private:
  // true if this thread opened the open iteration. With MPI_THREAD_MULTIPLE
  // other threads call MPI while the iteration opens and closes: hence the
  // atomics (relaxed: a call that races with begin or end is at the
  // iteration's edge either way).
  [[nodiscard]] bool on_iteration_thread() const {
    return open_.load(std::memory_order_relaxed) &&
           iteration_thread_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }
  // The hook and the CPU clock where a stretch of computation ends and starts.
  void end_stretch();
  void start_stretch();
  // c_n and CAF_n of the node over the interval that ends (DRUM 3.1.2.2).
  void measure_network(ProcessInterval& finished);

  MetricBackend& metric_;
  const CommProfile& profile_;
  IterationHook* hook_;
  int sampling_interval_;

  std::atomic<bool> open_ = false;
  std::atomic<std::thread::id> iteration_thread_;  // the thread that opened the iteration
  long long iterations_ = 0;
  std::vector<std::size_t> requested_;  // indices of begin()'s events in metric_.events()
  std::vector<long long> counts_;
  ComputationStopwatch stopwatch_;
  double cpu_start_ = 0.0;
  // The thread CPU clock is a system call (~0.5 us a read on these VMs, four
  // times the rest of an iteration's bookkeeping): it is read on one
  // iteration of every cpu_stride_, chosen so that reading it costs at most
  // kCpuClockBudget of the iteration; the others get their wall time x the
  // CPU share the read ones measured (a ratio estimate of the interval's CPU).
  static constexpr double kCpuReadSeconds = 1.1e-6;  // two reads, measured
  static constexpr double kCpuClockBudget = 0.01;
  static constexpr long long kMaxCpuStride = 64;
  // About this many of an interval's iterations that read the CPU clock also
  // read it where each of their MPI calls begins and ends, for the CPU time
  // of their computation (share_correction). Not all: on a core shared with
  // a busy program a system call is where the scheduler takes the core, and
  // reading at every MPI call of every Jacobi iteration made the iterations
  // 3-7 % longer with both cores loaded.
  static constexpr long long kStretchSamples = 8;
  [[nodiscard]] double cpu_share() const;
  long long cpu_stride_ = 1;
  bool reads_cpu_ = true;                // the open iteration reads the CPU clock
  bool reads_stretches_ = false;         // ... also at its MPI calls
  long long cpu_reads_in_interval_ = 0;  // iterations of the interval that read it
  double sampled_cpu_ = 0.0;             // of the interval's iterations that read it
  double sampled_wall_ = 0.0;
  double last_cpu_share_ = 1.0;         // of the last interval with a read
  double stretch_cpu_start_ = 0.0;      // CPU clock where the open stretch of computation began
  double computation_cpu_ = 0.0;        // of the open iteration's finished stretches
  int mpi_depth_ = 0;                   // MPI calls of the iteration thread under way
  std::vector<CpuSample> cpu_samples_;  // of the current interval's iterations that read it
  // The first monitored iteration's start (ProcessInterval::run_seconds).
  std::optional<std::chrono::steady_clock::time_point> run_start_;

  ProcessInterval current_;
  std::vector<double> iteration_computation_;  // of the current interval, for its median
  std::vector<double> iteration_wall_;         // of the current interval, for its stalls
  ProcessInterval totals_;
  std::vector<OpRecord> interval_start_operations_;
  std::vector<OpRecord> last_interval_operations_;
  std::vector<machine::CpuTimes> cpu_times_;  // of the node's CPUs at the interval's start
  bool probe_network_;
  // The node's interface counters at the interval's start, and when read.
  std::vector<machine::InterfaceCounters> interfaces_;
  double interfaces_time_ = 0.0;
  std::map<std::string, double> capacities_;  // C_i by interface, read once
};

}  // namespace flexmpi
