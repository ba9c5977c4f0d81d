// Malleability policies (thesis 5.4): what the adaptation loop does at the
// end of each sampling interval. A policy is one folder: a class behind this
// interface and a PolicyDescriptor declaring its name, help, settings and
// capabilities; its CMakeLists.txt registers it (flexmpi_strategy), which
// makes its name a value of FLEXMPI_POLICY (and of flexrun's --policy).
// The simplest folder is the model to copy.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/row_block.hpp"
#include "base/setting.hpp"
#include "model/comm_model.hpp"
#include "model/rebalance_model.hpp"
#include "monitoring/interval.hpp"
#include "resources/resource_manager.hpp"

namespace flexmpi {

struct Config;
class DecompositionState;

/// What a policy sees of the interval that just closed.
struct IntervalInput {
  const IntervalReport& report;    ///< every process's measurements (thesis 4.2)
  int iteration = 0;               ///< the application's iteration just completed
  int max_iterations = 0;          ///< iterations of its loop
  std::span<const double> weight;  ///< per-row weights (FLEXMPI_LB_MODEL=weight), else empty
  DecompositionState& state;       ///< blocks, registered data, workload model
  const RedistributionCost& redistribution_cost;  ///< the model's price of moving data
  /// The resource manager's grants (thesis 5.4, getSystemStatus), for a
  /// policy whose uses_resources() is true; else nullptr.
  const ResourceView* resources = nullptr;
  /// The interval's communication (rank 0's PMPI profile, on every process),
  /// for a policy whose uses_resources() is true; else nullptr.
  const CommunicationReplay* communication = nullptr;
  /// Seconds the process manager measured spawning and removing processes
  /// since the previous interval (the change a policy asked for then): the
  /// report's longest, so the same on every process.
  double reconfiguration_seconds = 0.0;
  /// False from XMPI_Eval_lbalance, which only balances: a malleability
  /// policy then returns no ProcessChange; the change it would make waits
  /// for XMPI_Eval_reconfig (MalleabilityPolicy::change_or_wait).
  bool may_change_processes = true;
};

/// A change of the set of processes (thesis 5.4, Alg. 6 lines 12-17): the
/// adaptation loop spawns or removes them, then rebalances every row.
struct ProcessChange {
  int spawn = 0;   ///< processes to spawn
  int remove = 0;  ///< spawned processes to remove
  /// procType of the hostfile of each process spawned or removed (one per
  /// process, so one change may spawn on several classes); empty: any.
  std::vector<std::string> node_classes;
  bool reclaim = false;  ///< remove the processes on reclaimed PEs (ResourceView::reclaimed)
};

/// A policy's answer: the trace fields that explain it, and either the
/// blocks the data must move to or a change of processes (neither: stay).
struct PolicyDecision {
  nlohmann::json record = nlohmann::json::object();
  std::optional<Decomposition> target;
  std::optional<ProcessChange> change;
  /// What the user must hear about this decision (a request cut or held),
  /// said by rank 0 at the default log level; empty: nothing.
  std::string warning;
};

class Policy {
 public:
  virtual ~Policy() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// The end of a sampling interval (collective: every process calls it with
  /// the same report and must decide the same).
  virtual PolicyDecision on_interval(const IntervalInput& input) = 0;
  /// Whether on_interval needs the resource manager's view (one broadcast
  /// per interval).
  [[nodiscard]] virtual bool uses_resources() const { return false; }
  /// The set of processes changed: what was learnt about the old one is void.
  virtual void on_reconfiguration() {}
  /// Per process, a robust speed measured on the current blocks (metric per
  /// second of computation), or empty when the policy keeps none.
  [[nodiscard]] virtual std::vector<double> measured_speeds() const { return {}; }
  /// What a process spawned now must know to decide as the others will
  /// (every process decides alike); it gets it through import_state.
  [[nodiscard]] virtual nlohmann::json export_state() const { return nlohmann::json::object(); }
  virtual void import_state(const nlohmann::json& /*state*/) {}
};

/// What a policy's folder declares of it (FLEXMPI_POLICY=name).
struct PolicyDescriptor {
  std::string_view name;
  std::string_view help;
  /// The settings only it reads, values in Config::strategy_settings.
  std::vector<SettingDescriptor> settings;
  /// It spawns and removes processes: it asks the resource manager for PEs
  /// (flexrun then defaults FLEXMPI_RESOURCES to the batch system's).
  bool changes_processes = false;
  /// Checks the settings it needs together, once all are read;
  /// Error(bad_config) saying what is missing. nullptr: nothing to check.
  void (*check)(const Config& config) = nullptr;
  std::unique_ptr<Policy> (*create)(const Config& config) = nullptr;
  /// It is FLEXMPI_POLICY's default (the first registered policy declaring it).
  bool is_default = false;
};

/// Every policy flexmpi knows.
[[nodiscard]] std::span<const PolicyDescriptor> policies();
/// The names joined ("none, ..."), for messages and help.
[[nodiscard]] std::string policy_names();
/// The descriptor of FLEXMPI_POLICY's default: the first registered one that
/// declares PolicyDescriptor::is_default.
[[nodiscard]] const PolicyDescriptor& default_policy();
/// The descriptor named `name`; Error(bad_config) naming the known ones otherwise.
[[nodiscard]] const PolicyDescriptor& find_policy(std::string_view name);
/// The policy named `name`; Error(bad_config) naming the known ones otherwise.
[[nodiscard]] std::unique_ptr<Policy> make_policy(std::string_view name, const Config& config);

}  // namespace flexmpi
