#include "core/settings.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "balancing/partitioner.hpp"
#include "checkpoint/checkpoint_schedule.hpp"
#include "emulation/speed_emulator.hpp"
#include "flexmpi/error.hpp"
#include "machine/machine_xml.hpp"
#include "model/computation_model.hpp"
#include "model/machine_profile.hpp"
#include "policies/policy.hpp"
#include "policies/schedule.hpp"
#include "resources/hostfile.hpp"
#include "resources/resource_manager.hpp"
#include "util/text_file.hpp"

extern char** environ;

namespace flexmpi {
namespace {

// A value the setting cannot take; load_config adds the variable and value.
struct Rejected {
  std::string why;
};

// Runs the owning component's parser; its Error becomes this setting's rejection.
template <typename Parse>
auto owned_by_component(Parse parse) {
  try {
    return parse();
  } catch (const Error& e) {
    throw Rejected{e.what()};
  }
}

long long parse_integer(std::string_view text, long long minimum) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < minimum ||
      value > 1'000'000'000) {
    throw Rejected{};
  }
  return value;
}

double parse_real(std::string_view text) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    throw Rejected{};
  }
  return value;
}

// A fraction strictly between 0 and 1, as both thresholds are.
double parse_fraction(std::string_view text) {
  const double value = parse_real(text);
  if (value <= 0.0 || value >= 1.0) throw Rejected{};
  return value;
}

std::string parse_choice(std::string_view text, std::initializer_list<std::string_view> choices) {
  if (std::find(choices.begin(), choices.end(), text) == choices.end()) throw Rejected{};
  return std::string(text);
}

// "work", "auto" or "papi:EVENT[,EVENT]" with non-empty event names.
std::string parse_metric(std::string_view text) {
  if (text == "work" || text == "auto") return std::string(text);
  constexpr std::string_view prefix = "papi:";
  if (!text.starts_with(prefix)) throw Rejected{};
  const std::string_view events = text.substr(prefix.size());
  if (events.empty() || events.front() == ',' || events.back() == ',' ||
      events.find(",,") != std::string_view::npos) {
    throw Rejected{"an event name is empty"};
  }
  return std::string(text);
}

// The accepted-values text of FLEXMPI_PARTITIONER, from the registry.
std::string_view partitioner_choices() {
  static const std::string text = "one of " + partitioner_names();
  return text;
}

// The accepted-values text of FLEXMPI_POLICY, from the registry.
std::string_view policy_choices() {
  static const std::string text = "one of " + policy_names();
  return text;
}

std::string parse_policy(std::string_view name) {
  for (const PolicyDescriptor& policy : policies()) {
    if (policy.name == name) return std::string(name);
  }
  throw Rejected{};
}

