// Dynamic process management (thesis 4.3, Algorithms 1-3): spawning and
// removing processes at run time, rebuilding XMPI_COMM_WORLD and the
// library's private communicator, and handing data to new processes.
//
// How a spawn works here (Alg. 1, one process per MPI_Comm_spawn):
//   1. every process calls the operation (collective over XMPI_COMM_WORLD);
//      they first agree that all called the same one and that none is in a
//      state that forbids it; rank 0 (always of the initial set) asks the
//      scheduler (thesis 4.4) for the hosts, checks the program exists and
//      broadcasts the plan;
//   2. rank 0 spawns the process over MPI_COMM_SELF with MPI_Info "host" and
//      merges with it; all processes then join it with MPI_Intercomm_create
//      (rank 0 as the bridge) + MPI_Intercomm_merge. The thesis spawns over
//      XMPI_COMM_WORLD; with Open MPI 4.1 a spawn that fails at the root
//      leaves the other processes waiting forever inside MPI_Comm_spawn, so
//      only rank 0 spawns and tells the others whether it worked. The
//      resulting communicator is the same: the old ranks, then the new one;
//   3. the new process runs flexmpi's MPI_Init wrapper: it merges with its
//      parents, receives their FLEXMPI_* settings, the decomposition and the
//      number of spawns left in this call, creates its runtime on the merged
//      communicator, and takes part in the remaining spawns before its
//      MPI_Init returns (XMPI_Get_process_status: XMPI_NEWLY_SPAWNED);
//   4. everyone duplicates the merged communicator into the new library
//      communicator and XMPI_COMM_WORLD. A new process owns an empty block
//      of the decomposition until data are handed to it (send_data/get_data).
// A spawn is atomic: if any step fails (the scheduler finds no free PE, the
// program does not exist, MPI_Comm_spawn fails, a new process cannot start
// flexmpi) every process gets the error, the processes spawned by this call
// finalize and exit inside their MPI_Init, and the application continues on
// its old communicators with its data untouched.
// Open MPI 4.1's runtime (mpiexec), however, does not recover from a failed
// MPI_Comm_spawn: the call returns MPI_ERR_SPAWN, but mpiexec keeps the job
// it could not start and waits for it forever once every process has ended,
// and a next spawn may abort the job (a program it cannot start aborts the
// job at once). So everything that can be checked is checked before
// MPI_Comm_spawn: the program (on rank 0's host), the node class and its
// free processing elements, the processes the job may reach
// (resources/process_bound.hpp). What cannot be checked from inside MPI is
// that the hosts of FLEXMPI_HOSTFILE are in mpiexec's allocation
// (--host/--hostfile): when such a spawn fails, the job spawns no more (the
// policies see a bound of the processes it has), the application goes on,
// and at MPI_Finalize rank 0 aborts the job once every process has
// finished, so that mpiexec ends, non-zero (end_job_if_spawn_failed).
//
// With a resource manager that starts processes itself
// (resources_launch_processes), step 2 differs: the resource manager starts
// the new processes on the chosen node, and every running process accepts
// their connection on an MPI port rank 0 opened.
//
// Batch spawning (Alg. 2): one MPI_Comm_spawn(_multiple) for all processes
// of the call; cheaper, but they share an MPI_COMM_WORLD and can only be
// removed together.
//
// Removal (Alg. 3): rank 0 picks the processes (scheduler); their rows go to
// the remaining processes in proportion to their last measured speeds (equal
// shares when unknown); MPI_Comm_split without them builds the new
// communicators (equivalent to Alg. 3's group exclusion + MPI_Comm_create, in
// one collective). A removed process gets XMPI_REMOVED, XMPI_COMM_WORLD ==
// MPI_COMM_NULL and a private communicator of its own, so its MPI_Finalize
// waits for nobody. Communicators are freed, not disconnected:
// MPI_Comm_disconnect of a merged communicator hangs with Open MPI 4.1 and
// is not needed for a spawned process (its own MPI_COMM_WORLD) to finalize.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/row_block.hpp"
#include "flexmpi/flexmpi.hpp"
#include "process/reconfiguration_hooks.hpp"
#include "resources/resource_manager.hpp"
#include "scheduler/scheduler.hpp"
#include "util/collective_watchdog.hpp"

namespace flexmpi {

struct Config;
class Context;
class DecompositionState;

/// What XMPI_Spawn asks for; only rank 0's request counts (thesis Fig. 4.9).
struct SpawnRequest {
  std::string command;                    ///< program to run; empty: this program
  std::vector<std::string> argv;          ///< its arguments, without the program name
  int nprocs = 0;                         ///< processes to spawn
  std::vector<std::string> node_classes;  ///< empty, or one node class per process
  MPI_Info info = MPI_INFO_NULL;          ///< the caller's keys (copied, never modified)
  bool batch = false;                     ///< one spawn for all (Alg. 2)
};

class ProcessManager {
 public:
  /// Works on the runtime's context (communicators, rank, size) and
  /// decomposition, and tells the adaptation loop about every change.
  /// abandon_process: ends this process at once (a process whose spawn was
  /// undone); it does not return.
  ProcessManager(const Config& config, Context& context, DecompositionState& state,
                 ReconfigurationHooks& loop, std::function<void()> abandon_process);
  ~ProcessManager();
  ProcessManager(const ProcessManager&) = delete;
  ProcessManager& operator=(const ProcessManager&) = delete;

