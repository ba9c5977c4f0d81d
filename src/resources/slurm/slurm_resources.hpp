// FLEXMPI_RESOURCES=slurm: Slurm as the resource manager (the
// thesis used TORQUE, 5.4). Inside salloc/sbatch the job's allocation comes
// from Slurm's environment; every status() asks sinfo for the idle nodes of
// the job's partition and squeue for pending jobs of higher priority. Idle
// nodes are offered to the policy; a node the policy takes is booked by a
// helper job on it (submit_allocation), and given back by ending that job.
// While a job of higher priority waits for nodes, nothing is offered, and
// the helper nodes it still lacks after the idle ones are reclaimed (kept
// at 0 PEs: the scheduler removes their processes). The nodes of the
// original allocation are never reclaimed: mpirun's daemons run there
// (docs/design/slurm.md).
//
// The parsers and the decision are pure functions over the commands'
// outputs; the commands go through a CommandRunner. When a command fails
// (slurmctld unreachable), the job keeps its current allocation and the
// status says why.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "resources/command_runner.hpp"
#include "resources/resource_manager.hpp"

namespace flexmpi {

/// How long a Slurm command may take: sinfo and squeue retry an unreachable
/// slurmctld for about 10 s (MessageTimeout).
inline constexpr std::chrono::seconds kSlurmCommandTimeout{15};

/// How Slurm helper jobs start new processes (FLEXMPI_SLURM_JOIN,
/// FLEXMPI_SLURM_MPIEXEC) so that they can join the running job: the job's mpiexec was given
/// ompi-server's URI (--ompi-server file:FILE), and the new processes'
/// mpiexec gets the same, so that MPI_Comm_connect finds the job's port.
struct JoinLaunch {
  std::string server_uri_file;  ///< ompi-server -r FILE (empty: no launching)
  std::string mpiexec = "mpiexec";
};

/// The job's allocation as Slurm's environment describes it.
struct SlurmJob {
  std::string id;                  ///< SLURM_JOB_ID
  std::string partition;           ///< SLURM_JOB_PARTITION
  std::string node_list;           ///< SLURM_JOB_NODELIST, compressed: "n[1-2]"
  std::vector<int> cpus_per_node;  ///< SLURM_JOB_CPUS_PER_NODE expanded: "2(x2),1" -> 2, 2, 1
};

/// The job of Slurm's environment; `variable` returns a variable's value or
/// nullptr (std::getenv). Error(bad_config) naming the variable that is
/// missing or malformed, and saying to run inside salloc or sbatch.
[[nodiscard]] SlurmJob slurm_job_from_environment(
    const std::function<const char*(const char*)>& variable);

/// SLURM_JOB_CPUS_PER_NODE ("2(x3),1") as one count per node;
/// Error(bad_config) naming the value if malformed.
[[nodiscard]] std::vector<int> parse_cpus_per_node(std::string_view value);

/// The host names `scontrol show hostnames` prints, one a line.
[[nodiscard]] std::vector<std::string> parse_hostnames(std::string_view text);

/// One node as `sinfo -h -N -p PARTITION -o %N|%T|%c` prints it.
struct SlurmNode {
  std::string name;
  std::string state;  ///< "idle", "allocated", "mixed", "down*", ...
  int cpus = 0;
  friend bool operator==(const SlurmNode&, const SlurmNode&) = default;
};
[[nodiscard]] std::vector<std::string> sinfo_command(const std::string& partition);
/// Error(unsupported) naming the line if one is not name|state|cpus.
[[nodiscard]] std::vector<SlurmNode> parse_sinfo_nodes(std::string_view text);

/// One job as `squeue -h -p PARTITION -o %i|%T|%Q|%D|%j` prints it.
struct SlurmQueuedJob {
  std::string id;
  std::string state;  ///< "PENDING", "RUNNING", ...
  long long priority = 0;
  int nodes = 0;
  std::string name;
  friend bool operator==(const SlurmQueuedJob&, const SlurmQueuedJob&) = default;
};
[[nodiscard]] std::vector<std::string> squeue_command(const std::string& partition);
/// Error(unsupported) naming the line if one is not id|state|priority|nodes|name.
[[nodiscard]] std::vector<SlurmQueuedJob> parse_squeue_jobs(std::string_view text);

/// The name of the helper jobs that book nodes for job `job_id`.
[[nodiscard]] std::string helper_job_name(const std::string& job_id);

/// The batch script of a helper job: it holds the node while job `job_id`
/// exists (squeue lists it), checking every `poll_seconds`, so that a job that
/// dies without releasing its helpers does not keep their nodes. A failing
/// squeue (controller busy) is not the job's end; "Invalid job id" is. With a
/// `launch_prefix` it also runs, every 0.2 s, each script `<prefix>*.sh`
/// that appears (in the background, renamed first so it runs once): how the
/// job starts processes on the node (SlurmResources::launch).
[[nodiscard]] std::string helper_job_script(const std::string& job_id, int poll_seconds,
                                            const std::string& launch_prefix = {});

/// The script a helper job runs to start `count` processes of `argv` that
/// join through `port`: mpiexec (`join.mpiexec`, given ompi-server's URI) in
/// `directory`, output to `log`. It first drops the variables of the MPI job
/// the helper was submitted from (PMIX_*, Open MPI's own OMPI_*), which would
/// make mpiexec believe it runs inside that job; the user's OMPI_MCA_* stay.
[[nodiscard]] std::string join_launch_script(const JoinLaunch& join, int count,
                                             const std::vector<std::string>& argv,
                                             const std::string& directory, const std::string& port,
                                             const std::string& log);

/// The nodes the job holds: its allocation, then the helper nodes in the
/// order they were booked.
struct SlurmHoldings {
  std::vector<NodeDescription> allocation;
  std::vector<NodeDescription> helpers;
};

/// getSystemStatus from what sinfo and squeue say (pure): the job's nodes,
/// plus the partition's idle nodes unless pending jobs of higher priority
/// than `job_id` (not its helpers) wait; those take the idle nodes first,
/// then the last-booked helper nodes they still lack, which are kept at 0
/// PEs. Error(unsupported) if squeue does not list `job_id`.
[[nodiscard]] SystemStatus plan_slurm_status(const SlurmJob& job, const SlurmHoldings& held,
                                             const std::vector<SlurmNode>& partition,
                                             const std::vector<SlurmQueuedJob>& queue);

class SlurmResources final : public ResourceManager {
 public:
  /// Expands the job's node list with `scontrol show hostnames` (Error naming
  /// the command if it fails) and books nothing yet. A helper job that is
  /// not running `booking_timeout` after its submission is cancelled.
  /// `join`: new processes are started by the helper jobs (launch) and join
  /// (FLEXMPI_SLURM_JOIN); the scripts go to `flexmpi-join-<job id>` beside
  /// ompi-server's URI file, which every node must see (a shared directory).
  SlurmResources(SlurmJob job, std::unique_ptr<CommandRunner> commands, JoinLaunch join = {},
                 std::chrono::milliseconds booking_timeout = std::chrono::seconds(10));
  /// Ends every helper job still held (the job is ending): their nodes go
  /// back at once instead of when the helpers see the job gone.
  ~SlurmResources() override;
  SlurmResources(const SlurmResources&) = delete;
  SlurmResources& operator=(const SlurmResources&) = delete;
  [[nodiscard]] std::string_view name() const override { return "slurm"; }
  /// The grants of plan_slurm_status; if sinfo or squeue fails, the nodes
  /// held now and, in `warning`, the command's error.
  [[nodiscard]] SystemStatus status(long long iteration) const override;
  /// Books each new host with a helper job (sbatch -w HOST), waiting until
  /// squeue shows it running, and ends the helper job of each helper host
  /// left without processes (scancel). A helper job that does not start in
  /// time is cancelled and its node not held (the status's warning says so).
  void submit_allocation(const std::map<std::string, int>& processes_per_host) override;
  /// The reported names if they are the allocation's node names (a real
  /// cluster); else (nodes that are not host names, as on the local cluster
  /// of scripts/slurm-local.sh, all `localhost`) the allocation's nodes
  /// filled CPU by CPU in SLURM_JOB_NODELIST order, as mpirun fills them.
  [[nodiscard]] std::vector<std::string> place_initial_processes(
      std::vector<std::string> processor_names) override;
  /// false once place_initial_processes found the node names not to be host names.
  [[nodiscard]] bool spawn_names_hosts() const override { return node_names_are_hosts_; }
  /// Hands join_launch_script to the helper job of `host` (a file it picks up
  /// within 0.2 s). Error(unsupported) if no helper job holds `host`.
  void launch(const std::string& host, int count, const std::vector<std::string>& argv,
              const std::string& directory, const std::string& port) override;

 private:
  /// sbatch of a helper job on `node`; its job id.
  std::string submit_helper(const SlurmNode& node);
  /// Books `nodes` (see submit_allocation); Error naming the helpers that did not start.
  void book(const std::vector<SlurmNode>& nodes);
  void release(const std::string& host);
  /// Whether the helper jobs start new processes, which join (launch).
  [[nodiscard]] bool launches_processes() const { return !join_.server_uri_file.empty(); }

  SlurmJob job_;
  std::unique_ptr<CommandRunner> commands_;
  std::chrono::milliseconds booking_timeout_;
  SlurmHoldings held_;
  std::map<std::string, std::string> helper_jobs_;  ///< host -> helper job id
  std::string booking_error_;                       ///< the last failed sbatch/scancel
  bool node_names_are_hosts_ = true;
  JoinLaunch join_;
  std::string launch_directory_;  ///< where launch() leaves scripts (join mode)
  int launches_ = 0;              ///< scripts handed out, for unique names
};

}  // namespace flexmpi