// Monitoring and load balancing (thesis 4.2, Alg. 5).
std::vector<SettingDescriptor> balancing_settings() {
  return {
      {"FLEXMPI_SAMPLING_INTERVAL", "sampling-interval", "100",
       "a whole number from 1 to 1000000000", "iterations per sampling interval",
       [](Config& c, std::string_view v) { c.sampling_interval = parse_integer(v, 1); }},
      {"FLEXMPI_IMBALANCE_THRESHOLD", "imbalance-threshold", "0.15",
       "a number strictly between 0 and 1",
       "(max-min)/max of computation time that triggers balancing",
       [](Config& c, std::string_view v) { c.imbalance_threshold = parse_fraction(v); }},
      {"FLEXMPI_DEDICATED_THRESHOLD", "dedicated-threshold", "0.05",
       "a number strictly between 0 and 1",
       "(Treal-Tcpu)/Treal above which a processing element counts as shared",
       [](Config& c, std::string_view v) { c.dedicated_threshold = parse_fraction(v); }},
      {"FLEXMPI_K", "k", "3", "a whole number from 1 to 1000000000",
       "consecutive shared sampling intervals that make a load long-term",
       [](Config& c, std::string_view v) { c.k = parse_integer(v, 1); }},
      {"FLEXMPI_LB_CONFIRM", "lb-confirm", "2", "a whole number from 1 to 1000000000",
       "consecutive unbalanced sampling intervals before the balancer moves data (1 = thesis "
       "Alg. 5: the first one)",
       [](Config& c, std::string_view v) { c.lb_confirm = parse_integer(v, 1); }},
      {"FLEXMPI_LB_WINDOW", "lb-window", "5", "a whole number from 1 to 1000000000",
       "the balancer uses each process's median time over the last this many sampling "
       "intervals on the current blocks (1 = thesis Alg. 5: the last interval)",
       [](Config& c, std::string_view v) { c.lb_window = parse_integer(v, 1); }},
      {"FLEXMPI_LB_MARGIN", "lb-margin", "2", "a number from 0 to 1000000",
       "data moves only if the predicted gain over the remaining iterations exceeds this many "
       "times the predicted cost of moving it (0 = whenever unbalanced)",
       [](Config& c, std::string_view v) {
         const double margin = parse_real(v);
         if (margin < 0.0 || margin > 1e6) throw Rejected{};
         c.lb_margin = margin;
       }},
      {"FLEXMPI_LB_REFINE", "lb-refine", "0.08", "a number from 0, under 1 (0 = off)",
       "the balancer also moves data when the median times of a full FLEXMPI_LB_WINDOW on the "
       "same blocks are this unbalanced, under FLEXMPI_IMBALANCE_THRESHOLD (0 = thesis Alg. 5)",
       [](Config& c, std::string_view v) {
         const double refine = parse_real(v);
         if (!(refine >= 0.0 && refine < 1.0)) throw Rejected{};
         c.lb_refine = refine;
       }},
      {"FLEXMPI_LB_MODEL", "lb-model", "count", "one of count, nnz, weight",
       "workload model: rows, nonzeros or user weights",
       [](Config& c, std::string_view v) {
         c.lb_model = parse_workload_model(parse_choice(v, {"count", "nnz", "weight"}));
       }},
      {"FLEXMPI_PARTITIONER", "partitioner", "rcp", partitioner_choices(),
       "partitioning strategy of the load balancer",
       [](Config& c, std::string_view v) {
         const auto& known = partitioners();
         if (std::none_of(known.begin(), known.end(),
                          [&](const PartitionerDescriptor& p) { return p.name == v; })) {
           throw Rejected{};
         }
         c.partitioner = std::string(v);
       }},
      {"FLEXMPI_METRIC", "metric", "auto", "auto, work, or papi:EVENT[,EVENT]",
       "speed metric: hardware counters (PAPI) or work units; auto = papi:PAPI_FP_OPS where "
       "available, else work",
       [](Config& c, std::string_view v) { c.metric = parse_metric(v); }},
  };
}

// The drum partitioner's DRUM model (DRUM thesis 3.1.2).
std::vector<SettingDescriptor> drum_settings() {
  return {
      {"FLEXMPI_DRUM_COMM_WEIGHT", "drum-comm-weight", "0", "a number from 0 to 1, or caf",
       "partitioner drum: weight of the nodes' communication power against their processing "
       "power (caf: 1 - 1/(1 + CAF) of each node, from its traffic; DRUM thesis 3.1.2)",
       [](Config& c, std::string_view v) {
         if (v == "caf") {
           c.drum_communication_weight.reset();
           return;
         }
         const double weight = parse_real(v);
         if (!(weight >= 0.0 && weight <= 1.0)) throw Rejected{};
         c.drum_communication_weight = weight;
       }},
      {"FLEXMPI_DRUM_TOPOLOGY", "drum-topology", "(flat model)", "path of a DRUM XML machine model",
       "partitioner drum: the tree of network nodes over the hosts (flexmpi-drum-config writes "
       "one); node powers split the load between subtrees first (DRUM thesis 3.1.2); empty: "
       "the flat model",
       [](Config& c, std::string_view v) {
         const std::string path(v);
         if (!path.empty()) owned_by_component([&] { return machine::read_machine_xml(path); });
         c.drum_topology = path;
       }},
  };
}

