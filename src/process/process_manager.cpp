#include "process/process_manager.hpp"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "balancing/partitioner.hpp"
#include "config/config.hpp"
#include "core/context.hpp"
#include "core/decomposition_state.hpp"
#include "flexmpi.h"
#include "flexmpi/error.hpp"
#include "resources/hostfile.hpp"
#include "resources/node_classes.hpp"
#include "util/agreement.hpp"
#include "util/clock.hpp"

extern char** environ;

namespace flexmpi {
namespace {

using nlohmann::json;

// MPI_Abort's error code for a job ended after a failed MPI_Comm_spawn
// (end_job_if_spawn_failed); Open MPI's mpiexec then exits non-zero (1).
constexpr int kSpawnFailureAbortCode = 3;
// Tag of MPI_Intercomm_create on the rank 0 + new processes communicator.
constexpr int kJoinTag = 4301;
// MPI_Info key of XMPI_Spawn that asks for one spawn for all processes (Alg. 2).
constexpr const char* kBatchKey = "flexmpi_batch";
// Set by a Slurm helper job for the processes it starts: the port of the
// job they join (SlurmResources::launch).
constexpr const char* kJoinPortVariable = "FLEXMPI_JOIN_PORT";
// Set (MPI_Info "env" key) for the processes flexmpi's own MPI_Comm_spawn
// starts: a process whose parent is a program's own MPI_Comm_spawn is an
// ordinary MPI process and must not try to join flexmpi's parents. Not
// FLEXMPI_*: those are settings, and an unknown one is refused.
constexpr const char* kSpawnedMarker = "XMPI_SPAWNED_BY_FLEXMPI";

// The running processes' side of a spawn or launch: rank 0 merged with the
// new processes, the intercommunicator gone (Alg. 1 line 8).
MPI_Comm merge_with_children(MPI_Comm& inter) {
  MPI_Comm peer = MPI_COMM_NULL;
  check_mpi(PMPI_Intercomm_merge(inter, 0, &peer), "MPI_Intercomm_merge (spawn)");
  check_mpi(PMPI_Comm_disconnect(&inter), "MPI_Comm_disconnect (spawn)");
  return peer;
}

// The cores this process may run on (its affinity mask: a batch system's
// cgroup or taskset may give fewer than the machine has).
int usable_cores() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0) return CPU_COUNT(&cpus);
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

// MPI_UNIVERSE_SIZE: the slots mpiexec gave the job, if the MPI library says.
std::optional<int> universe_size() {
  int* value = nullptr;
  int flag = 0;
  if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &value, &flag) != MPI_SUCCESS ||
      flag == 0 || value == nullptr) {
    return std::nullopt;
  }
  return *value;
}

std::string processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  PMPI_Get_processor_name(name, &length);
  return std::string(name, static_cast<std::size_t>(std::max(length, 0)));
}

// Every FLEXMPI_* variable of this process: a spawned process gets the same
// settings as its parents even if they were changed after mpiexec started.
json flexmpi_environment() {
  json env = json::object();
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const auto equals = text.find('=');
    if (text.rfind("FLEXMPI_", 0) == 0 && equals != std::string::npos) {
      env[text.substr(0, equals)] = text.substr(equals + 1);
    }
  }
  return env;
}

void apply_environment(const json& env) {
  std::vector<std::string> mine;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    if (text.rfind("FLEXMPI_", 0) == 0) mine.push_back(text.substr(0, text.find('=')));
  }
  for (const std::string& name : mine) unsetenv(name.c_str());
  for (const auto& [name, value] : env.items()) {
    setenv(name.c_str(), value.get<std::string>().c_str(), 1);
  }
}

bool executable_file(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string current_directory() {
  std::vector<char> buffer(4096);
  if (getcwd(buffer.data(), buffer.size()) == nullptr) return ".";
  return buffer.data();
}

// The program MPI_Comm_spawn will start, as an absolute path. A missing
// program must be caught here: Open MPI aborts the whole job when it cannot
// start one.
std::string resolve_command(const std::string& command) {
  if (command.empty()) throw Error(Errc::invalid_argument, "command is empty");
  std::vector<std::string> candidates;
  if (command.find('/') != std::string::npos) {
    candidates.push_back(command[0] == '/' ? command : current_directory() + "/" + command);
  } else {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path != nullptr ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');) {
      if (!dir.empty()) candidates.push_back(dir + "/" + command);
    }
    candidates.push_back(current_directory() + "/" + command);  // as in the thesis' examples
  }
  for (const std::string& candidate : candidates) {
    if (executable_file(candidate)) return candidate;
  }
  throw Error(Errc::invalid_argument,
              "command '" + command + "': no executable file of that name" +
                  (command.find('/') != std::string::npos ? std::string()
                                                          : " in PATH or the working directory") +
                  " (checked on rank 0's host)");
}

std::string self_executable() {
  std::vector<char> buffer(4096);
  const ssize_t length = readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  if (length <= 0) throw Error(Errc::unsupported, "cannot find this program (/proc/self/exe)");
  return std::string(buffer.data(), static_cast<std::size_t>(length));
}

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

std::string info_value(MPI_Info info, const char* key) {
  if (info == MPI_INFO_NULL) return {};
  int length = 0, flag = 0;
  check_mpi(PMPI_Info_get_valuelen(info, key, &length, &flag), "MPI_Info_get_valuelen");
  if (flag == 0) return {};
  std::vector<char> value(static_cast<std::size_t>(length) + 1);
  check_mpi(PMPI_Info_get(info, key, length, value.data(), &flag), "MPI_Info_get");
  return value.data();
}

// Adds the marker to the environment the "env" key gives the new process,
// after the caller's own variables, if any.
void mark_as_flexmpi_spawn(MPI_Info info) {
  std::string environment = info_value(info, "env");
  if (!environment.empty() && environment.back() != '\n') environment += '\n';
  environment += std::string(kSpawnedMarker) + "=1";
  check_mpi(PMPI_Info_set(info, "env", environment.c_str()), "MPI_Info_set");
}

json to_json(const Decomposition& blocks) {
  json list = json::array();
  for (const RowBlock& block : blocks) list.push_back({block.count, block.displ});
  return list;
}

