// The runtime: the one object of flexmpi that lives from MPI_Init to
// MPI_Finalize and owns every component (configuration, communication
// profile, metric backend, monitor, trace). It is the only global state of
// the library besides the XMPI_COMM_WORLD handle the C API requires.
#pragma once

#include <mpi.h>
#include <spdlog/logger.h>

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "balancing/load_balancer.hpp"
#include "config/config.hpp"
#include "core/row_block.hpp"
#include "monitoring/interval.hpp"
#include "monitoring/metric.hpp"
#include "monitoring/monitor.hpp"
#include "profiling/comm_profile.hpp"
#include "redistribution/data_registry.hpp"
#include "trace/trace_writer.hpp"

namespace flexmpi {

class ProcessManager;
class UllCalibrator;

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

  /// Opens a monitored iteration (thesis Fig. 4.2). closed_by_eval_lbalance:
  /// opened by XMPI_Monitor_si_init, whose iteration XMPI_Eval_lbalance ends;
  /// one opened by XMPI_Monitor_iter_begin must be ended by XMPI_Monitor_iter_end.
  void begin_iteration(std::span<const std::string> events, bool closed_by_eval_lbalance = false);
  /// Closes it (thesis Fig. 4.3); at the end of a sampling interval this is
  /// collective: the per-process records are exchanged and traced.
  void end_iteration(std::span<long long> counts);
  /// Closes the iteration opened by monitor_si_init, if open, and at the end
  /// of a sampling interval runs the load balancer (thesis Fig. 5.4, Alg. 5):
  /// may redistribute every registered structure. Returns this process's block.
  /// weight: per-row workload (global, dsize entries) for FLEXMPI_LB_MODEL=weight.
  RowBlock eval_lbalance(int iteration, int max_iterations, std::span<const double> weight);

  /// The block `rank` owns in the decomposition of `rows` rows over `nprocs`
  /// processes: the current decomposition if it is that one, else the block
  /// partition (which becomes the current one when it is ours).
  RowBlock block_of(int rank, int nprocs, std::int64_t rows);
  /// The current decomposition (empty before any XMPI_Get_wsize/registration).
  [[nodiscard]] const Decomposition& decomposition() const { return decomposition_; }

  /// Recomputes this process's work units under the workload model (rows,
  /// nonzeros of the registered data, or the weights of its rows).
  void update_work(std::span<const double> weight = {});

  /// Registered data (thesis 4.5): the structures that follow the decomposition.
  DataRegistry& data() { return data_; }
  /// Moves every registered structure from this process's old block to its
  /// new one (XMPI_Redistribute_data); collective.
  RedistributionStats redistribute(const RowBlock& old_block, const RowBlock& new_block);

  /// Dynamic process management (thesis 4.3): spawn, remove, process status.
  ProcessManager& processes() { return *processes_; }

  /// State of the ULL calibrating API (include/ull_calibrate.h) between
  /// ULL_MPI_init_calibratelib and ULL_MPI_shutdown_calibratelib.
  std::unique_ptr<UllCalibrator>& ull_calibrator() { return ull_calibrator_; }

  /// The last completed sampling interval, if any.
  [[nodiscard]] const std::optional<IntervalReport>& last_interval() const {
    return last_interval_;
  }

 private:
  // world: MPI_COMM_WORLD, or for a spawned process the communicator merged
  // with its parents (ProcessManager::start_spawned).
  explicit Runtime(int thread_level, MPI_Comm world = MPI_COMM_WORLD);
  /// Exchanges the per-process records of the finished interval (collective).
  void close_interval();
  void trace_interval(const nlohmann::json& extra);
  /// Moves the data to `target` and makes it the current decomposition.
  RedistributionStats move_to(const Decomposition& target);

  std::vector<double> global_row_work(std::span<const double> weight);
  void write_profile() noexcept;

  // The process manager rebuilds the communicators and the decomposition.
  friend class ProcessManager;

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
  bool interval_traced_ = true;
  // This process's node, for IntervalReport::mark_oversubscribed_nodes.
  double host_id_ = 0.0;
  double node_cores_ = 0.0;
  // Spawns and removals since the last traced interval (rank 0): they go
  // into the record of the first interval of the new process set.
  nlohmann::json reconfigurations_ = nlohmann::json::array();
  std::int64_t global_rows_ = -1;  // rows of the decomposition; -1: none yet
  Decomposition decomposition_;
  DataRegistry data_;
  std::unique_ptr<LoadBalancer> balancer_;
  // The prediction model's price of a redistribution, and the bytes the last
  // one was predicted to move (priced when its measured time arrives with
  // the next interval report).
  RedistributionCost redistribution_cost_;
  double pending_redistribution_bytes_ = 0.0;
  std::unique_ptr<UllCalibrator> ull_calibrator_;
  int intervals_closed_ = 0;
  bool api_used_ = false;
  bool si_iteration_ = false;  // the open iteration came from XMPI_Monitor_si_init  // false:
                               // profile-only mode (no flexmpi call was made)
  double start_wall_ = 0.0;
  std::unique_ptr<ProcessManager> processes_;
};

}  // namespace flexmpi