// Malleability policies and their goals (thesis 5.4).
std::vector<SettingDescriptor> malleability_settings() {
  return {
      {"FLEXMPI_POLICY", "policy", "lb", policy_choices(),
       "adaptation policy (src/policies): none (monitor only), lb (load balancing), smp, hpmp "
       "or amp (malleability: spawn and remove processes; amp needs FLEXMPI_GOAL or "
       "FLEXMPI_GOAL_SPEEDUP)",
       [](Config& c, std::string_view v) { c.policy = parse_policy(v); }},
      {"FLEXMPI_MAX_PROCS", "max-procs", "(mpiexec's slots)", "a whole number from 1 to 1000000000",
       "the most processes the job may reach: XMPI_Spawn beyond it is refused (XMPI_ERR_ARG), a "
       "policy's growth and a schedule's spawn are cut to it, with a warning; default: with "
       "FLEXMPI_HOSTFILE or Slurm their PEs, else the slots mpiexec gave the job "
       "(MPI_UNIVERSE_SIZE: -n, --host HOST:SLOTS), else this node's cores, never fewer than "
       "the processes mpiexec started",
       [](Config& c, std::string_view v) { c.max_procs = static_cast<int>(parse_integer(v, 1)); }},
      {"FLEXMPI_SCHEDULE", "schedule", "(none)",
       "a readable file of '<iteration> spawn|remove <count> [<procType>]' lines",
       "predefined process schedule of the smp policy (thesis 5.4.1); with one, smp adds "
       "processes only when the schedule says (idle PEs bound it, reclaims still count); an "
       "action runs at the first sampling-interval end at or after its iteration (40 with "
       "FLEXMPI_SAMPLING_INTERVAL=10: at the end of iteration 49), from XMPI_Eval_reconfig "
       "only (XMPI_Eval_lbalance leaves it due)",
       [](Config& c, std::string_view v) {
         try {
           c.schedule = read_schedule(std::string(v));
         } catch (const Error& e) {
           throw Rejected{e.what()};
         }
         c.schedule_file = std::string(v);
       }},
      {"FLEXMPI_GOAL", "goal", "(none)", "a number of seconds > 0",
       "AMP completion-time goal of the whole run (thesis 5.4.3); or FLEXMPI_GOAL_SPEEDUP",
       [](Config& c, std::string_view v) {
         const double goal = parse_real(v);
         if (goal <= 0.0) throw Rejected{};
         c.goal = goal;
       }},
      {"FLEXMPI_GOAL_SPEEDUP", "goal-speedup", "(none)", "a number strictly between 0 and 1",
       "AMP goal as a fraction faster than the static run predicted at its first balanced "
       "interval, or traced in FLEXMPI_PROFILE (0.35 = 35 % less time); or FLEXMPI_GOAL",
       [](Config& c, std::string_view v) { c.goal_speedup = parse_fraction(v); }},
      {"FLEXMPI_GOAL_TOLERANCE", "goal-tolerance", "0.01", "a number from 0 to below 1",
       "AMP keeps the processes while the predicted run is within goal x (1 +- this)",
       [](Config& c, std::string_view v) {
         const double tolerance = parse_real(v);
         if (tolerance < 0.0 || tolerance >= 1.0) throw Rejected{};
         c.goal_tolerance = tolerance;
       }},
      {"FLEXMPI_CONSTRAINT", "constraint", "efficiency", "one of efficiency, cost, energy",
       "what AMP minimises while meeting the goal: computing power, cost per hour or watts",
       [](Config& c, std::string_view v) {
         c.constraint = parse_amp_constraint(parse_choice(v, {"efficiency", "cost", "energy"}));
       }},
  };
}