Decomposition from_json(const json& list) {
  Decomposition blocks;
  for (const json& block : list)
    blocks.push_back({block[0].get<std::int64_t>(), block[1].get<std::int64_t>()});
  return blocks;
}

void free_comm(MPI_Comm& comm) {
  if (comm != MPI_COMM_NULL) PMPI_Comm_free(&comm);
  comm = MPI_COMM_NULL;
}

// The new library communicator returns errors (flexmpi checks every code);
// the application's keeps the error handler it had.
void set_error_handlers(MPI_Comm library, MPI_Comm world, MPI_Comm old_world) {
  check_mpi(PMPI_Comm_set_errhandler(library, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  if (world == MPI_COMM_NULL || old_world == MPI_COMM_NULL) return;
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_get_errhandler(old_world, &handler) == MPI_SUCCESS) {
    PMPI_Comm_set_errhandler(world, handler);
    PMPI_Errhandler_free(&handler);
  }
}

}  // namespace

// ---- state kept to undo a failed spawn -----------------------------------------

struct ProcessManager::Snapshot {
  MPI_Comm library = MPI_COMM_NULL;
  MPI_Comm world = MPI_COMM_NULL;
  std::int64_t rows = -1;
  Decomposition decomposition;
  std::vector<bool> awaiting;
  std::optional<Scheduler> scheduler;  // rank 0
  std::vector<double> known_speed;     // rank 0
};

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
}

