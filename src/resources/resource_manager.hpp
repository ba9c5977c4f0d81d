// The resource manager a malleability policy asks (thesis 5.4, Fig. 5.8:
// getSystemStatus / submitAllocation): which processing elements the job
// may use now, and what it uses after a reconfiguration. One interface,
// backends chosen by FLEXMPI_RESOURCES. A backend is one folder of
// resources/ (copy the smallest to start one): a class behind this
// interface and a ResourceManagerDescriptor declaring its name, help,
// argument, settings and capabilities; its CMakeLists.txt registers it
// (flexmpi_strategy), resources/CMakeLists.txt adds the folder. The
// default, hostfile (every PE of FLEXMPI_HOSTFILE, never reclaimed), is
// built into the registry (resource_registry.cpp).
//
// A backend is asked on rank 0 only (the process manager broadcasts what it
// says), so that one backed by a batch system is queried once per interval.
// Pure logic, no MPI.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/setting.hpp"
#include "resources/hostfile.hpp"
#include "resources/process_bound.hpp"

namespace flexmpi {

/// getSystemStatus: the nodes and the PEs on each that the job may use now.
struct SystemStatus {
  std::vector<NodeDescription> nodes;
  /// What the backend could not find out or do (the nodes are then what the
  /// job holds now); the process manager logs it.
  std::string warning;
};

class ResourceManager {
 public:
  virtual ~ResourceManager() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// The PEs granted at `iteration` of the application's loop.
  [[nodiscard]] virtual SystemStatus status(long long iteration) const = 0;
  /// submitAllocation: the processes the job runs per host after a change
  /// (a real resource manager books or gives back nodes; here it is traced).
  virtual void submit_allocation(const std::map<std::string, int>& processes_per_host) = 0;
  /// Where the processes mpiexec started run, in this backend's host names,
  /// from the name each reports (MPI_Get_processor_name, rank order).
  [[nodiscard]] virtual std::vector<std::string> place_initial_processes(
      std::vector<std::string> processor_names) {
    return processor_names;
  }
  /// Whether a spawned process's host may be given to MPI_Comm_spawn (its
  /// "host" info key): not where this backend's host names are not the
  /// machines' names (MPI then places the process).
  [[nodiscard]] virtual bool spawn_names_hosts() const { return true; }
  /// Starts `count` processes of `argv` (program first) in `directory` on
  /// `host`, which it holds; each joins through `port` (MPI_Comm_connect).
  /// Called only where its descriptor's launches_processes says it starts
  /// processes; Error(unsupported) otherwise or where `host` is not held.
  virtual void launch(const std::string& host, int count, const std::vector<std::string>& argv,
                      const std::string& directory, const std::string& port);
};

/// What a backend is made from.
struct ResourceManagerInput {
  std::string argument;                    ///< ARGUMENT of FLEXMPI_RESOURCES=NAME:ARGUMENT
  std::vector<NodeDescription> nodes;      ///< FLEXMPI_HOSTFILE's (empty: none)
  std::vector<std::string> initial_hosts;  ///< the host of each process mpiexec started
  const StrategySettings& settings;        ///< the settings the backend declares
};

/// What flexrun's launch looks like to a backend, before MPI starts: the
/// environment mpiexec will get (inherited, then flexrun's options) and
/// facts flexrun knows that the backend cannot.
struct LaunchSituation {
  /// A variable of that environment, or nullptr when unset.
  std::function<const std::string*(const std::string&)> variable;
  bool open_mpi = false;                  ///< the launcher is Open MPI's mpirun
  bool policy_changes_processes = false;  ///< FLEXMPI_POLICY spawns and removes processes
};

/// A variable a backend wants set unless the user set it, and why (shown by
/// flexrun --dry-run when flexrun set it).
struct LaunchDefault {
  std::string variable;
  std::string value;
  std::string why;
};

/// What a backend adds to flexrun's launch (docs/reference/tools.md): for a
/// batch system, what running inside its allocation needs.
struct LaunchAdvice {
  std::vector<LaunchDefault> defaults;
  /// Variables of the environment Open MPI must pass on to every host (-x).
  std::vector<std::string> exported;
  std::vector<std::string> launcher_arguments;  ///< added to mpiexec's command line
  int processes = 0;                            ///< -n when the user gave none (0: no advice)
  std::string processes_why;
  std::vector<std::string> notes;     ///< why the rest was added, for --dry-run
  std::vector<std::string> warnings;  ///< what it could not find out (flexrun prints them)
};

/// The launcher a batch system provides, which starts the processes of any
/// MPI (such as srun): how its `--version` answer begins, and its name.
struct BatchLauncher {
  std::string_view version_prefix;
  std::string_view name;
};

/// What a resource-manager backend declares of itself (FLEXMPI_RESOURCES=name
/// or name:ARGUMENT).
struct ResourceManagerDescriptor {
  std::string_view name;
  std::string_view help;
  std::string_view argument{};  ///< what follows "name:", e.g. "FILE"; empty: nothing
  /// The argument names a file flexmpi reads (checked against the outputs).
  bool argument_is_input_file = false;
  /// Its grants bound the processes the job may reach without FLEXMPI_HOSTFILE.
  bool grants_bound_processes = false;
  /// Checks the argument (and the environment it needs) at configuration;
  /// Error(bad_config) saying why.
  void (*validate)(std::string_view argument) = nullptr;
  std::unique_ptr<ResourceManager> (*create)(ResourceManagerInput input) = nullptr;
  /// The settings only it reads, values in Config::strategy_settings; set
  /// while FLEXMPI_RESOURCES names another backend, they are refused.
  std::vector<SettingDescriptor> settings{};
  /// Whether, with these settings, it starts new processes itself
  /// (ResourceManager::launch), which join through an MPI port: known on
  /// every process, while the backend runs on rank 0 only. nullptr: never.
  bool (*launches_processes)(const StrategySettings& settings) = nullptr;
  /// What it adds to a launch by flexrun, asked of every backend before MPI
  /// starts (a batch system's: when flexrun runs inside its allocation).
  /// nullptr: nothing.
  LaunchAdvice (*advise_launch)(const LaunchSituation& situation) = nullptr;
  /// Its batch system's launcher, which flexrun accepts as mpiexec; empty: none.
  BatchLauncher launcher{};
};

/// Every backend: hostfile, then the folders in the order resources/CMakeLists.txt adds them.
const std::vector<ResourceManagerDescriptor>& resource_managers();
/// "NAME, NAME:ARGUMENT, ...": the values FLEXMPI_RESOURCES accepts.
std::string resource_manager_forms();
/// The backend a FLEXMPI_RESOURCES value names (its name, before any ':');
/// Error(bad_config) naming the known ones otherwise.
const ResourceManagerDescriptor& find_resource_manager(std::string_view value);

/// A FLEXMPI_RESOURCES value: a backend's name, with the argument it takes,
/// which it checks: Error(bad_config) otherwise.
void validate_resources_setting(std::string_view value);

/// The file FLEXMPI_RESOURCES's argument names when its backend reads one
/// (argument_is_input_file); empty otherwise.
[[nodiscard]] std::string resources_input_file(std::string_view value);
/// The backend FLEXMPI_RESOURCES (`setting`) names. nodes: FLEXMPI_HOSTFILE
/// (empty: none); initial_hosts: the host of each process mpiexec started
/// (rank order); settings: Config::strategy_settings, where the backend's
/// own are. Takes these, not the Config, so that resources/ stays below
/// config/ (which validates with it).
[[nodiscard]] std::unique_ptr<ResourceManager> make_resource_manager(
    std::string_view setting, std::vector<NodeDescription> nodes,
    const std::vector<std::string>& initial_hosts,
    const StrategySettings& settings = StrategySettings());
/// Error(bad_config) naming a setting of a backend other than the one
/// FLEXMPI_RESOURCES (`setting`) names that is set.
void check_resource_settings(std::string_view setting, const StrategySettings& settings);
/// Whether the backend `setting` names starts new processes itself with
/// `settings` (ResourceManagerDescriptor::launches_processes).
[[nodiscard]] bool resources_launch_processes(std::string_view setting,
                                              const StrategySettings& settings);

/// Every backend's advice for a launch by flexrun (advise_launch), in registry order.
[[nodiscard]] std::vector<LaunchAdvice> advise_launch(const LaunchSituation& situation);
/// The batch-system launcher whose `--version` answer `version_output` is,
/// or nullptr.
[[nodiscard]] const BatchLauncher* find_batch_launcher(std::string_view version_output);
/// The names of the batch-system launchers, "A, B" ("" when none).
[[nodiscard]] std::string batch_launcher_names();

/// What a policy sees of the resources: per node class, the PEs granted,
/// the processes running and the spawned ones among them, and how many
/// processes run on PEs that were reclaimed (they must go at this interval).
struct NodeClassStatus {
  std::string name;
  int granted_pes = 0;
  int running = 0;
  int removable = 0;
  double cost = 0.0;  ///< per PE: the hostfile's cost, else its node class's per PE-hour, else 0
  friend bool operator==(const NodeClassStatus&, const NodeClassStatus&) = default;
};

struct ResourceView {
  std::vector<NodeClassStatus> classes;
  int reclaimed = 0;  ///< processes on reclaimed PEs
  /// The node class of each process of the job, in rank order ("" for a
  /// host no node describes): where a policy's measured speeds come from.
  std::vector<std::string> process_classes;
  std::string unmet_reclaim;  ///< why a reclaim cannot be honoured, if it cannot
  /// The processes the job may reach (process_bound.hpp): a policy grows
  /// no further, whatever the PEs granted.
  ProcessBound bound;

  [[nodiscard]] int granted_pes() const;
  [[nodiscard]] int running() const;
  [[nodiscard]] bool empty() const { return classes.empty(); }
  friend bool operator==(const ResourceView&, const ResourceView&) = default;
};

void to_json(nlohmann::json& out, const ResourceView& view);
void from_json(const nlohmann::json& in, ResourceView& view);

}  // namespace flexmpi