// Resources: hosts, node classes, the resource manager and the machine profile
// (thesis 4.4, 5.3).
std::vector<SettingDescriptor> resource_settings() {
  return {
      {"FLEXMPI_HOSTFILE", "hostfile", "(none)",
       "a readable file of hostname:procType:numPE[:cost] lines", "processor description",
       [](Config& c, std::string_view v) {
         c.hosts = owned_by_component([&] { return read_hostfile(std::string(v)); });
         c.hostfile = std::string(v);
       }},
      {"FLEXMPI_SCHEDULER", "scheduler", "balance_all", "one of balance_all, balance_occupied",
       "how spawned processes are placed on nodes",
       [](Config& c, std::string_view v) {
         c.scheduler =
             parse_scheduling_policy(parse_choice(v, {"balance_all", "balance_occupied"}));
       }},
      {"FLEXMPI_RESOURCES", "resources", "hostfile",
       "hostfile; scenario:FILE of '<iteration> available|reclaim "
       "<hostname>:<procType>:<numPE>[:<cost>] ...' lines; or slurm (inside salloc/sbatch)",
       "resource manager the malleability policies ask for PEs (src/resources)",
       [](Config& c, std::string_view v) {
         owned_by_component([&] { validate_resources_setting(v); });
         c.resources = std::string(v);
       }},
      {"FLEXMPI_SLURM_JOIN", "slurm-join", "(spawn)",
       "the readable file in which ompi-server wrote its URI (ompi-server -r FILE)",
       "with FLEXMPI_RESOURCES=slurm, new processes start inside the helper job of their node "
       "and join the job (MPI_Comm_connect) instead of MPI_Comm_spawn; mpiexec must have been "
       "given --ompi-server file:FILE",
       [](Config& c, std::string_view v) {
         try {  // a directory, or a file that cannot be read, named
           (void)read_text_file(std::string(v), "ompi-server URI", Errc::bad_config);
         } catch (const Error& e) {
           throw Rejected{e.what()};
         }
         c.slurm_join = std::string(v);
       }},
      {"FLEXMPI_SLURM_MPIEXEC", "slurm-mpiexec", "mpiexec", "a command (Open MPI's mpiexec)",
       "the mpiexec a helper job starts joining processes with (FLEXMPI_SLURM_JOIN)",
       [](Config& c, std::string_view v) {
         if (v.empty()) throw Rejected{};
         c.slurm_mpiexec = std::string(v);
       }},
      {"FLEXMPI_NODE_CLASSES", "node-classes", "(none)",
       "a readable file of '<procType> <speed> [<cost per PE-hour> [<watts per PE>]]' lines",
       "what a PE of each node class is worth (thesis Table 6.4): policies, emulated cluster",
       [](Config& c, std::string_view v) {
         c.node_classes = owned_by_component([&] { return read_node_classes(std::string(v)); });
         c.node_classes_file = std::string(v);
       }},
      {"FLEXMPI_EMULATE_CLUSTER", "emulate-cluster", "0", "0 or 1",
       "1: the hostfile's nodes are emulated on this machine: processes fill "
       "them in order, MPI places them here, each runs at its class's relative speed",
       [](Config& c, std::string_view v) {
         c.emulate_cluster = parse_choice(v, {"0", "1"}) == "1";
       }},
      {"FLEXMPI_MACHINE_PROFILE", "machine-profile", "(documented defaults)",
       "a machine profile written by flexmpi-calibrate (JSON)",
       "costs of communication, spawning and redistribution for the prediction model",
       [](Config& c, std::string_view v) {
         c.machine_profile =
             owned_by_component([&] { return load_machine_profile(std::string(v)); });
         c.machine_profile_file = std::string(v);
       }},
      {"FLEXMPI_PROFILE", "profile", "(off)", "a flexmpi trace of an earlier run (JSON lines)",
       "work profile of an irregular application: the prediction model takes the next "
       "interval's work from it (thesis 5.3.1) instead of extrapolating",
       [](Config& c, std::string_view v) {
         c.work_profile = std::make_shared<const WorkProfile>(
             owned_by_component([&] { return WorkProfile::load(std::string(v)); }));
         c.work_profile_file = std::string(v);
       }},
  };
}

