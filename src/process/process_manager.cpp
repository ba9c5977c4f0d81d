#include "process/process_manager.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "base/context.hpp"
#include "base/mpi_check.hpp"
#include "config/config.hpp"
#include "flexmpi.h"
#include "flexmpi/error.hpp"
#include "process/launch_environment.hpp"
#include "util/agreement.hpp"

namespace flexmpi {

using nlohmann::json;
using namespace launch;  // NOLINT(google-build-using-namespace)

namespace {

// MPI_Abort's error code for a job ended after a failed MPI_Comm_spawn
// (end_job_if_spawn_failed); Open MPI's mpiexec then exits non-zero (1).
constexpr int kSpawnFailureAbortCode = 3;

std::string op_name(int op) {
  switch (op) {
    case 1:
      return "XMPI_Spawn";
    case 2:
      return "XMPI_Remove";
    case 3:
      return "XMPI_Send_data/XMPI_Get_data";
    case 4:
      return "reconfigure";
    default:
      return "operation " + std::to_string(op);
  }
}

constexpr const char* kRemovedMessage =
    "this process was removed (XMPI_REMOVED): it may only call MPI_Finalize";
}  // namespace

ProcessManager::ProcessManager(const Config& config, Context& context, DecompositionState& state,
                               ReconfigurationHooks& loop, std::function<void()> abandon_process)
    : config_(config),
      context_(context),
      state_(state),
      loop_(loop),
      abandon_process_(std::move(abandon_process)) {
  check_mpi(PMPI_Comm_dup(MPI_COMM_SELF, &self_), "MPI_Comm_dup (self)");
  check_mpi(PMPI_Comm_set_errhandler(self_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  awaiting_data_.assign(static_cast<std::size_t>(context.size()), false);
  // The watchdog names a newcomer that keeps the others waiting for what it
  // has not done, instead of "not arrived".
  set_rank_note([this](MPI_Comm comm, int rank) -> std::string {
    const auto r = static_cast<std::size_t>(rank);
    if (comm != context_.library_comm() || r >= awaiting_data_.size() || !awaiting_data_[r])
      return {};
    return "was spawned after " + std::to_string(spawned_after_) +
           " monitored iterations and has not called XMPI_Get_data (a spawned process calls "
           "XMPI_Get_data before any other collective call: until then the running processes "
           "wait for it in XMPI_Send_data, and a collective of its own waits for them)";
  });
}

ProcessManager::~ProcessManager() {
  set_rank_note({});
  if (prepared_ && prepared_->info != MPI_INFO_NULL) PMPI_Info_free(&prepared_->info);
  free_comm(self_);
}

bool ProcessManager::newcomers_pending() const {
  return std::find(awaiting_data_.begin(), awaiting_data_.end(), true) != awaiting_data_.end();
}

std::optional<std::string> ProcessManager::spawn_unsupported_reason() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    if (PMPI_Get_library_version(version, &length) != MPI_SUCCESS) return std::nullopt;
    const std::string text(version, static_cast<std::size_t>(length));
    // Debian's MPICH 4.0 (device ch4:ucx) cannot spawn or open ports;
    // trying hangs or aborts, so flexmpi refuses before any MPI call.
    if (text.find("MPICH") != std::string::npos && text.find("ch4:ucx") != std::string::npos) {
      std::string first_line = text.substr(0, text.find('\n'));
      std::replace(first_line.begin(), first_line.end(), '\t', ' ');
      first_line.erase(std::unique(first_line.begin(), first_line.end(),
                                   [](char a, char b) { return a == ' ' && b == ' '; }),
                       first_line.end());
      return "this MPI library (" + first_line +
             ", device ch4:ucx) cannot spawn processes; dynamic processes need Open MPI "
             "(build flexmpi with -DFLEXMPI_MPI=openmpi)";
    }
    return std::nullopt;
  }();
  return reason;
}

// ---- agreement and decisions -------------------------------------------------------

void ProcessManager::require_not_removed() const {
  if (status_ == ProcessStatus::removed) throw Error(Errc::bad_state, kRemovedMessage);
}

ProcessManager::Blocker ProcessManager::reconfiguration_blocker(bool needs_spawn_support) const {
  if (status_ == ProcessStatus::removed) return {kRemovedMessage, Errc::bad_state};
  if (needs_spawn_support) {
    if (auto reason = spawn_unsupported_reason()) return {*reason, Errc::unsupported};
  }
  if (loop_.iteration_open()) {
    return {
        "a monitored iteration is open: end it (XMPI_Monitor_iter_end or XMPI_Eval_lbalance) "
        "before changing the processes",
        Errc::bad_state};
  }
  return {};
}

CollectiveCall ProcessManager::watched_call(Op op) {
  switch (op) {
    case Op::spawn:
      return CollectiveCall::spawn;
    case Op::remove:
      return CollectiveCall::remove;
    case Op::data:
      return CollectiveCall::hand_over_data;
    case Op::reconfigure:
      return CollectiveCall::reconfigure;
  }
  return CollectiveCall::reconfigure;
}

void ProcessManager::agree(Op op, const Blocker& blocker) {
  context_.note_api_call();
  await_every_rank(context_.library_comm(), {watched_call(op), loop_.iterations_monitored()});
  int values[2] = {static_cast<int>(op), -static_cast<int>(op)};
  int reduced[2];
  // MIN of (op, -op) gives the smallest and the largest op called.
  check_mpi(PMPI_Allreduce(values, reduced, 2, MPI_INT, MPI_MIN, context_.library_comm()),
            "MPI_Allreduce (agreement)");
  if (reduced[0] != -reduced[1]) {
    throw Error(Errc::bad_state, "the processes called different operations (" +
                                     op_name(reduced[0]) + " and " + op_name(-reduced[1]) +
                                     "); spawning, removing and handing data over are "
                                     "collective over XMPI_COMM_WORLD");
  }
  // One process cannot take part: everyone reports its reason.
  agree_on_failure(blocker.message.empty()
                       ? std::nullopt
                       : std::optional<Error>(Error(blocker.code, blocker.message)),
                   context_.library_comm());
}

json ProcessManager::decide(const std::function<json()>& at_root) {
  return decide_at_root(at_root, context_.library_comm());
}

void ProcessManager::stop_spawning(const std::string& failure) {
  spawn_failure_ = failure;
  // The policies see a job that may not grow (ResourceView::bound).
  bound_ = {context_.size(), "no more spawns after a failed MPI_Comm_spawn", ""};
}

void ProcessManager::end_job_if_spawn_failed() {
  if (spawn_failure_.empty() || status_ == ProcessStatus::removed) return;
  // mpiexec would wait forever for the processes of the failed spawn: the
  // job ends here, once every process has finished and flushed its output.
  std::fflush(nullptr);
  PMPI_Barrier(context_.library_comm());
  if (context_.rank() != 0) return;
  std::fprintf(stderr,
               "flexmpi: the application has finished; aborting the job (MPI_Abort, error code "
               "%d) because Open MPI's mpiexec would wait forever for the processes of this "
               "failed spawn: %s\n",
               kSpawnFailureAbortCode, spawn_failure_.c_str());
  std::fflush(stderr);
  PMPI_Abort(MPI_COMM_WORLD, kSpawnFailureAbortCode);
}

}  // namespace flexmpi