  [[nodiscard]] ProcessStatus status() const { return status_; }
  /// Throws Error(bad_state) on a removed process: it is no longer part of
  /// the application, and may only ask its status and call MPI_Finalize.
  void require_not_removed() const;
  /// Some process was spawned and has not received its data yet (XMPI_Get_data).
  [[nodiscard]] bool newcomers_pending() const;

  /// XMPI_Spawn (Algs. 1, 2). Collective over XMPI_COMM_WORLD.
  void spawn(const SpawnRequest& request);
  /// XMPI_Remove (Alg. 3): nprocs processes, by node class or the newest.
  void remove(int nprocs, std::span<const std::string> node_classes);
  /// Removes the processes of these ranks (spawned ones only).
  void remove_ranks(std::span<const int> ranks);
  /// getSystemStatus (thesis 5.4): rank 0 asks the resource manager
  /// (FLEXMPI_RESOURCES) what the job holds at `iteration`, gives it to the
  /// scheduler and broadcasts the view per node class. Collective.
  ResourceView resource_view(long long iteration);
  /// Removes the processes that run on reclaimed PEs (resource_view's
  /// `reclaimed`), their data going to the others. Collective.
  void remove_reclaimed();
  /// XMPI_Get_data, in a newly spawned process: its rows of every registered
  /// structure and the iteration the others passed to send_data.
  int get_data();
  /// The running processes' side of get_data: rebalances the rows over all
  /// processes (new ones as fast as those of their node class, thesis
  /// 5.2.1) and moves them. Returns this process's block.
  RowBlock send_data(int iteration);
  /// Moves the application to `target` processes per node class ("" = any
  /// node: a total), spawning (with `how`) and removing as needed, then
  /// rebalancing. Returns this process's block ({0, rows} if it was removed).
  RowBlock reconfigure(const std::map<std::string, int>& target, int iteration,
                       const SpawnRequest& how);

  /// Whether this process was started by XMPI_Spawn (it has a parent).
  static bool is_spawned_process();
  /// What a spawned process receives from its parents in MPI_Init.
  struct ParentJoin {
    MPI_Comm merged = MPI_COMM_NULL;  ///< the parents and the new processes
    nlohmann::json join;              ///< settings, decomposition, spawns left
  };
  /// MPI_Init of a spawned process, before its runtime exists: joins the
  /// parents and takes their FLEXMPI_* settings (the runtime then agrees on
  /// them: a process whose settings fail ends with all the new ones).
  static ParentJoin join_parents();
  /// Ends every new process of a join that failed (collective over the
  /// merged communicator); the lowest failing rank prints `failure`.
  [[noreturn]] static void abandon_join(ParentJoin& joined, const std::string& failure,
                                        int first_failing);
  /// MPI_Init of a spawned process, once its runtime exists: takes its place
  /// in the decomposition and in the spawns left of the parents' call.
  void finish_join(ParentJoin& joined);
  /// MPI_Finalize, after a failed MPI_Comm_spawn: every process flushes its
  /// output and waits for the others, then rank 0 aborts the job (MPI_Abort,
  /// error code 3; mpiexec exits non-zero), which Open MPI's mpiexec would
  /// otherwise never end. Nothing if no spawn failed.
  void end_job_if_spawn_failed();
  /// Why this MPI library cannot spawn processes, if it cannot.
  static std::optional<std::string> spawn_unsupported_reason();
  /// Tests only: on rank 0, step `step` (0-based) of the next spawn fails as
  /// if MPI_Comm_spawn had (a real failure would break Open MPI's runtime).
  static void inject_spawn_failure_for_testing(int step) { injected_failure_step_ = step; }

 private:
  enum class Op : int { spawn = 1, remove = 2, data = 3, reconfigure = 4 };
  struct Snapshot;

  // Why this process cannot take part in an operation ("" if it can).
  struct Blocker {
    std::string message;
    Errc code = Errc::bad_state;
  };
  // Agreement: every process called `op` and none is blocked; else every
  // process throws the same Error (the lowest blocked rank's).
  void agree(Op op, const Blocker& blocker);
  // The name the collective watchdog reports `op` under.
  static CollectiveCall watched_call(Op op);
  [[nodiscard]] Blocker reconfiguration_blocker(bool needs_spawn_support) const;
  // Runs `decide` on rank 0 and broadcasts its result or its error.
  nlohmann::json decide(const std::function<nlohmann::json()>& at_root);
  // Gathers the hosts of the initial set on rank 0, once (collective).
  void ensure_process_table();
  Scheduler& scheduler();  // rank 0 only
  /// Rank 0: the view of the scheduler's nodes and processes per node class.
  ResourceView describe_resources();
  /// Rank 0: tells the resource manager what the job runs now (submitAllocation),
  /// plus the hosts of processes about to be spawned (`planned`, "" = not
  /// known yet), so that their nodes are booked before the processes start,
  /// all at once; its time adds to resource_manager_seconds_.
  void submit_allocation(std::span<const std::string> planned = {});
  /// Rank 0: says once per value of the grants that they exceed bound_.
  void warn_if_beyond_bound(int granted_pes);
  /// Every process, after a failed MPI_Comm_spawn (`failure`): no more
  /// spawns in this job; the policies see a bound of the processes now.
  void stop_spawning(const std::string& failure);
  /// Rank 0: Error(invalid_argument) naming bound_ if `spawning` more
  /// processes than `running` exceed it.
  void check_bound(int running, int spawning) const;
  /// Rank 0: relative speed of a process on `host` of the emulated cluster.
  double emulated_speed(const std::string& host);