ProcessManager::~ProcessManager() {
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
    // Debian's MPICH 4.0 (device ch4:ucx) cannot spawn or open ports (SPEC 7);
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

bool ProcessManager::is_spawned_process() {
  if (std::getenv(kJoinPortVariable) != nullptr) return true;  // started by a helper job
  MPI_Comm parent = MPI_COMM_NULL;
  if (PMPI_Comm_get_parent(&parent) != MPI_SUCCESS || parent == MPI_COMM_NULL) return false;
  return std::getenv(kSpawnedMarker) != nullptr;
}

// ---- agreement and decisions -------------------------------------------------------

ProcessManager::Blocker ProcessManager::reconfiguration_blocker(bool needs_spawn_support) const {
  if (status_ == ProcessStatus::removed) {
    return {"this process was removed (XMPI_REMOVED): it may only call MPI_Finalize",
            Errc::bad_state};
  }
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
  await_every_rank(context_.library_comm(), {watched_call(op), loop_.iterations_monitored()},
                   config_.collective_timeout);
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

void ProcessManager::ensure_process_table() {
  if (table_ready_) return;
  // Before the first reconfiguration every process belongs to the initial set.
  std::string name = processor_name();
  name.resize(MPI_MAX_PROCESSOR_NAME, '\0');
  std::vector<char> all(context_.rank() == 0
                            ? static_cast<std::size_t>(context_.size()) * MPI_MAX_PROCESSOR_NAME
                            : 0);
  check_mpi(PMPI_Gather(name.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(),
                        MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, context_.library_comm()),
            "MPI_Gather (hosts)");
  if (context_.rank() == 0) {
    if (config_.emulate_cluster) {
      initial_hosts_ = place_initial_processes(config_.hosts, context_.size());
    } else {
      for (int p = 0; p < context_.size(); ++p) {
        initial_hosts_.emplace_back(all.data() +
                                    static_cast<std::size_t>(p) * MPI_MAX_PROCESSOR_NAME);
      }
    }
    known_speed_.assign(static_cast<std::size_t>(context_.size()), 0.0);
  }
  table_ready_ = true;
}

Scheduler& ProcessManager::scheduler() {
  if (!scheduler_) {
    resources_ = make_resource_manager(config_.resources, config_.hosts, initial_hosts_,
                                       {config_.slurm_join, config_.slurm_mpiexec});
    initial_hosts_ = resources_->place_initial_processes(std::move(initial_hosts_));
    scheduler_ = std::make_unique<Scheduler>(resources_->status(0).nodes, config_.scheduler);
    scheduler_->set_initial_processes(initial_hosts_);
    bound_ =
        process_bound({config_.max_procs, !config_.hosts.empty() || config_.resources == "slurm",
                       universe_size(), usable_cores(), static_cast<int>(initial_hosts_.size())});
  }
  return *scheduler_;
}

ResourceView ProcessManager::describe_resources() {
  Scheduler& s = scheduler();
  std::map<std::string, NodeClassStatus> classes;
  for (const NodeDescription& node : s.nodes()) {
    NodeClassStatus& c = classes[node.proc_type];
    c.name = node.proc_type;
    c.granted_pes += node.processing_elements;
    if (node.cost) {
      c.cost = *node.cost;
    } else if (const auto described = find_node_class(config_.node_classes, node.proc_type);
               described && c.cost == 0.0) {
      // No cost on the host's line: its class's, from FLEXMPI_NODE_CLASSES.
      c.cost = described->cost_per_hour;
    }
  }
  ResourceView view;
  view.bound = bound_;
  for (const ScheduledProcess& p : s.processes()) {
    const auto c = classes.find(s.node_class_of(p.host));
    view.process_classes.push_back(c == classes.end() ? std::string() : c->first);
    if (c == classes.end()) continue;  // a host no node describes
    ++c->second.running;
    if (p.dynamic) ++c->second.removable;
  }
  for (auto& [name, c] : classes) view.classes.push_back(std::move(c));
  try {
    view.reclaimed = static_cast<int>(s.plan_reclaim().size());
  } catch (const Error& e) {
    view.unmet_reclaim = e.what();
  }
  return view;
}

ResourceView ProcessManager::resource_view(long long iteration) {
  ensure_process_table();
  return decide([&] {
           Scheduler& s = scheduler();  // creates resources_ at the first call
           SystemStatus status = resources_->status(iteration);
           if (!status.warning.empty()) context_.log().warn("resources: {}", status.warning);
           s.set_nodes(std::move(status.nodes));
           ResourceView view = describe_resources();
           warn_if_beyond_bound(view.granted_pes());
           return json(view);
         })
      .get<ResourceView>();
}

void ProcessManager::warn_if_beyond_bound(int granted_pes) {
  // Once per change of the grants: a policy grows up to the bound only
  // (after a failed spawn, that failure was the message).
  if (bound_.allows(granted_pes) || granted_pes == warned_granted_pes_ || !spawn_failure_.empty()) {
    return;
  }
  warned_granted_pes_ = granted_pes;
  context_.log().warn("resources: {} PEs granted ({}), but the job grows no further than {}",
                      granted_pes, resources_->name(), bound_.describe());
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

void ProcessManager::check_bound(int running, int spawning) const {
  if (!spawn_failure_.empty()) {
    throw Error(Errc::mpi_failure, "spawning " + std::to_string(spawning) +
                                       " process(es): no more spawns in this job, after " +
                                       spawn_failure_);
  }
  // In 64 bits: XMPI_Spawn's nprocs is any int, and INT_MAX more must not wrap.
  const long long total = static_cast<long long>(running) + spawning;
  if (bound_.allows(total)) return;
  throw Error(Errc::invalid_argument, "spawning " + std::to_string(spawning) +
                                          " process(es) would make " + std::to_string(total) +
                                          ", over " + bound_.describe());
}

void ProcessManager::remove_reclaimed() {
  agree(Op::remove, reconfiguration_blocker(true));
  ensure_process_table();
  apply_removal(decide([&] { return plan_removal(scheduler().plan_reclaim()); }));
}

double ProcessManager::emulated_speed(const std::string& host) {
  return relative_speed(config_.node_classes, scheduler().node_class_of(host));
}

void ProcessManager::submit_allocation(std::span<const std::string> planned) {
  const double start = wall_seconds();
  std::map<std::string, int> per_host;
  for (const ScheduledProcess& p : scheduler().processes()) ++per_host[p.host];
  for (const std::string& host : planned) {
    if (!host.empty()) ++per_host[host];
  }
  resources_->submit_allocation(per_host);
  resource_manager_seconds_ += wall_seconds() - start;
}

// ---- speeds and decompositions (rank 0) ------------------------------------------

void ProcessManager::refresh_known_speeds() {
  // Speeds measured since the last reconfiguration replace what was known.
  const std::vector<double> speeds = loop_.fresh_speeds();
  if (speeds.empty()) return;
  known_speed_.resize(speeds.size(), 0.0);
  for (std::size_t p = 0; p < speeds.size(); ++p) known_speed_[p] = std::max(0.0, speeds[p]);
}

std::vector<double> ProcessManager::estimated_speeds() {
  refresh_known_speeds();
  known_speed_.resize(static_cast<std::size_t>(context_.size()), 0.0);
  // A process never measured is assumed as fast as the measured ones of its
  // node class, else as the average measured one (thesis 5.2.1); with no
  // measurement at all every process counts the same.
  Scheduler& s = scheduler();
  std::map<std::string, std::pair<double, int>> per_class;
  double sum = 0.0;
  int known = 0;
  for (std::size_t p = 0; p < known_speed_.size(); ++p) {
    if (known_speed_[p] <= 0.0) continue;
    auto& entry = per_class[s.node_class_of(s.processes()[p].host)];
    entry.first += known_speed_[p];
    ++entry.second;
    sum += known_speed_[p];
    ++known;
  }
  std::vector<double> speeds(known_speed_.size(), 1.0);
  if (known == 0) return speeds;
  for (std::size_t p = 0; p < speeds.size(); ++p) {
    if (known_speed_[p] > 0.0) {
      speeds[p] = known_speed_[p];
      continue;
    }
    const auto entry = per_class.find(s.node_class_of(s.processes()[p].host));
    speeds[p] = entry != per_class.end() && entry->second.second > 0
                    ? entry->second.first / entry->second.second
                    : sum / known;
  }
  return speeds;
}

Decomposition ProcessManager::proportional_decomposition(const std::vector<double>& shares) const {
  return blocks_from_counts(split_rows(state_.global_rows(), state_.latest_row_work(), shares));
}

// ---- spawning ------------------------------------------------------------------------

json ProcessManager::plan_spawn(const SpawnRequest& request) {
  if (request.nprocs < 1) {
    throw Error(Errc::invalid_argument,
                "nprocs=" + std::to_string(request.nprocs) + ": expected >= 1");
  }
  PreparedSpawn prepared;
  prepared.nprocs = request.nprocs;
  prepared.command = request.command.empty() ? self_executable() : resolve_command(request.command);
  prepared.argv = request.argv;
  prepared.batch = request.batch || info_value(request.info, kBatchKey) == "true" ||
                   info_value(request.info, kBatchKey) == "1";
  Scheduler& s = scheduler();
  check_bound(static_cast<int>(s.processes().size()), request.nprocs);
  prepared.hosts = s.plan_spawn(request.nprocs, request.node_classes);
  prepared.name_hosts = resources_->spawn_names_hosts();
  // Without a hostfile the caller's own "host" key, if any, places them.
  const std::string user_host = info_value(request.info, "host");
  for (std::string& host : prepared.hosts) {
    if (host.empty()) host = user_host;
  }
  if (request.info != MPI_INFO_NULL) {
    check_mpi(PMPI_Info_dup(request.info, &prepared.info), "MPI_Info_dup");
    int length = 0, flag = 0;
    check_mpi(PMPI_Info_get_valuelen(prepared.info, kBatchKey, &length, &flag),
              "MPI_Info_get_valuelen");
    if (flag != 0) check_mpi(PMPI_Info_delete(prepared.info, kBatchKey), "MPI_Info_delete");
  }
  if (prepared_ && prepared_->info != MPI_INFO_NULL) PMPI_Info_free(&prepared_->info);
  prepared_ = std::move(prepared);
  return {{"steps", prepared_->batch ? 1 : prepared_->nprocs}};
}

void ProcessManager::spawn(const SpawnRequest& request) {
  agree(Op::spawn, reconfiguration_blocker(true));
  ensure_process_table();
  spawn_planned(decide([&] { return plan_spawn(request); }));
}

void ProcessManager::spawn_planned(const json& plan) {
  const double start = wall_seconds();
  const int before = context_.size();
  const int steps = plan["steps"].get<int>();
  run_spawn_steps(steps, false);
  loop_.record_reconfiguration(
      {{"action", "spawn"},
       {"nprocs_before", before},
       {"nprocs", context_.size()},
       {"spawn_calls", steps},
       {"processor_names", std::exchange(spawned_processor_names_, {})},
       {"seconds", wall_seconds() - start},
       {"resource_manager_seconds", std::exchange(resource_manager_seconds_, 0.0)}});
}

MPI_Comm ProcessManager::spawn_one_step(int step) {
  PreparedSpawn& p = *prepared_;
  if (step == injected_failure_step_) {
    injected_failure_step_ = -1;
    throw Error(Errc::mpi_failure, "MPI_Comm_spawn of '" + p.command + "' (step " +
                                       std::to_string(step) + ") failed: injected failure (test)");
  }
  const int first = p.batch ? 0 : step;
  const int count = p.batch ? p.nprocs : 1;
  if (resources_->launches_processes()) {
    launch_one_step(first, count);
    return MPI_COMM_NULL;  // the processes are accepted by everyone (accept_launched)
  }
  std::vector<char*> args;
  for (std::string& arg : p.argv) args.push_back(arg.data());
  args.push_back(nullptr);
  // One MPI_Info per process, the caller's keys plus the scheduler's host (Alg. 1 line 4).
  std::vector<MPI_Info> infos(static_cast<std::size_t>(count), MPI_INFO_NULL);
  auto release = [&] {
    for (MPI_Info& info : infos) {
      if (info != MPI_INFO_NULL) PMPI_Info_free(&info);
    }
  };
  std::string where;
  for (int k = 0; k < count; ++k) {
    const std::string& host = p.hosts[static_cast<std::size_t>(first + k)];
    if (p.info != MPI_INFO_NULL) {
      check_mpi(PMPI_Info_dup(p.info, &infos[k]), "MPI_Info_dup");
    } else {
      check_mpi(PMPI_Info_create(&infos[k]), "MPI_Info_create");
    }
    mark_as_flexmpi_spawn(infos[k]);
    if (!host.empty()) where += (where.empty() ? " on " : ", ") + host;
    // An emulated node, or a Slurm node that is not a host name, is a name
    // only: MPI places the process on this machine.
    if (!host.empty() && !config_.emulate_cluster && p.name_hosts) {
      check_mpi(PMPI_Info_set(infos[k], "host", host.c_str()), "MPI_Info_set");
    }
  }
  MPI_Comm inter = MPI_COMM_NULL;
  std::vector<int> errors(static_cast<std::size_t>(count), MPI_SUCCESS);
  int code = MPI_SUCCESS;
  const bool same_info = count == 1 || p.hosts[static_cast<std::size_t>(first)].empty() ||
                         std::all_of(p.hosts.begin(), p.hosts.end(),
                                     [&](const std::string& h) { return h == p.hosts.front(); });
  if (same_info) {
    code = PMPI_Comm_spawn(p.command.c_str(), args.data(), count, infos[0], 0, self_, &inter,
                           errors.data());
  } else {
    // Alg. 2 with a host per process: one spawn, one command/info per process.
    std::vector<char*> commands(static_cast<std::size_t>(count), p.command.data());
    std::vector<char**> argvs(static_cast<std::size_t>(count), args.data());
    std::vector<int> maxprocs(static_cast<std::size_t>(count), 1);
    code = PMPI_Comm_spawn_multiple(count, commands.data(), argvs.data(), maxprocs.data(),
                                    infos.data(), 0, self_, &inter, errors.data());
  }
  release();
  if (code != MPI_SUCCESS) {
    // Open MPI 4.1's mpiexec keeps the job that failed to start and waits
    // for it forever, and a next spawn aborts the job: no more spawns.
    spawn_failure_ = "MPI_Comm_spawn of '" + p.command + "'" + where +
                     " failed: " + mpi_error_text(code) +
                     "; this job spawns no more processes (check that every host of "
                     "FLEXMPI_HOSTFILE is in mpiexec's allocation: --host, --hostfile)";
    throw Error(Errc::mpi_failure, spawn_failure_);
  }
  return merge_with_children(inter);
}

void ProcessManager::launch_one_step(int first, int count) {
  PreparedSpawn& p = *prepared_;
  const std::string& host = p.hosts[static_cast<std::size_t>(first)];
  for (int k = 1; k < count; ++k) {
    if (p.hosts[static_cast<std::size_t>(first + k)] != host) {
      throw Error(Errc::unsupported,
                  "a batch spawn with FLEXMPI_SLURM_JOIN starts its processes on one node (one "
                  "helper job), but the scheduler placed them on " +
                      host + " and " + p.hosts[static_cast<std::size_t>(first + k)] +
                      ": spawn them one by one");
    }
  }
  std::vector<std::string> argv{p.command};
  argv.insert(argv.end(), p.argv.begin(), p.argv.end());
  join_port_.assign(MPI_MAX_PORT_NAME, '\0');
  check_mpi(PMPI_Open_port(MPI_INFO_NULL, join_port_.data()), "MPI_Open_port");
  try {
    resources_->launch(host, count, argv, current_directory(), join_port_.c_str());
  } catch (...) {
    PMPI_Close_port(join_port_.data());
    throw;
  }
}

MPI_Comm ProcessManager::accept_launched() {
  // Collective, so that MPI connects every running process with the new
  // ones: they belong to another mpiexec, and a bridge through rank 0 alone
  // (MPI_Intercomm_create, as after a spawn) waits forever for the others'
  // addresses. A program that cannot start flexmpi never connects
  // (docs/architecture.md, "Slurm": what the join cannot recover from).
  MPI_Comm inter = MPI_COMM_NULL;
  const int code =
      PMPI_Comm_accept(join_port_.c_str(), MPI_INFO_NULL, 0, context_.library_comm(), &inter);
  if (context_.rank() == 0) PMPI_Close_port(join_port_.data());
  check_mpi(code, "MPI_Comm_accept (joining processes)");
  MPI_Comm merged = MPI_COMM_NULL;
  check_mpi(PMPI_Intercomm_merge(inter, 0, &merged), "MPI_Intercomm_merge (join)");
  free_comm(inter);
  return merged;
}

ProcessManager::Snapshot ProcessManager::take_snapshot() {
  Snapshot snapshot;
  snapshot.library = context_.library_comm();
  snapshot.world = XMPI_COMM_WORLD;
  snapshot.rows = state_.global_rows();
  snapshot.decomposition = state_.blocks();
  snapshot.awaiting = awaiting_data_;
  if (context_.rank() == 0) {
    // The speeds of the processes measured before the spawn, from the
    // latest interval: after it (restart_after_reconfiguration) that interval
    // belongs to the old process set and is no longer read.
    refresh_known_speeds();
    snapshot.scheduler = scheduler();
    snapshot.known_speed = known_speed_;
  }
  return snapshot;
}

void ProcessManager::run_spawn_steps(int steps, bool newcomer) {
  Snapshot snapshot = take_snapshot();
  // Every node the new processes need is booked before the first starts
  // (with Slurm: one scheduling pass for all helper jobs, not one per step);
  // a spawn that fails gives back what it booked.
  if (context_.rank() == 0 && prepared_) submit_allocation(prepared_->hosts);
  try {
    spawn_steps(steps, newcomer, snapshot);
  } catch (...) {
    if (context_.rank() == 0) submit_allocation();
    throw;
  }
  // Success: the communicators of the call's start go.
  if (context_.library_comm() != snapshot.library) PMPI_Comm_free(&snapshot.library);
  if (XMPI_COMM_WORLD != snapshot.world) PMPI_Comm_free(&snapshot.world);
  if (context_.rank() == 0 && prepared_) {
    submit_allocation();  // hosts MPI chose ("" in the plan) are known now
    if (prepared_->info != MPI_INFO_NULL) PMPI_Info_free(&prepared_->info);
    prepared_.reset();
  }
}

void ProcessManager::spawn_steps(int steps, bool newcomer, Snapshot& snapshot) {
  for (int step = 0; step < steps; ++step) {
    const double step_start = wall_seconds();
    MPI_Comm peer = MPI_COMM_NULL;
    const int fresh = spawn_and_agree(step, peer, snapshot, newcomer);
    MPI_Comm merged = MPI_COMM_NULL;
    if (config_.slurm_join.empty()) {
      // Everyone joins the new processes: rank 0 is the bridge (peer communicator).
      MPI_Comm inter = MPI_COMM_NULL;
      check_mpi(PMPI_Intercomm_create(context_.library_comm(), 0, peer, 1, kJoinTag, &inter),
                "MPI_Intercomm_create (join)");
      check_mpi(PMPI_Intercomm_merge(inter, 0, &merged), "MPI_Intercomm_merge (join)");
      free_comm(inter);
      free_comm(peer);
    } else {
      merged = accept_launched();
    }
    const json join =
        broadcast_json(context_.rank() == 0 ? join_message(step, steps, fresh) : json(), 0, merged);
    MPI_Comm library = MPI_COMM_NULL, world = MPI_COMM_NULL;
    mirror_newcomer_start(merged, library, world, snapshot, newcomer);
    record_new_hosts(merged, step, fresh);
    // The communicators of the call's start stay until it succeeds (roll_back).
    release_unless_snapshot(snapshot);
    adopt(library, world, join, false);
    set_error_handlers(library, world, snapshot.world);
    free_comm(merged);
    if (context_.rank() == 0) {
      context_.log().debug("spawn step {}: {} process(es) joined in {:.1f} ms", step, fresh,
                           1e3 * (wall_seconds() - step_start));
    }
  }
}

int ProcessManager::spawn_and_agree(int step, MPI_Comm& peer, Snapshot& snapshot, bool newcomer) {
  // Rank 0 spawns (over MPI_COMM_SELF) and tells everyone whether it worked.
  json outcome = json::object();
  if (context_.rank() == 0) {
    const double start = wall_seconds();
    try {
      peer = spawn_one_step(step);
      context_.log().debug(
          "spawn step {}: {} {:.1f} ms", step,
          config_.slurm_join.empty() ? "MPI_Comm_spawn and merge" : "handed to the helper job",
          1e3 * (wall_seconds() - start));
      outcome["new"] = prepared_->batch ? prepared_->nprocs : 1;
    } catch (const Error& e) {
      outcome = {{"code", static_cast<int>(e.code())}, {"message", e.what()}};
      if (!spawn_failure_.empty()) outcome["spawn_failure"] = spawn_failure_;
    }
  }
  outcome = broadcast_json(outcome, 0, context_.library_comm());
  if (!outcome.contains("new")) {
    roll_back(snapshot, newcomer);
    if (outcome.contains("spawn_failure")) stop_spawning(outcome["spawn_failure"]);
    throw Error(static_cast<Errc>(outcome["code"].get<int>()),
                outcome["message"].get<std::string>());
  }
  return outcome["new"].get<int>();
}

json ProcessManager::join_message(int step, int steps, int fresh) {
  // What the new processes need (the others read the same).
  Decomposition blocks = state_.blocks();
  std::vector<bool> awaiting = awaiting_data_;
  for (int k = 0; k < fresh; ++k) {
    if (!blocks.empty()) blocks.push_back({0, state_.global_rows()});
    awaiting.push_back(true);
  }
  json join = {{"remaining", steps - step - 1}, {"env", flexmpi_environment()},
               {"rows", state_.global_rows()},  {"decomposition", to_json(blocks)},
               {"awaiting", awaiting},          {"loop", loop_.export_state()}};
  if (config_.emulate_cluster) {
    // A new process runs at the speed of the emulated node it was placed on.
    std::vector<double> speeds;
    for (const ScheduledProcess& process : scheduler().processes()) {
      speeds.push_back(emulated_speed(process.host));
    }
    const int first = prepared_->batch ? 0 : step;
    for (int k = 0; k < fresh; ++k) {
      speeds.push_back(emulated_speed(prepared_->hosts[static_cast<std::size_t>(first + k)]));
    }
    join["emulated_speeds"] = speeds;
  }
  return join;
}

void ProcessManager::mirror_newcomer_start(MPI_Comm& merged, MPI_Comm& library, MPI_Comm& world,
                                           Snapshot& snapshot, bool newcomer) {
  // The new processes check their settings, then create their runtime,
  // whose two MPI_Comm_dup calls these mirror (Runtime's constructor).
  std::optional<int> failing = first_failing_rank(false, merged);
  if (!failing) {
    check_mpi(PMPI_Comm_dup(merged, &library), "MPI_Comm_dup");
    check_mpi(PMPI_Comm_dup(merged, &world), "MPI_Comm_dup");
    failing = first_failing_rank(false, merged);
  }
  if (!failing) return;
  free_comm(library);
  free_comm(world);
  free_comm(merged);
  roll_back(snapshot, newcomer);
  throw Error(Errc::mpi_failure,
              "a spawned process could not start flexmpi (rank " + std::to_string(*failing) +
                  " of the new communicator; its standard error says why): spawn undone");
}

void ProcessManager::record_new_hosts(MPI_Comm merged, int step, int fresh) {
  // Rank 0 learns where the new processes run.
  std::string name = processor_name();
  name.resize(MPI_MAX_PROCESSOR_NAME, '\0');
  int merged_size = 0;
  PMPI_Comm_size(merged, &merged_size);
  std::vector<char> names(
      context_.rank() == 0 ? static_cast<std::size_t>(merged_size) * MPI_MAX_PROCESSOR_NAME : 0);
  check_mpi(PMPI_Gather(name.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(),
                        MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, merged),
            "MPI_Gather (hosts)");
  if (context_.rank() != 0) return;
  std::vector<std::string> hosts;
  const int first = prepared_->batch ? 0 : step;
  for (int k = 0; k < fresh; ++k) {
    std::string host = prepared_->hosts[static_cast<std::size_t>(first + k)];
    const std::string reported =
        names.data() + static_cast<std::size_t>(merged_size - fresh + k) * MPI_MAX_PROCESSOR_NAME;
    if (host.empty()) host = reported;
    hosts.push_back(host);
    spawned_processor_names_.push_back(reported);
  }
  scheduler().add_spawned(hosts, prepared_->batch);
  known_speed_.resize(known_speed_.size() + static_cast<std::size_t>(fresh), 0.0);
}

void ProcessManager::adopt(MPI_Comm library, MPI_Comm world, const json& join, bool newcomer) {
  context_.rebind(library, world);
  state_.assign(join["rows"].get<std::int64_t>(), from_json(join["decomposition"]), newcomer);
  awaiting_data_ = join["awaiting"].get<std::vector<bool>>();
  if (newcomer) {
    status_ = ProcessStatus::newly_spawned;
    table_ready_ = true;  // rank 0 has had it since the first spawn
  }
  loop_.restart_after_reconfiguration();
  if (newcomer) loop_.import_state(join["loop"]);
}

void ProcessManager::release_unless_snapshot(const Snapshot& snapshot) {
  // The communicators of the call's start stay until it succeeds (roll_back).
  MPI_Comm library = context_.library_comm();
  if (library != snapshot.library) free_comm(library);
  if (XMPI_COMM_WORLD != snapshot.world) free_comm(XMPI_COMM_WORLD);
}

void ProcessManager::roll_back(Snapshot& snapshot, bool newcomer) {
  if (newcomer) {
    // A process spawned by this call leaves: it never existed for the application.
    // Every communicator it shares with the others must be freed first: Open
    // MPI's MPI_Finalize releases the live ones with messages to the other
    // processes, which arrive on communicators they have freed and crash a
    // later communicator that reuses the context id.
    context_.log().debug("spawn undone: this process finalizes");
    if (snapshot.library != context_.library_comm()) free_comm(snapshot.library);
    if (snapshot.world != XMPI_COMM_WORLD) free_comm(snapshot.world);
    abandon_process_();  // ends the process: touch nothing after
  }
  const bool changed = context_.library_comm() != snapshot.library;
  release_unless_snapshot(snapshot);
  context_.rebind(snapshot.library, snapshot.world);
  state_.assign(snapshot.rows, snapshot.decomposition);
  awaiting_data_ = snapshot.awaiting;
  if (context_.rank() == 0) {
    if (snapshot.scheduler) *scheduler_ = *snapshot.scheduler;
    known_speed_ = snapshot.known_speed;
    if (prepared_ && prepared_->info != MPI_INFO_NULL) PMPI_Info_free(&prepared_->info);
    prepared_.reset();
  }
  if (changed) loop_.restart_after_reconfiguration();
}

ProcessManager::ParentJoin ProcessManager::join_parents() {
  ParentJoin joined;
  if (const char* port = std::getenv(kJoinPortVariable)) {
    // Started by a Slurm helper job: every running process accepts (accept_launched).
    MPI_Comm inter = MPI_COMM_NULL;
    check_mpi(PMPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter),
              "MPI_Comm_connect (joining)");
    check_mpi(PMPI_Intercomm_merge(inter, 1, &joined.merged), "MPI_Intercomm_merge (joining)");
    free_comm(inter);
  } else {
    // Merge with rank 0 (which spawned us), then join all the others through it.
    MPI_Comm parent = MPI_COMM_NULL, peer = MPI_COMM_NULL, siblings = MPI_COMM_NULL,
             inter = MPI_COMM_NULL;
    check_mpi(PMPI_Comm_get_parent(&parent), "MPI_Comm_get_parent");
    check_mpi(PMPI_Intercomm_merge(parent, 1, &peer), "MPI_Intercomm_merge (spawned)");
    check_mpi(PMPI_Comm_disconnect(&parent), "MPI_Comm_disconnect (parent)");
    check_mpi(PMPI_Comm_dup(MPI_COMM_WORLD, &siblings), "MPI_Comm_dup");
    check_mpi(PMPI_Intercomm_create(siblings, 0, peer, 0, kJoinTag, &inter),
              "MPI_Intercomm_create (spawned)");
    check_mpi(PMPI_Intercomm_merge(inter, 1, &joined.merged), "MPI_Intercomm_merge (spawned)");
    free_comm(inter);
    free_comm(peer);
    free_comm(siblings);
  }
  joined.join = broadcast_json(json(), 0, joined.merged);
  apply_environment(joined.join["env"]);
  // Agreement on the settings, before the runtime's collective MPI_Comm_dup calls.
  std::string failure;
  try {
    (void)load_config_from_environment();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (auto first = first_failing_rank(!failure.empty(), joined.merged)) {
    abandon_join(joined, failure, *first);
  }
  return joined;
}

void ProcessManager::abandon_join(ParentJoin& joined, const std::string& failure,
                                  int first_failing) {
  int rank = 0;
  PMPI_Comm_rank(joined.merged, &rank);
  if (first_failing == rank) {
    std::fprintf(stderr, "flexmpi (spawned process): %s\n", failure.c_str());
  }
  free_comm(joined.merged);
  PMPI_Finalize();
  std::exit(first_failing == rank ? EXIT_FAILURE : EXIT_SUCCESS);
}

void ProcessManager::finish_join(ParentJoin& joined) {
  std::string name = processor_name();
  name.resize(MPI_MAX_PROCESSOR_NAME, '\0');
  check_mpi(PMPI_Gather(name.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, nullptr,
                        MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, joined.merged),
            "MPI_Gather (hosts)");
  adopt(context_.library_comm(), XMPI_COMM_WORLD, joined.join, true);
  check_mpi(PMPI_Comm_set_errhandler(context_.library_comm(), MPI_ERRORS_RETURN),
            "MPI_Comm_set_errhandler");
  free_comm(joined.merged);
  // The spawns left in this XMPI_Spawn call are collective over us too.
  const int remaining = joined.join["remaining"].get<int>();
  if (remaining > 0) run_spawn_steps(remaining, true);
}

// ---- removal -------------------------------------------------------------------------

json ProcessManager::plan_removal(const std::vector<int>& ranks) {
  scheduler().check_removable(ranks);
  json plan = {{"victims", ranks}};
  if (!state_.blocks().empty()) {
    // The rows of the removed processes go to the others in proportion to
    // their power (under the workload model); the removed ones keep none
    // (not even the minimum of one row).
    const std::vector<double> speeds = estimated_speeds();
    const std::set<int> gone(ranks.begin(), ranks.end());
    std::vector<double> shares;
    for (std::size_t p = 0; p < speeds.size(); ++p) {
      if (!gone.contains(static_cast<int>(p))) shares.push_back(speeds[p]);
    }
    const std::vector<std::int64_t> kept =
        split_rows(state_.global_rows(), state_.latest_row_work(), shares);
    std::vector<std::int64_t> counts;
    for (std::size_t p = 0, k = 0; p < speeds.size(); ++p) {
      counts.push_back(gone.contains(static_cast<int>(p)) ? 0 : kept[k++]);
    }
    plan["target"] = to_json(blocks_from_counts(counts));
  }
  return plan;
}

void ProcessManager::remove(int nprocs, std::span<const std::string> node_classes) {
  agree(Op::remove, reconfiguration_blocker(true));
  ensure_process_table();
  const std::vector<std::string> classes(node_classes.begin(), node_classes.end());
  const json plan = decide([&] { return plan_removal(scheduler().plan_remove(nprocs, classes)); });
  apply_removal(plan);
}

void ProcessManager::remove_ranks(std::span<const int> ranks) {
  agree(Op::remove, reconfiguration_blocker(true));
  ensure_process_table();
  std::vector<int> sorted(ranks.begin(), ranks.end());
  const json plan = decide([&] {
    if (sorted.empty()) throw Error(Errc::invalid_argument, "no rank to remove");
    scheduler().check_removable(sorted);  // before sorting: reports duplicates
    std::sort(sorted.begin(), sorted.end());
    return plan_removal(sorted);
  });
  apply_removal(plan);
}

void ProcessManager::apply_removal(const json& plan) {
  const double start = wall_seconds();
  const int before = context_.size();
  const std::vector<int> victims = plan["victims"].get<std::vector<int>>();
  const std::set<int> gone(victims.begin(), victims.end());
  const bool leaving = gone.contains(context_.rank());
  // Their data first: if it fails, nothing else has changed.
  double data_seconds = 0.0;
  if (plan.contains("target")) {
    state_.move_to(from_json(plan["target"]));
    // Timed when every process has its rows, so that rank 0's clock
    // separates the data (5.3.4) from the removal (eq. 5.7).
    check_mpi(PMPI_Barrier(context_.library_comm()), "MPI_Barrier (removal)");
    data_seconds = wall_seconds() - start;
  }
  // Alg. 3 lines 8-12: a communicator without them.
  MPI_Comm library = MPI_COMM_NULL, world = MPI_COMM_NULL;
  check_mpi(PMPI_Comm_split(context_.library_comm(), leaving ? MPI_UNDEFINED : 0, context_.rank(),
                            &library),
            "MPI_Comm_split (remove)");
  if (!leaving) {
    check_mpi(PMPI_Comm_dup(library, &world), "MPI_Comm_dup (remove)");
    set_error_handlers(library, world, XMPI_COMM_WORLD);
  }
  // The context takes the new communicators before the old ones are freed,
  // so that it never holds a freed handle.
  MPI_Comm old_library = context_.library_comm(), old_world = XMPI_COMM_WORLD;
  if (leaving) {
    become_removed();
  } else {
    context_.rebind(library, world);
  }
  free_comm(old_library);
  free_comm(old_world);
  if (leaving) return;
  Decomposition blocks;
  std::vector<bool> awaiting;
  for (std::size_t p = 0; p < awaiting_data_.size(); ++p) {
    if (gone.contains(static_cast<int>(p))) continue;
    if (!state_.blocks().empty()) blocks.push_back(state_.blocks()[p]);
    awaiting.push_back(awaiting_data_[p]);
  }
  state_.assign(state_.global_rows(), std::move(blocks));
  awaiting_data_ = std::move(awaiting);
  if (context_.rank() == 0) {
    scheduler().remove(victims);
    submit_allocation();
    std::vector<double> speeds;
    for (std::size_t p = 0; p < known_speed_.size(); ++p) {
      if (!gone.contains(static_cast<int>(p))) speeds.push_back(known_speed_[p]);
    }
    known_speed_ = std::move(speeds);
  }
  state_.update_work({});
  loop_.restart_after_reconfiguration();
  loop_.record_reconfiguration(
      {{"action", "remove"},
       {"nprocs_before", before},
       {"nprocs", context_.size()},
       {"removed_ranks", victims},
       {"seconds", wall_seconds() - start - data_seconds},
       {"resource_manager_seconds", std::exchange(resource_manager_seconds_, 0.0)},
       {"redistribution_seconds", data_seconds}});
}

void ProcessManager::become_removed() {
  // A communicator of its own, so that MPI_Finalize (and the runtime's last
  // collective, the profile) waits for nobody. Rank 0 of the application
  // writes the profile; this process (rank 0 of its own communicator now)
  // does not (the runtime asks status()).
  MPI_Comm alone = MPI_COMM_NULL;
  check_mpi(PMPI_Comm_dup(MPI_COMM_SELF, &alone), "MPI_Comm_dup (removed)");
  context_.rebind(alone, MPI_COMM_NULL, "removed");
  context_.note_api_call();
  status_ = ProcessStatus::removed;
  state_.clear();
  awaiting_data_.assign(1, false);
  loop_.restart_after_reconfiguration();
}

// ---- handing data to new processes ----------------------------------------------------

int ProcessManager::apply_data(const json& plan) {
  if (plan.contains("target")) {
    const double start = wall_seconds();
    state_.move_to(from_json(plan["target"]));
    state_.share_replicated();
    loop_.record_reconfiguration({{"action", "data_handover"},
                                  {"nprocs", context_.size()},
                                  {"redistribution_seconds", wall_seconds() - start}});
    state_.update_work({});
  }
  awaiting_data_.assign(awaiting_data_.size(), false);
  if (status_ == ProcessStatus::newly_spawned) status_ = ProcessStatus::running;
  loop_.restart_after_reconfiguration();
  return plan["iteration"].get<int>();
}

RowBlock ProcessManager::send_data(int iteration) {
  Blocker blocker = reconfiguration_blocker(false);
  if (blocker.message.empty() && status_ == ProcessStatus::newly_spawned) {
    blocker = {"this process was just spawned: it receives its data with XMPI_Get_data",
               Errc::bad_state};
  }
  if (blocker.message.empty() && !newcomers_pending()) {
    blocker = {"no spawned process waits for data: XMPI_Send_data follows XMPI_Spawn",
               Errc::bad_state};
  }
  agree(Op::data, blocker);
  ensure_process_table();
  const json plan = decide([&] {
    json p = {{"iteration", iteration}};
    if (!state_.blocks().empty())
      p["target"] = to_json(proportional_decomposition(estimated_speeds()));
    return p;
  });
  apply_data(plan);
  return state_.own_block();
}

int ProcessManager::get_data() {
  Blocker blocker = reconfiguration_blocker(false);
  if (blocker.message.empty() && status_ != ProcessStatus::newly_spawned) {
    blocker = {
        "XMPI_Get_data is for newly spawned processes; the others hand the data over "
        "with XMPI_Send_data",
        Errc::bad_state};
  }
  agree(Op::data, blocker);
  ensure_process_table();
  // Rank 0 always belongs to the initial set: it never runs this function's decision.
  const json plan = decide([]() -> json { throw Error(Errc::internal, "get_data on rank 0"); });
  return apply_data(plan);
}

// ---- moving to a new set of processing elements -------------------------------------------

RowBlock ProcessManager::reconfigure(const std::map<std::string, int>& target, int iteration,
                                     const SpawnRequest& how) {
  agree(Op::reconfigure, reconfiguration_blocker(true));
  ensure_process_table();
  std::vector<std::string> spawn_classes;
  int spawn_count = 0;
  const json plan = decide([&] {
    Scheduler& s = scheduler();
    std::vector<std::string> remove_classes;
    int remove_count = 0;
    if (target.contains("")) {
      if (target.size() != 1) {
        throw Error(
            Errc::invalid_argument,
            "target: give either a total (node class \"\") or counts per node class, not both");
      }
      const int delta = target.at("") - static_cast<int>(s.processes().size());
      spawn_count = std::max(delta, 0);
      remove_count = std::max(-delta, 0);
    } else {
      std::map<std::string, int> running;
      for (const ScheduledProcess& p : s.processes()) ++running[s.node_class_of(p.host)];
      for (const auto& [node_class, wanted] : target) {
        if (wanted < 0) {
          throw Error(Errc::invalid_argument, "target: " + std::to_string(wanted) +
                                                  " processes of class '" + node_class + "'");
        }
        const int delta = wanted - running[node_class];
        for (int k = 0; k < delta; ++k) spawn_classes.push_back(node_class);
        for (int k = 0; k < -delta; ++k) remove_classes.push_back(node_class);
      }
      spawn_count = static_cast<int>(spawn_classes.size());
      remove_count = static_cast<int>(remove_classes.size());
    }
    // Check both halves before changing anything.
    if (spawn_count > 0) {
      check_bound(static_cast<int>(s.processes().size()) - remove_count, spawn_count);
      (void)s.plan_spawn(spawn_count, spawn_classes);
    }
    json p = {{"spawn", spawn_count}, {"classes", spawn_classes}};
    if (remove_count > 0) p["removal"] = plan_removal(s.plan_remove(remove_count, remove_classes));
    return p;
  });
  if (plan.contains("removal")) {
    apply_removal(plan["removal"]);
    if (status_ == ProcessStatus::removed) return {};
  }
  spawn_count = plan["spawn"].get<int>();
  if (spawn_count == 0) return state_.own_block();
  SpawnRequest request = how;
  request.nprocs = spawn_count;
  request.node_classes = plan["classes"].get<std::vector<std::string>>();
  spawn_planned(decide([&] { return plan_spawn(request); }));
  // The new processes call get_data (XMPI_Get_data) to match this.
  return send_data(iteration);
}

}  // namespace flexmpi
