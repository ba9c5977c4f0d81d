#include "core/runtime.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <string_view>
#include <utility>

#include "balancing/ull/ull_calibrator.hpp"
#include "emulation/speed_emulator.hpp"
#include "flexmpi/error.hpp"
#include "monitoring/clock.hpp"
#include "process/process_manager.hpp"
#include "profiling/profile_report.hpp"

extern "C" {
MPI_Comm XMPI_COMM_WORLD = MPI_COMM_NULL;
}

namespace flexmpi {

Runtime& Runtime::get() {
  if (instance_ == nullptr) {
    throw Error(Errc::bad_state, "flexmpi is not initialised: call MPI_Init first");
  }
  return *instance_;
}

Runtime::Runtime(int thread_level, MPI_Comm world)
    : config_(load_config_from_environment()),
      comm_profile_(thread_level == MPI_THREAD_MULTIPLE),
      start_wall_(wall_seconds()) {
  check_mpi(PMPI_Comm_rank(world, &rank_), "MPI_Comm_rank");
  check_mpi(PMPI_Comm_size(world, &size_), "MPI_Comm_size");
  check_mpi(PMPI_Comm_dup(world, &library_comm_), "MPI_Comm_dup");
  check_mpi(PMPI_Comm_dup(world, &XMPI_COMM_WORLD), "MPI_Comm_dup");
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int host_length = 0;
  check_mpi(PMPI_Get_processor_name(host, &host_length), "MPI_Get_processor_name");
  // 52 bits: exact in the double the interval exchange carries.
  host_id_ =
      static_cast<double>(std::hash<std::string_view>{}(std::string_view(host, host_length)) &
                          ((std::uint64_t{1} << 52) - 1));
  node_cores_ = static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));

  log_ = std::make_shared<spdlog::logger>("flexmpi",
                                          std::make_shared<spdlog::sinks::stderr_sink_st>());
  log_->set_pattern("[flexmpi " + std::to_string(rank_) + "] %v");
  log_->set_level(spdlog::level::from_str(config_.log_level));

  // The emulated speed may be a function of this process's work units (SPEC section 6).
  const SpeedEmulator emulator = SpeedEmulator::for_rank(
      config_.emulate_speed.empty() ? std::vector<SpeedFunction>{}
                                    : parse_speed_list(config_.emulate_speed),
      rank_, [this] { return work_units_; });
  MetricContext context;
  context.current_work = [this] { return work_units_; };
  // Which metric is in use is worth a line only to who asks (FLEXMPI_LOG_LEVEL=debug):
  // an explicit FLEXMPI_METRIC that cannot be honoured is an error instead.
  context.log = [this](const std::string& message) {
    if (rank_ == 0) log_->debug(message);
  };
  metric_ = make_metric(config_.metric, context);
  monitor_ =
      std::make_unique<Monitor>(*metric_, comm_profile_, emulator, config_.sampling_interval);
  balancer_ = std::make_unique<LoadBalancer>(config_);
  if (emulator.active())
    log_->info("emulating a processing element of relative speed {}", emulator.describe());
  const std::size_t emulated_ranks =
      config_.emulate_speed.empty() ? 0 : parse_speed_list(config_.emulate_speed).size();
  if (rank_ == 0 && emulated_ranks > 0 && emulated_ranks < static_cast<std::size_t>(size_)) {
    log_->warn(
        "FLEXMPI_EMULATE_SPEED gives {} speeds for {} processes: ranks {} to {} run at "
        "full speed",
        emulated_ranks, size_, emulated_ranks, size_ - 1);
  }
  if (rank_ == 0 && !config_.trace.empty()) trace_ = std::make_unique<TraceWriter>(config_.trace);
  processes_ = std::make_unique<ProcessManager>(*this);
}

Runtime::~Runtime() {
  if (XMPI_COMM_WORLD != MPI_COMM_NULL) PMPI_Comm_free(&XMPI_COMM_WORLD);
  if (library_comm_ != MPI_COMM_NULL) PMPI_Comm_free(&library_comm_);
}