// Output (docs/reference/trace.md) and emulation (docs/reference/behaviour.md).
std::vector<SettingDescriptor> output_settings() {
  return {
      {"FLEXMPI_TRACE", "trace", "(off)", "a file path", "JSON-lines trace written by rank 0",
       [](Config& c, std::string_view v) {
         if (v.empty()) throw Rejected{};
         c.trace = std::string(v);
       }},
      {"FLEXMPI_EMULATE_SPEED", "emulate-speed", "(off)",
       "comma-separated relative speeds in (0, 1], one per rank, each a number or a function "
       "SPEED@SIZE:SPEED[@SIZE:SPEED...] of the work units (0.9@2000:0.3 = 0.9 up to 2000, 0.3 "
       "beyond)",
       "make ranks behave like slower dedicated cores; entries past the initial processes "
       "apply to spawned ranks by rank number, ranks past the list run at full speed",
       [](Config& c, std::string_view v) {
         try {
           parse_speed_list(v);
         } catch (const Error& e) {
           throw Rejected{e.what()};
         }
         c.emulate_speed = std::string(v);
       }},
      {"FLEXMPI_EMULATE_MODE", "emulate-mode", "burn", "one of burn, sleep",
       "how an emulated rank waits out its extra time: burn spins on the CPU (one real core "
       "per emulated one), sleep sleeps and counts the sleep as computation and CPU time "
       "(~20 emulated ranks on 2 cores; the real work must stay well below the emulated time)",
       [](Config& c, std::string_view v) {
         const std::optional<EmulationMode> mode = parse_emulation_mode(v);
         if (!mode) throw Rejected{};
         c.emulate_mode = *mode;
       }},
      {"FLEXMPI_EMULATE_UNIT_SECONDS", "emulate-unit-seconds", "(measured)",
       "a number of seconds > 0",
       "an emulated rank's full-speed time per work unit, measured once beforehand on an idle "
       "core, instead of measured as it runs: every run's emulated PEs then keep exactly their "
       "speed (for work whose time per unit is constant)",
       [](Config& c, std::string_view v) {
         const double seconds = parse_real(v);
         if (!(seconds > 0.0)) throw Rejected{};
         c.emulate_unit_seconds = seconds;
       }},
      {"FLEXMPI_REPORT", "report", "(off)", "a file path, or - for standard error",
       "communication/computation profile written at MPI_Finalize",
       [](Config& c, std::string_view v) {
         if (v.empty()) throw Rejected{};
         c.report = std::string(v);
       }},
      {"FLEXMPI_LOG_LEVEL", "log-level", "info", "one of trace, debug, info, warn, error, off",
       "verbosity of flexmpi's messages on standard error",
       [](Config& c, std::string_view v) {
         c.log_level = parse_choice(v, {"trace", "debug", "info", "warn", "error", "off"});
       }},
  };
}

// What a run does when it goes wrong: a rank missing from a collective call,
// output that could not be written.
std::vector<SettingDescriptor> failure_settings() {
  return {
      {"FLEXMPI_COLLECTIVE_TIMEOUT", "collective-timeout", "300",
       "a number of seconds from 0 to 1000000 (0 = off)",
       "a flexmpi collective call (XMPI_Eval_*, XMPI_Redistribute_data, spawn, removal, data "
       "hand-over, the exchange at a sampling interval's end) that waits this long for the other "
       "ranks ends the job (exit status 4), "
       "naming the ranks that arrived, their call and iteration, and those that did not",
       [](Config& c, std::string_view v) {
         const double seconds = parse_real(v);
         if (!(seconds >= 0.0 && seconds <= 1e6)) throw Rejected{};
         c.collective_timeout = seconds;
       }},
      {"FLEXMPI_OUTPUT_ERRORS", "output-errors", "fail", "one of fail, warn",
       "a write of the trace or the report that fails is reported once on standard error; fail: "
       "the process then exits with status 3 at MPI_Finalize, warn: the run's status is kept",
       [](Config& c, std::string_view v) {
         c.output_errors_fail = parse_choice(v, {"fail", "warn"}) == "fail";
       }},
  };
}

