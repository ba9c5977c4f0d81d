#include "core/runtime.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>

#include "emulation/speed_emulator.hpp"
#include "flexmpi/error.hpp"
#include "monitoring/clock.hpp"
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

Runtime::Runtime(int thread_level)
    : config_(load_config_from_environment()),
      comm_profile_(thread_level == MPI_THREAD_MULTIPLE),
      start_wall_(wall_seconds()) {
  check_mpi(PMPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check_mpi(PMPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  check_mpi(PMPI_Comm_dup(MPI_COMM_WORLD, &library_comm_), "MPI_Comm_dup");
  check_mpi(PMPI_Comm_dup(MPI_COMM_WORLD, &XMPI_COMM_WORLD), "MPI_Comm_dup");

  log_ = std::make_shared<spdlog::logger>("flexmpi",
                                          std::make_shared<spdlog::sinks::stderr_sink_st>());
  log_->set_pattern("[flexmpi " + std::to_string(rank_) + "] %v");
  log_->set_level(spdlog::level::from_str(config_.log_level));

  const SpeedEmulator emulator =
      SpeedEmulator::for_rank(config_.emulate_speed.empty() ? std::vector<double>{}
                                                              : parse_speed_list(config_.emulate_speed),
                              rank_);
  MetricContext context;
  context.current_work = [this] { return work_units_; };
  context.log = [this](const std::string& message) {
    if (rank_ == 0) log_->info(message);
  };
  metric_ = make_metric(config_.metric, context);
  monitor_ = std::make_unique<Monitor>(*metric_, comm_profile_, emulator, config_.sampling_interval);
  if (emulator.active()) log_->info("emulating a processing element of relative speed {}", emulator.speed());
  if (rank_ == 0 && !config_.trace.empty()) trace_ = std::make_unique<TraceWriter>(config_.trace);
}

Runtime::~Runtime() {
  if (XMPI_COMM_WORLD != MPI_COMM_NULL) PMPI_Comm_free(&XMPI_COMM_WORLD);
  if (library_comm_ != MPI_COMM_NULL) PMPI_Comm_free(&library_comm_);
}

void Runtime::start(int thread_level) {
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
  instance_->write_profile();
  delete instance_;
  instance_ = nullptr;
}

void Runtime::set_work(double work_units) {
  api_used_ = true;
  work_units_ = work_units;
}

void Runtime::begin_iteration(std::span<const std::string> events) {
  api_used_ = true;
  monitor_->begin(events);
}

void Runtime::end_iteration(std::span<long long> counts) {
  monitor_->end(counts);
  if (monitor_->interval_complete()) close_interval();
}

void Runtime::close_interval() {
  ProcessInterval local = monitor_->take_interval();
  local.rank = rank_;
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
    report.processes.push_back(ProcessInterval::unpack(
        std::span<const double, ProcessInterval::kFieldCount>(
            all.data() + static_cast<std::size_t>(p) * ProcessInterval::kFieldCount,
            ProcessInterval::kFieldCount)));
  }
  if (trace_) {
    trace_->write(interval_record(report, config_.dedicated_threshold, config_.imbalance_threshold));
  }
  log_->debug("interval {}: imbalance {:.3f}", report.index, report.imbalance());
  last_interval_ = std::move(report);
}

void Runtime::write_profile() noexcept {
  // Profile-only mode: a program run with flexmpi preloaded that never called
  // the API gets its profile on standard error unless FLEXMPI_PROFILE says where.
  std::string destination = config_.profile;
  if (destination.empty() && !api_used_) destination = "-";
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
