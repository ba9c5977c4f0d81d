// The runtime: the one object of flexmpi that lives from MPI_Init to
// MPI_Finalize and owns every component (configuration, communication
// profile, metric backend, monitor, trace). It is the only global state of
// the library besides the XMPI_COMM_WORLD handle the C API requires.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
#include <span>
#include <string>

#include <spdlog/logger.h>

#include "config/config.hpp"
#include "monitoring/interval.hpp"
#include "monitoring/metric.hpp"
#include "monitoring/monitor.hpp"
#include "profiling/comm_profile.hpp"
#include "trace/trace_writer.hpp"

namespace flexmpi {

class Runtime {
 public:
  /// The runtime, or nullptr outside MPI_Init ... MPI_Finalize.
  static Runtime* instance() noexcept { return instance_; }
  /// The runtime; throws Error(bad_state) if MPI (and flexmpi) is not initialised.
  static Runtime& get();

  /// Called by the MPI_Init wrappers after PMPI_Init. Every process calls
  /// it; if any fails, all of them stop with the first failure's message.
  static void start(int thread_level);
  /// Called by the MPI_Finalize wrapper before PMPI_Finalize.
  static void stop() noexcept;

  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime();

  [[nodiscard]] const Config& config() const { return config_; }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  /// Private duplicate of the world communicator for the library's own messages.
  [[nodiscard]] MPI_Comm library_comm() const { return library_comm_; }
  CommProfile& comm_profile() { return comm_profile_; }
  Monitor& monitor() { return *monitor_; }
  spdlog::logger& log() { return *log_; }

  /// Work units of this process's partition (work metric, SPEC section 2).
  void set_work(double work_units);
  [[nodiscard]] double work() const { return work_units_; }

  /// Opens a monitored iteration (thesis Fig. 4.2).
  void begin_iteration(std::span<const std::string> events);
  /// Closes it (thesis Fig. 4.3); at the end of a sampling interval this is
  /// collective: the per-process records are exchanged and traced.
  void end_iteration(std::span<long long> counts);
  /// The last completed sampling interval, if any.
  [[nodiscard]] const std::optional<IntervalReport>& last_interval() const { return last_interval_; }

 private:
  explicit Runtime(int thread_level);
  void close_interval();
  void write_profile() noexcept;

  static inline Runtime* instance_ = nullptr;

  Config config_;
  int rank_ = 0;
  int size_ = 1;
  MPI_Comm library_comm_ = MPI_COMM_NULL;
  std::shared_ptr<spdlog::logger> log_;
  CommProfile comm_profile_;
  double work_units_ = 0.0;
  std::unique_ptr<MetricBackend> metric_;
  std::unique_ptr<Monitor> monitor_;
  std::unique_ptr<TraceWriter> trace_;
  std::optional<IntervalReport> last_interval_;
  int intervals_closed_ = 0;
  bool api_used_ = false;  // false: profile-only mode (no flexmpi call was made)
  double start_wall_ = 0.0;
};

}  // namespace flexmpi