// Checkpoint and restart (checkpoint/; docs/guide.md, "Make your job survive preemption").
std::vector<SettingDescriptor> checkpoint_settings() {
  return {
      {"FLEXMPI_CHECKPOINT", "checkpoint", "(off)", "a file path",
       "checkpoint file (parallel HDF5) of the registered data, written as FILE.partial and "
       "renamed when complete; the one it replaces is kept as FILE.prev",
       [](Config& c, std::string_view v) {
         if (v.empty()) throw Rejected{};
         c.checkpoint.file = std::string(v);
       }},
      {"FLEXMPI_CHECKPOINT_EVERY", "checkpoint-every", "(off)",
       "a whole number of iterations (200) or of seconds followed by s (60s)",
       "write a checkpoint every so many iterations or seconds (at an iteration end)",
       [](Config& c, std::string_view v) {
         owned_by_component([&] { parse_checkpoint_period(v, c.checkpoint); });
       }},
      {"FLEXMPI_CHECKPOINT_SIGNALS", "checkpoint-signals", "USR1", "USR1 or USR1,TERM",
       "signals that make every process checkpoint at the next iteration end (Slurm: "
       "--signal=B:USR1@60 with the batch script forwarding it, or --signal=USR1@60)",
       [](Config& c, std::string_view v) {
         owned_by_component([&] { parse_checkpoint_signals(v, c.checkpoint); });
       }},
      {"FLEXMPI_CHECKPOINT_ON_SIGNAL", "checkpoint-on-signal", "stop", "one of stop, continue",
       "after a signal's checkpoint: stop (every process ends with exit status 75, "
       "XMPI_CHECKPOINTED_EXIT_STATUS: checkpointed, requeue me) or continue",
       [](Config& c, std::string_view v) {
         c.checkpoint.stop_on_signal = parse_choice(v, {"stop", "continue"}) == "stop";
       }},
      {"FLEXMPI_CHECKPOINT_LATENCY", "checkpoint-latency", "10",
       "a number of seconds from 0.01 to 3600",
       "the longest time from a signal to the start of its checkpoint: processes poll for "
       "signals (one small allreduce) about every half of it",
       [](Config& c, std::string_view v) {
         const double seconds = parse_real(v);
         if (!(seconds >= 0.01 && seconds <= 3600.0)) throw Rejected{};
         c.checkpoint.latency_seconds = seconds;
       }},
      {"FLEXMPI_RESTART", "restart", "(off)", "a checkpoint file",
       "restart from this checkpoint (any number of processes): XMPI_Resume fills the "
       "registered data and returns the iteration to resume from; FILE.prev is used when FILE "
       "is damaged",
       [](Config& c, std::string_view v) {
         if (v.empty()) throw Rejected{};
         c.checkpoint.restart_file = std::string(v);
       }},
  };
}

// In documentation order: docs/reference/settings.md and flexrun --help follow it.
std::vector<SettingDescriptor> make_settings() {
  std::vector<SettingDescriptor> table = balancing_settings();
  for (auto group : {drum_settings(), malleability_settings(), resource_settings(),
                     output_settings(), failure_settings(), checkpoint_settings()}) {
    table.insert(table.end(), std::make_move_iterator(group.begin()),
                 std::make_move_iterator(group.end()));
  }
  return table;
}

}  // namespace

std::vector<FileSetting> input_files(const Config& config) {
  std::vector<FileSetting> files;
  const auto add = [&](std::string_view setting, const std::string& path) {
    if (!path.empty()) files.push_back({std::string(setting), path});
  };
  add("FLEXMPI_HOSTFILE", config.hostfile);
  add("FLEXMPI_NODE_CLASSES", config.node_classes_file);
  add("FLEXMPI_SCHEDULE", config.schedule_file);
  add("FLEXMPI_RESOURCES", scenario_file(config.resources));
  add("FLEXMPI_MACHINE_PROFILE", config.machine_profile_file);
  add("FLEXMPI_PROFILE", config.work_profile_file);
  add("FLEXMPI_DRUM_TOPOLOGY", config.drum_topology);
  add("FLEXMPI_SLURM_JOIN", config.slurm_join);
  if (const std::string& restart = config.checkpoint.restart_file; !restart.empty()) {
    add("FLEXMPI_RESTART", restart);
    add("FLEXMPI_RESTART", restart + ".prev");  // read where the file is damaged
  }
  return files;
}

std::vector<OutputSetting> output_files(const Config& config) {
  std::vector<OutputSetting> files;
  if (!config.trace.empty()) files.push_back({"FLEXMPI_TRACE", config.trace});
  if (!config.report.empty() && config.report != "-") {
    files.push_back({"FLEXMPI_REPORT", config.report});
  }
  if (const std::string& file = config.checkpoint.file; !file.empty()) {
    // Written as FILE.partial, renamed to FILE; the one it replaces becomes
    // FILE.prev. It may be the restart file: XMPI_Resume reads that first.
    files.push_back(
        {"FLEXMPI_CHECKPOINT", file, {file + ".partial", file + ".prev"}, "FLEXMPI_RESTART", true});
  }
  return files;
}

