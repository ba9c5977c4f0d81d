// The runtime configuration: the typed value of every FLEXMPI_* setting
// (docs/reference/settings.md), as every component reads it. The loader that fills it,
// core/settings, validates names against the strategies' registries and so
// sits above them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/setting.hpp"
#include "base/workload_model.hpp"
#include "emulation/speed_emulator.hpp"
#include "model/computation_model.hpp"
#include "model/machine_profile.hpp"
#include "resources/hostfile.hpp"
#include "resources/node_classes.hpp"
#include "scheduler/scheduler.hpp"

namespace flexmpi {

/// The typed values of the FLEXMPI_CHECKPOINT* and FLEXMPI_RESTART settings.
struct CheckpointSettings {
  std::string file;                   ///< FLEXMPI_CHECKPOINT (empty: none)
  std::int64_t every_iterations = 0;  ///< 0: not by count
  double every_seconds = 0.0;         ///< 0: not by time
  bool on_sigterm = false;            ///< SIGTERM as well as SIGUSR1
  bool stop_on_signal = true;         ///< end the job after a signal's checkpoint
  double latency_seconds = 10.0;      ///< longest wait from a signal to its checkpoint
  std::string restart_file;           ///< FLEXMPI_RESTART (empty: a fresh start)
};

/// The names of FLEXMPI_PARTITIONER's and FLEXMPI_POLICY's defaults: the
/// strategies whose descriptors declare themselves the default. Defined by
/// the settings loader (core/settings.cpp), which sits above the registries.
std::string default_partitioner_name();
std::string default_policy_name();

/// Parsed, validated settings: each read once, into its typed value, by the
/// parser of the component that owns it. Defaults are docs/reference/settings.md's.
struct Config {
  int sampling_interval = 100;        ///< iterations per sampling interval
  double imbalance_threshold = 0.15;  ///< (max-min)/max of computation time that triggers balancing
  double dedicated_threshold = 0.05;  ///< (Treal-Tcpu)/Treal above which a PE counts as shared
  int k = 3;                          ///< consecutive shared intervals that make a load long-term
  int lb_confirm = 2;      ///< consecutive unbalanced intervals before data moves (1 = thesis)
  int lb_window = 5;       ///< intervals whose median times the balancer uses (1 = thesis)
  double lb_margin = 2.0;  ///< predicted gain must exceed lb_margin x predicted cost (0 = always)
  /// A full window's median imbalance above this moves data though under
  /// imbalance_threshold (0 = never: thesis Alg. 5).
  double lb_refine = 0.08;
  WorkloadModel lb_model = WorkloadModel::count;         ///< count | nnz | weight
  std::string partitioner = default_partitioner_name();  ///< name of a partitioner strategy
  std::string metric = "auto";                           ///< auto | work | papi:EVENT[,EVENT]
  std::string policy = default_policy_name();            ///< name of a policy strategy
  int max_procs = 0;     ///< the most processes the job may reach (0: default, process_bound.hpp)
  std::string hostfile;  ///< processor description (empty: none)
  std::vector<NodeDescription> hosts;                          ///< its nodes, parsed and validated
  SchedulingPolicy scheduler = SchedulingPolicy::balance_all;  ///< where spawned processes go
  std::string resources = "hostfile";  ///< the resource-manager backend: NAME or NAME:ARGUMENT
  std::string machine_profile_file;    ///< flexmpi-calibrate's JSON (empty: the defaults)
  MachineProfile machine_profile = MachineProfile::defaults();  ///< it, loaded and validated
  std::string work_profile_file;  ///< an earlier run's trace (empty: extrapolate the work)
  std::shared_ptr<const WorkProfile> work_profile;  ///< it, loaded and validated
  std::string node_classes_file;                    ///< node-class description (empty: none)
  std::vector<NodeClass> node_classes;              ///< its classes, parsed and validated
  bool emulate_cluster = false;  ///< the hostfile's nodes are emulated on this machine
  std::string trace;             ///< JSON-lines trace path (empty: off)
  /// FLEXMPI_EMULATE_SPEED: each rank's relative speed, by rank (empty: off)
  std::vector<SpeedFunction> emulate_speed;
  /// burn | sleep: how an emulated rank waits out its extra time
  EmulationMode emulate_mode = EmulationMode::burn;
  /// full-speed seconds per work unit of an emulated rank (0: measured as it runs)
  double emulate_unit_seconds = 0.0;
  std::string report;              ///< profile-only report path ("-" = stderr, empty: off)
  std::string log_level = "info";  ///< trace | debug | info | warn | error | off
  /// Seconds a flexmpi collective call waits for every rank at least before
  /// the job is ended with who arrived (0: forever, no watchdog); the limit
  /// grows with the time between flexmpi's collective calls
  /// (util/collective_watchdog.hpp, collective_time_limit).
  double collective_timeout = 30.0;
  /// Lost output (trace, report) makes the run's exit status 3; false: only
  /// the warning when it happens.
  bool output_errors_fail = true;
  CheckpointSettings checkpoint;  ///< FLEXMPI_CHECKPOINT*, FLEXMPI_RESTART
  /// The settings a strategy declares in its own folder (a partitioner's,
  /// a policy's, a resource manager's), by variable; the strategy reads them.
  StrategySettings strategy_settings;
};

}  // namespace flexmpi