void Runtime::start(int thread_level) {
  // A process started by XMPI_Spawn first joins its parents (thesis Alg. 1).
  if (ProcessManager::is_spawned_process()) {
    ProcessManager::start_spawned(thread_level);
    return;
  }
  std::string failure;
  try {
    instance_ = new Runtime(thread_level);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // Agree: a configuration error on any process stops all of them before any
  // work, with one message (from the lowest failing rank) instead of a hang.
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  int first_failing = failure.empty() ? INT32_MAX : world_rank;
  PMPI_Allreduce(MPI_IN_PLACE, &first_failing, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first_failing == INT32_MAX) return;
  if (world_rank == first_failing) std::fprintf(stderr, "flexmpi: %s\n", failure.c_str());
  delete instance_;
  instance_ = nullptr;
  PMPI_Finalize();
  std::exit(EXIT_FAILURE);
}

void Runtime::stop() noexcept {
  if (instance_ == nullptr) return;
  try {
    instance_->trace_interval({});
  } catch (const std::exception& e) {
    instance_->log_->error("writing the trace: {}", e.what());
  }
  instance_->write_profile();
  delete instance_;
  instance_ = nullptr;
}

void Runtime::set_work(double work_units) {
  api_used_ = true;
  work_units_ = work_units;
}

void Runtime::begin_iteration(std::span<const std::string> events, bool closed_by_eval_lbalance) {
  api_used_ = true;
  monitor_->begin(events);
  si_iteration_ = closed_by_eval_lbalance;
  trace_interval({});  // an interval nobody evaluated is traced as it was
}

void Runtime::end_iteration(std::span<long long> counts) {
  monitor_->end(counts);
  if (monitor_->interval_complete()) close_interval();
}

void Runtime::close_interval() {
  ProcessInterval local = monitor_->take_interval();
  local.rank = rank_;
  local.host_id = host_id_;
  local.node_cores = node_cores_;
  std::array<double, ProcessInterval::kFieldCount> packed{};
  local.pack(packed);
  std::vector<double> all(static_cast<std::size_t>(size_) * ProcessInterval::kFieldCount);
  check_mpi(PMPI_Allgather(packed.data(), ProcessInterval::kFieldCount, MPI_DOUBLE, all.data(),
                           ProcessInterval::kFieldCount, MPI_DOUBLE, library_comm_),
            "MPI_Allgather (interval exchange)");
  IntervalReport report;
  report.index = intervals_closed_++;
  report.first_iteration = monitor_->iterations_monitored() - local.iterations;
  report.metric_name = std::string(metric_->name());
  for (int p = 0; p < size_; ++p) {
    report.processes.push_back(
        ProcessInterval::unpack(std::span<const double, ProcessInterval::kFieldCount>(
            all.data() + static_cast<std::size_t>(p) * ProcessInterval::kFieldCount,
            ProcessInterval::kFieldCount)));
  }
  report.mark_oversubscribed_nodes();
  log_->debug("interval {}: imbalance {:.3f}", report.index,
              report.imbalance(config_.dedicated_threshold));
  last_interval_ = std::move(report);
  interval_traced_ = false;
}

void Runtime::trace_interval(const nlohmann::json& extra) {
  if (interval_traced_ || !last_interval_) return;
  interval_traced_ = true;
  if (!trace_) return;
  nlohmann::json record =
      interval_record(*last_interval_, config_.dedicated_threshold, config_.imbalance_threshold);
  if (extra.is_object()) record.update(extra);
  if (!reconfigurations_.empty()) {
    record["reconfigurations"] = std::exchange(reconfigurations_, nlohmann::json::array());
  }
  trace_->write(record);
}

RowBlock Runtime::block_of(int rank, int nprocs, std::int64_t rows) {
  if (rows == global_rows_ && nprocs == static_cast<int>(decomposition_.size())) {
    return decomposition_[static_cast<std::size_t>(rank)];
  }
  Decomposition blocks = block_decomposition(rows, nprocs);
  const RowBlock block = blocks[static_cast<std::size_t>(rank)];
  if (nprocs == size_ && global_rows_ < 0) {
    // The first decomposition of the whole application is the one the
    // registered structures share (thesis 4.5.2).
    global_rows_ = rows;
    decomposition_ = std::move(blocks);
    data_.set_local_block(decomposition_[static_cast<std::size_t>(rank_)]);
  }
  return block;
}

std::vector<double> Runtime::global_row_work(std::span<const double> weight) {
  if (config_.lb_model == "weight") return {weight.begin(), weight.end()};
  if (config_.lb_model != "nnz") return {};
  // Every process contributes the nonzero count of each of its rows.
  const std::vector<double> local = data_.local_row_nonzeros();
  std::vector<int> counts(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
  for (int p = 0; p < size_; ++p) {
    counts[p] = static_cast<int>(decomposition_[p].count);
    displs[p] = static_cast<int>(decomposition_[p].displ);
  }
  std::vector<double> rows(static_cast<std::size_t>(global_rows_));
  check_mpi(PMPI_Allgatherv(local.data(), static_cast<int>(local.size()), MPI_DOUBLE, rows.data(),
                            counts.data(), displs.data(), MPI_DOUBLE, library_comm_),
            "MPI_Allgatherv (row nonzeros)");
  return rows;
}

void Runtime::update_work(std::span<const double> weight) {
  if (decomposition_.empty()) return;
  const RowBlock& mine = decomposition_[static_cast<std::size_t>(rank_)];
  if (config_.lb_model == "nnz") {
    const std::vector<double> rows = data_.local_row_nonzeros();
    work_units_ = std::accumulate(rows.begin(), rows.end(), 0.0);
  } else if (config_.lb_model == "weight" && !weight.empty()) {
    work_units_ =
        std::accumulate(weight.begin() + mine.displ, weight.begin() + mine.displ + mine.count, 0.0);
  } else {
    work_units_ = static_cast<double>(mine.count);
  }
}

RedistributionStats Runtime::move_to(const Decomposition& target) {
  const RedistributionStats stats = data_.redistribute(decomposition_, target, library_comm_);
  decomposition_ = target;
  return stats;
}

RedistributionStats Runtime::redistribute(const RowBlock& old_block, const RowBlock& new_block) {
  api_used_ = true;
  if (processes_->newcomers_pending()) {
    // They wait in XMPI_Get_data, whose other side is XMPI_Send_data.
    throw Error(Errc::bad_state,
                "spawned processes wait for their data: hand it over with XMPI_Send_data "
                "(they call XMPI_Get_data) before XMPI_Redistribute_data");
  }
  // Every process knows only its own blocks: gather both decompositions.
  const std::array<std::int64_t, 4> mine = {old_block.count, old_block.displ, new_block.count,
                                            new_block.displ};
  std::vector<std::int64_t> all(4 * static_cast<std::size_t>(size_));
  check_mpi(PMPI_Allgather(mine.data(), 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, library_comm_),
            "MPI_Allgather (partitions)");
  Decomposition from, to;
  for (int p = 0; p < size_; ++p) {
    from.push_back({all[4 * p], all[4 * p + 1]});
    to.push_back({all[4 * p + 2], all[4 * p + 3]});
  }
  // The registry validates both decompositions against every structure and
  // agrees on errors collectively before anything moves.
  const RedistributionStats stats = data_.redistribute(from, to, library_comm_);
  if (from == decomposition_ || decomposition_.empty()) {
    std::int64_t rows = 0;
    for (const RowBlock& block : to) rows += block.count;
    global_rows_ = rows;
    decomposition_ = to;
  }
  update_work({});
  return stats;
}

RowBlock Runtime::eval_lbalance(int iteration, int max_iterations, std::span<const double> weight) {
  api_used_ = true;
  if (decomposition_.empty()) {
    throw Error(Errc::bad_state,
                "no decomposition to balance: call XMPI_Get_wsize (or register data) first");
  }
  if (config_.lb_model == "weight" && weight.size() != static_cast<std::size_t>(global_rows_)) {
    throw Error(Errc::invalid_argument,
                "weight: FLEXMPI_LB_MODEL=weight needs a weight for each of the " +
                    std::to_string(global_rows_) + " rows");
  }
  if (config_.lb_model == "weight" && work_units_ == 0.0) update_work(weight);
  if (monitor_->iteration_open() && !si_iteration_) {
    throw Error(Errc::bad_state,
                "XMPI_Eval_lbalance belongs after XMPI_Monitor_iter_end: the iteration opened "
                "by XMPI_Monitor_iter_begin is still open");
  }
  if (monitor_->iteration_open()) end_iteration({});
  // Evaluate an interval once, right after it closed (by this call or by
  // XMPI_Monitor_iter_end just before it).
  if (interval_traced_) return decomposition_[static_cast<std::size_t>(rank_)];

  nlohmann::json extra = nlohmann::json::object();
  // What the last redistribution really cost (the slowest process), for the
  // prediction model's price per byte.
  const double measured = last_interval_->redistribution_seconds();
  if (measured > 0.0) {
    extra["measured_redistribution_seconds"] = measured;
    redistribution_cost_.observe(pending_redistribution_bytes_, measured);
    pending_redistribution_bytes_ = 0.0;
  }
  if (config_.policy == "lb") {
    LoadBalancer::Situation situation;
    situation.current = decomposition_;
    situation.global_size = global_rows_;
    if (config_.lb_model != "count") situation.row_work = global_row_work(weight);
    // Rebalancing pays off only if iterations remain to use the new partition.
    situation.remaining_iterations = static_cast<long long>(max_iterations) - iteration - 1;
    situation.bytes_per_row = data_.bytes_per_row();
    const BalanceDecision decision =
        balancer_->evaluate(*last_interval_, situation, redistribution_cost_);
    extra.update(decision.to_json());
    if (decision.changed) {
      const double start = wall_seconds();
      const RedistributionStats stats = move_to(decision.after);
      update_work(weight);
      const double seconds = wall_seconds() - start;
      monitor_->record_redistribution(seconds);
      pending_redistribution_bytes_ =
          busiest_process_bytes(decision.before, decision.after, situation.bytes_per_row);
      extra["redistribution"] = {{"bytes_sent", stats.bytes_sent},
                                 {"bytes_received", stats.bytes_received},
                                 {"seconds", seconds}};
      if (rank_ == 0) {
        log_->info("interval {}: imbalance {:.2f}, rebalanced to {}", last_interval_->index,
                   decision.verdict.imbalance, extra["partition"].dump());
      }
    }
  }
  trace_interval(extra);
  return decomposition_[static_cast<std::size_t>(rank_)];
}

void Runtime::write_profile() noexcept {
  // Profile-only mode: an unmodified program run with flexmpi preloaded
  // (LD_PRELOAD) gets its profile on standard error unless FLEXMPI_PROFILE
  // says where; a program linked with flexmpi gets one only if it asks.
  std::string destination = config_.profile;
  const char* preload = std::getenv("LD_PRELOAD");
  const bool preloaded = preload != nullptr && std::strstr(preload, "libflexmpi") != nullptr;
  if (destination.empty() && !api_used_ && preloaded) destination = "-";
  int wanted = destination.empty() ? 0 : 1;  // the report is collective: agree first
  PMPI_Allreduce(MPI_IN_PLACE, &wanted, 1, MPI_INT, MPI_MAX, library_comm_);
  if (wanted == 0) return;
  if (destination.empty()) destination = "-";
  try {
    write_profile_report(comm_profile_, wall_seconds() - start_wall_, library_comm_, destination);
  } catch (const std::exception& e) {
    log_->error("could not write the profile: {}", e.what());
  }
}

}  // namespace flexmpi