const std::vector<SettingDescriptor>& settings() {
  static const std::vector<SettingDescriptor> table = make_settings();
  return table;
}

void apply_setting(Config& config, const SettingDescriptor& setting, std::string_view value) {
  try {
    setting.apply(config, value);
  } catch (const Rejected& rejected) {
    std::string message = std::string(setting.variable) + "='" + std::string(value) +
                          "' is invalid: expected " + std::string(setting.accepted);
    if (!rejected.why.empty()) message += " (" + rejected.why + ")";
    throw Error(Errc::bad_config, message);
  }
}

Config load_config(const EnvLookup& lookup, const std::vector<std::string>& names_in_environment) {
  for (const std::string& name : names_in_environment) {
    const bool known = std::any_of(settings().begin(), settings().end(),
                                   [&](const SettingDescriptor& s) { return s.variable == name; });
    if (!known) {
      std::string all;
      for (const auto& s : settings()) all += (all.empty() ? "" : ", ") + std::string(s.variable);
      throw Error(Errc::bad_config, "unknown setting " + name + " (known settings: " + all + ")");
    }
  }
  Config config;
  for (const SettingDescriptor& setting : settings()) {
    const char* value = lookup(std::string(setting.variable).c_str());
    if (value != nullptr) apply_setting(config, setting, value);
  }
  if (config.emulate_cluster && config.hostfile.empty()) {
    throw Error(Errc::bad_config,
                "FLEXMPI_EMULATE_CLUSTER=1 needs FLEXMPI_HOSTFILE: the nodes to emulate");
  }
  if (config.emulate_cluster && !config.emulate_speed.empty()) {
    throw Error(Errc::bad_config,
                "FLEXMPI_EMULATE_CLUSTER=1 takes each process's speed from its node class: "
                "unset FLEXMPI_EMULATE_SPEED");
  }
  const CheckpointSettings& checkpoint = config.checkpoint;
  const bool checkpoint_options_set = checkpoint.every_iterations > 0 ||
                                      checkpoint.every_seconds > 0.0 ||
                                      lookup("FLEXMPI_CHECKPOINT_SIGNALS") != nullptr ||
                                      lookup("FLEXMPI_CHECKPOINT_ON_SIGNAL") != nullptr ||
                                      lookup("FLEXMPI_CHECKPOINT_LATENCY") != nullptr;
  if (checkpoint.file.empty() && checkpoint_options_set) {
    throw Error(Errc::bad_config,
                "FLEXMPI_CHECKPOINT_EVERY, _SIGNALS, _ON_SIGNAL and _LATENCY need "
                "FLEXMPI_CHECKPOINT: the file to write");
  }
  if (!config.slurm_join.empty() && config.resources != "slurm") {
    throw Error(Errc::bad_config,
                "FLEXMPI_SLURM_JOIN needs FLEXMPI_RESOURCES=slurm: only Slurm helper jobs "
                "start joining processes");
  }
  if (config.policy == "amp" && config.goal.has_value() == config.goal_speedup.has_value()) {
    throw Error(Errc::bad_config,
                config.goal ? "FLEXMPI_POLICY=amp takes one goal: set FLEXMPI_GOAL or "
                              "FLEXMPI_GOAL_SPEEDUP, not both"
                            : "FLEXMPI_POLICY=amp needs a goal: set FLEXMPI_GOAL (seconds) or "
                              "FLEXMPI_GOAL_SPEEDUP (a fraction faster than the static run)");
  }
  check_outputs(input_files(config), output_files(config), Errc::bad_config);
  return config;
}

Config load_config_from_environment() {
  std::vector<std::string> names;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (text.starts_with("FLEXMPI_")) names.emplace_back(text.substr(0, text.find('=')));
  }
  return load_config([](const char* name) { return std::getenv(name); }, names);
}

}  // namespace flexmpi
