// The running processes' side of a spawn (Algs. 1, 2), with its rollback.
#include <algorithm>
#include <optional>
#include <utility>

#include "base/context.hpp"
#include "base/mpi_check.hpp"
#include "config/config.hpp"
#include "flexmpi.h"
#include "flexmpi/error.hpp"
#include "process/launch_environment.hpp"
#include "process/process_manager.hpp"
#include "redistribution/decomposition_state.hpp"
#include "util/agreement.hpp"
#include "util/clock.hpp"

namespace flexmpi {

using nlohmann::json;
using namespace launch;  // NOLINT(google-build-using-namespace)

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
  if (resources_launch_processes(config_.resources, config_.strategy_settings)) {
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
    // An emulated node, or a resource manager's node that is not a host
    // name (spawn_names_hosts), is a name only: MPI places the process here.
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
                  "FLEXMPI_RESOURCES=" + config_.resources +
                      " starts a batch spawn's processes on one node, but the scheduler placed "
                      "them on " +
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
  // addresses. A program that cannot start flexmpi never connects: the
  // join cannot recover from that (the backend's design notes say more).
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
  // (for a batch system: one scheduling pass for all nodes, not one per step);
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
    if (!resources_launch_processes(config_.resources, config_.strategy_settings)) {
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
      context_.log().debug("spawn step {}: {} {:.1f} ms", step,
                           resources_launch_processes(config_.resources, config_.strategy_settings)
                               ? "handed to the resource manager"
                               : "MPI_Comm_spawn and merge",
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
  // A newcomer's registry learns its (empty) block here, so that in-place
  // structures it registers before XMPI_Get_data have their place.
  state_.assign(join["rows"].get<std::int64_t>(), from_json(join["decomposition"]), newcomer);
  awaiting_data_ = join["awaiting"].get<std::vector<bool>>();
  spawned_after_ = loop_.iterations_monitored();
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

}  // namespace flexmpi
