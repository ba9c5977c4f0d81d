#include "core/runtime.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "balancing/partitioner.hpp"
#include "checkpoint/checkpointer.hpp"
#include "core/settings.hpp"
#include "core/ull_calibrator.hpp"
#include "emulation/speed_emulator.hpp"
#include "flexmpi/error.hpp"
#include "flexmpi/flexmpi.hpp"
#include "process/process_manager.hpp"
#include "profiling/profile_report.hpp"
#include "resources/node_classes.hpp"
#include "util/agreement.hpp"
#include "util/clock.hpp"
#include "util/collective_watchdog.hpp"
#include "util/output_file.hpp"

namespace flexmpi {

namespace {

// Where this process wants the profile written, empty for nowhere.
// Profile-only mode: an unmodified program run with flexmpi preloaded
// (LD_PRELOAD) gets its profile on standard error ("-") unless FLEXMPI_REPORT
// says where; a program linked with flexmpi gets one only if it asks.
std::string requested_profile_destination(const std::string& report, bool api_used) {
  if (!report.empty()) return report;
  const char* preload = std::getenv("LD_PRELOAD");
  const bool preloaded = preload != nullptr && std::strstr(preload, "libflexmpi") != nullptr;
  return !api_used && preloaded ? "-" : "";
}

}  // namespace

Runtime& Runtime::get() {
  if (active_ == nullptr) {
    throw Error(Errc::bad_state, "flexmpi is not initialised: call MPI_Init first");
  }
  return *instance();
}

Runtime::Runtime(Config config, int thread_level, MPI_Comm world,
                 const std::vector<double>& emulated_speeds)
    : InterpositionHooks(thread_level == MPI_THREAD_MULTIPLE),
      config_(std::move(config)),
      start_wall_(wall_seconds()) {
  set_collective_timeout(config_.collective_timeout);
  context_ = std::make_unique<Context>(config_.log_level, world);
  state_ = std::make_unique<DecompositionState>(*context_, config_.lb_model);
  const int rank = context_->rank();
  // The emulated speed may be a function of this process's work units.
  std::vector<SpeedFunction> speeds = config_.emulate_speed;
  if (config_.emulate_cluster) {
    // The emulated cluster: each process at its node class's speed.
    const std::vector<double> by_class =
        emulated_speeds.empty()
            ? initial_emulated_speeds(config_.hosts, config_.node_classes, context_->size())
            : emulated_speeds;
    speeds.assign(by_class.begin(), by_class.end());
  }
  emulator_ = std::make_unique<SpeedEmulator>(SpeedEmulator::for_rank(
      speeds, rank, [this] { return state_->work(); }, config_.emulate_mode));
  if (config_.emulate_unit_seconds > 0.0) emulator_->fix_unit_seconds(config_.emulate_unit_seconds);
  MetricContext metric_context;
  metric_context.current_work = [this] { return state_->work(); };
  // Which metric is in use is worth a line only to who asks (FLEXMPI_LOG_LEVEL=debug):
  // an explicit FLEXMPI_METRIC that cannot be honoured is an error instead.
  metric_context.log = [this, rank](const std::string& message) {
    if (rank == 0) context_->log().debug(message);
  };
  metric_ = make_metric(config_.metric, metric_context);
  // The nodes' network measures only for a partitioner that reads them.
  monitor_ = std::make_unique<Monitor>(
      *metric_, comm_profile_, emulator_->active() ? emulator_.get() : nullptr,
      config_.sampling_interval, find_partitioner(config_.partitioner).reads_node_measures);
  call_monitor_ = monitor_.get();
  controller_ = std::make_unique<AdaptationController>(config_, *context_, *state_, *monitor_,
                                                       std::string(metric_->name()));
  processes_ = std::make_unique<ProcessManager>(config_, *context_, *state_, *controller_,
                                                [] { Runtime::abandon(); });
  controller_->attach(*processes_);
  checkpointer_ = std::make_unique<Checkpointer>(
      config_.checkpoint, *context_, *state_,
      Checkpointer::Links{
          [this] { return controller_->fresh_speeds(); },
          [this](const nlohmann::json& record) { controller_->trace_record(record); }},
      /*joining=*/world != MPI_COMM_WORLD);
  if (emulator_->active()) {
    context_->log().info("emulating a processing element of relative speed {}",
                         emulator_->describe());
  }
  const int size = context_->size();
  if (rank == 0 && !speeds.empty() && speeds.size() < static_cast<std::size_t>(size)) {
    context_->log().warn(
        "FLEXMPI_EMULATE_SPEED gives {} speeds for {} processes: ranks {} to {} run at "
        "full speed",
        speeds.size(), size, speeds.size(), size - 1);
  }
}

// Members go in reverse declaration order: users before what they use. The
// PMPI wrappers stop telling the monitor just before it goes.
Runtime::~Runtime() {
  ull_calibrator_.reset();
  checkpointer_.reset();
  processes_.reset();
  controller_.reset();
  call_monitor_ = nullptr;
}

void Runtime::start(int thread_level) {
  // A process started by XMPI_Spawn first joins its parents (thesis Alg. 1).
  if (ProcessManager::is_spawned_process()) {
    start_spawned(thread_level);
    return;
  }
  std::string failure;
  try {
    active_ = new Runtime(load_config_from_environment(), thread_level);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // Agree: a configuration error on any process stops all of them before any
  // work, with one message (from the lowest failing rank) instead of a hang.
  const std::optional<int> first = first_failing_rank(!failure.empty(), MPI_COMM_WORLD);
  if (!first) return;
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (world_rank == *first) std::fprintf(stderr, "flexmpi: %s\n", failure.c_str());
  delete instance();
  active_ = nullptr;
  PMPI_Finalize();
  std::exit(EXIT_FAILURE);
}

void Runtime::start_spawned(int thread_level) {
  ProcessManager::ParentJoin joined = ProcessManager::join_parents();
  // Agreement on the settings, before the runtime's collective MPI_Comm_dup calls.
  std::string failure;
  Config config;
  try {
    config = load_config_from_environment();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (const std::optional<int> first = first_failing_rank(!failure.empty(), joined.merged)) {
    ProcessManager::abandon_join(joined, failure, *first);
  }
  // Agreement on the runtime, built on the merged communicator.
  try {
    active_ = new Runtime(std::move(config), thread_level, joined.merged,
                          joined.join.value("emulated_speeds", std::vector<double>{}));
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (const std::optional<int> first = first_failing_rank(!failure.empty(), joined.merged)) {
    delete instance();
    active_ = nullptr;
    ProcessManager::abandon_join(joined, failure, *first);
  }
  instance()->processes_->finish_join(joined);
}

void Runtime::abandon() noexcept {
  delete instance();  // frees the current communicators
  active_ = nullptr;
  PMPI_Finalize();
  std::exit(EXIT_SUCCESS);
}

void Runtime::end_after_checkpoint() noexcept {
  const bool output_lost = stop();
  PMPI_Finalize();
  std::exit(output_lost ? kOutputLostStatus : checkpointed_exit_status);
}

bool Runtime::stop() noexcept {
  if (active_ == nullptr) return false;
  bool intact = false;
  try {
    intact = instance()->controller_->finish_trace();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flexmpi: writing the trace: %s\n", e.what());
  }
  intact = instance()->write_profile() && intact;
  const bool fail = !intact && instance()->config_.output_errors_fail;
  if (fail) {
    std::fprintf(stderr,
                 "flexmpi: rank %d lost output (see above): exit status %d "
                 "(FLEXMPI_OUTPUT_ERRORS=warn keeps the program's own)\n",
                 instance()->rank(), kOutputLostStatus);
  }
  instance()->processes_->end_job_if_spawn_failed();
  delete instance();
  active_ = nullptr;
  return fail;
}

void Runtime::set_work(double work_units) {
  context_->note_api_call();
  state_->set_work(work_units);
}

RedistributionStats Runtime::redistribute(const RowBlock& old_block, const RowBlock& new_block) {
  context_->note_api_call();
  if (processes_->newcomers_pending()) {
    // They wait in XMPI_Get_data, whose other side is XMPI_Send_data.
    throw Error(Errc::bad_state,
                "spawned processes wait for their data: hand it over with XMPI_Send_data "
                "(they call XMPI_Get_data) before XMPI_Redistribute_data");
  }
  await_every_rank(context_->library_comm(),
                   {CollectiveCall::redistribute_data, monitor_->iterations_monitored()});
  return state_->redistribute_blocks(old_block, new_block);
}

bool Runtime::write_profile() noexcept {
  // A removed process is no longer part of the application: rank 0 of the
  // application writes the profile.
  if (processes_->status() == ProcessStatus::removed) return true;
  const std::string requested = requested_profile_destination(config_.report, context_->api_used());
  // A rank still in another flexmpi call is named, not waited for in the exchange.
  await_every_rank(context_->library_comm(),
                   {CollectiveCall::finalize, monitor_->iterations_monitored()});
  int wanted = requested.empty() ? 0 : 1;  // the report is collective: agree first
  PMPI_Allreduce(MPI_IN_PLACE, &wanted, 1, MPI_INT, MPI_MAX, context_->library_comm());
  if (wanted == 0) return true;
  // Built, not assigned: GCC 12 at -O3 reports a false -Wrestrict on
  // assigning a literal to a std::string (GCC bug 105329).
  const std::string destination = requested.empty() ? std::string("-") : requested;
  try {
    return write_profile_report(comm_profile_, wall_seconds() - start_wall_,
                                context_->library_comm(), destination);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flexmpi: could not write the profile: %s\n", e.what());
    return false;
  }
}

void start_runtime(int thread_level) { Runtime::start(thread_level); }

bool stop_runtime() noexcept { return Runtime::stop(); }

}  // namespace flexmpi