  nlohmann::json plan_spawn(const SpawnRequest& request);      // rank 0
  nlohmann::json plan_removal(const std::vector<int>& ranks);  // rank 0
  /// Rank 0: known_speed_ from the latest interval, if it measured the current processes.
  void refresh_known_speeds();
  std::vector<double> estimated_speeds();  // rank 0, per rank
  [[nodiscard]] Decomposition proportional_decomposition(const std::vector<double>& shares) const;

  // Every process of the current communicator: `steps` spawns of this call.
  void run_spawn_steps(int steps, bool newcomer);
  void spawn_steps(int steps, bool newcomer, Snapshot& snapshot);  // run_spawn_steps' loop
  // The steps of one spawn step (run_spawn_steps); the ones that can fail
  // roll the whole call back (roll_back) before they throw.
  Snapshot take_snapshot();
  int spawn_and_agree(int step, MPI_Comm& peer, Snapshot& snapshot, bool newcomer);
  nlohmann::json join_message(int step, int steps, int fresh);
  void mirror_newcomer_start(MPI_Comm& merged, MPI_Comm& library, MPI_Comm& world,
                             Snapshot& snapshot, bool newcomer);
  void record_new_hosts(MPI_Comm merged, int step, int fresh);
  MPI_Comm spawn_one_step(int step);  // rank 0: the spawn; returns rank 0 + children merged
  /// rank 0, when the resource manager starts processes:
  /// opens a port (join_port_) and has them launched with it.
  void launch_one_step(int first, int count);
  /// Everyone: accepts the launched processes; the merged communicator.
  MPI_Comm accept_launched();
  void adopt(MPI_Comm library, MPI_Comm world, const nlohmann::json& join, bool newcomer);
  void roll_back(Snapshot& snapshot, bool newcomer);
  void apply_removal(const nlohmann::json& plan);
  int apply_data(const nlohmann::json& plan);
  void become_removed();
  /// Frees the current communicators unless they are the snapshot's.
  void release_unless_snapshot(const Snapshot& snapshot);
  /// Runs a plan_spawn plan on every process (rank 0 spawns).
  void spawn_planned(const nlohmann::json& plan);

  static inline int injected_failure_step_ = -1;

  const Config& config_;
  Context& context_;
  DecompositionState& state_;
  ReconfigurationHooks& loop_;
  std::function<void()> abandon_process_;
  ProcessStatus status_ = ProcessStatus::running;
  MPI_Comm self_ = MPI_COMM_NULL;  // MPI_COMM_SELF duplicate, errors returned: rank 0 spawns on it
  bool table_ready_ = false;
  std::string spawn_failure_;        // the failed MPI_Comm_spawn that ended spawning, if one did
  std::vector<bool> awaiting_data_;  // per rank: spawned, no data yet
  long long spawned_after_ = 0;      // iterations monitored when they were spawned

  // Rank 0 only.
  std::vector<std::string> initial_hosts_;
  std::unique_ptr<ResourceManager> resources_;
  std::unique_ptr<Scheduler> scheduler_;
  ProcessBound bound_;               // the processes the job may reach (set with scheduler_)
  int warned_granted_pes_ = -1;      // the grants warn_if_beyond_bound last spoke of
  std::vector<double> known_speed_;  // per rank, 0: unknown
  // Time in submit_allocation since the last traced spawn or removal (a
  // batch system's backend books or releases nodes), part of its "seconds".
  double resource_manager_seconds_ = 0.0;
  struct PreparedSpawn {
    std::string command;
    std::vector<std::string> argv;
    std::vector<std::string> hosts;  // one per process, "" = MPI chooses
    MPI_Info info = MPI_INFO_NULL;   // the caller's, without flexmpi keys
    bool batch = false;
    int nprocs = 0;
    bool name_hosts =
        true;  // the "host" key of MPI_Comm_spawn (ResourceManager::spawn_names_hosts)
  };
  std::optional<PreparedSpawn> prepared_;
  std::string join_port_;  ///< rank 0: the port launched processes connect to
  /// rank 0: where the processes of the current spawn say they run (MPI_Get_processor_name)
  std::vector<std::string> spawned_processor_names_;
};

}  // namespace flexmpi
