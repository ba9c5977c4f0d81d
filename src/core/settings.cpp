#include "core/settings.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "balancing/partitioner.hpp"
#include "checkpoint/checkpoint_schedule.hpp"
#include "emulation/speed_emulator.hpp"
#include "flexmpi/error.hpp"
#include "model/computation_model.hpp"
#include "model/machine_profile.hpp"
#include "policies/policy.hpp"
#include "resources/hostfile.hpp"
#include "resources/resource_manager.hpp"
#include "util/text_file.hpp"

extern char** environ;

namespace flexmpi {
namespace {

// "work", "auto" or "papi:EVENT[,EVENT]" with non-empty event names.
std::string parse_metric(std::string_view text) {
  if (text == "work" || text == "auto") return std::string(text);
  constexpr std::string_view prefix = "papi:";
  if (!text.starts_with(prefix)) throw SettingRejected{};
  const std::string_view events = text.substr(prefix.size());
  if (events.empty() || events.front() == ',' || events.back() == ',' ||
      events.find(",,") != std::string_view::npos) {
    throw SettingRejected{"an event name is empty"};
  }
  return std::string(text);
}

// "what: NAME = help; NAME = help", a registry's strategies for a setting's help.
template <typename Descriptors>
std::string strategy_help(std::string_view what, const Descriptors& descriptors) {
  std::string text(what);
  for (const auto& d : descriptors) {
    text += (&d == &*std::begin(descriptors) ? ": " : "; ") + std::string(d.name) + " = " +
            std::string(d.help);
  }
  return text;
}

// The accepted-values and help texts of FLEXMPI_PARTITIONER, from the registry.
std::string_view partitioner_choices() {
  static const std::string text = "one of " + partitioner_names();
  return text;
}
std::string_view partitioner_help() {
  static const std::string text =
      strategy_help("partitioning strategy of the load balancer", partitioners());
  return text;
}

// The accepted-values and help texts of FLEXMPI_POLICY, from the registry.
std::string_view policy_choices() {
  static const std::string text = "one of " + policy_names();
  return text;
}
std::string_view policy_help() {
  static const std::string text = strategy_help("adaptation policy (src/policies)", policies());
  return text;
}

// The accepted-values and help texts of FLEXMPI_RESOURCES, from the registry.
std::string_view resource_manager_choices() {
  static const std::string text = "one of " + resource_manager_forms();
  return text;
}
std::string_view resource_manager_help() {
  static const std::string text =
      strategy_help("resource manager the malleability policies ask for PEs (src/resources)",
                    resource_managers());
  return text;
}

// Monitoring and load balancing (thesis 4.2, Alg. 5).
std::vector<SettingDescriptor> balancing_settings() {
  return {
      {"FLEXMPI_SAMPLING_INTERVAL", "sampling-interval", "100",
       "a whole number from 1 to 1000000000", "iterations per sampling interval",
       [](Config& c, std::string_view v) { c.sampling_interval = parse_whole_number(v, 1); }},
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
       [](Config& c, std::string_view v) { c.k = parse_whole_number(v, 1); }},
      {"FLEXMPI_LB_CONFIRM", "lb-confirm", "2", "a whole number from 1 to 1000000000",
       "consecutive unbalanced sampling intervals before the balancer moves data (1 = thesis "
       "Alg. 5: the first one)",
       [](Config& c, std::string_view v) { c.lb_confirm = parse_whole_number(v, 1); }},
      {"FLEXMPI_LB_WINDOW", "lb-window", "5", "a whole number from 1 to 1000000000",
       "the balancer uses each process's median time over the last this many sampling "
       "intervals on the current blocks (1 = thesis Alg. 5: the last interval)",
       [](Config& c, std::string_view v) { c.lb_window = parse_whole_number(v, 1); }},
      {"FLEXMPI_LB_MARGIN", "lb-margin", "2", "a number from 0 to 1000000",
       "data moves only if the predicted gain over the remaining iterations exceeds this many "
       "times the predicted cost of moving it (0 = whenever unbalanced)",
       [](Config& c, std::string_view v) {
         const double margin = parse_finite_number(v);
         if (margin < 0.0 || margin > 1e6) throw SettingRejected{};
         c.lb_margin = margin;
       }},
      {"FLEXMPI_LB_REFINE", "lb-refine", "0.08", "a number from 0, under 1 (0 = off)",
       "the balancer also moves data when the median times of a full FLEXMPI_LB_WINDOW on the "
       "same blocks are this unbalanced, under FLEXMPI_IMBALANCE_THRESHOLD (0 = thesis Alg. 5)",
       [](Config& c, std::string_view v) {
         const double refine = parse_finite_number(v);
         if (!(refine >= 0.0 && refine < 1.0)) throw SettingRejected{};
         c.lb_refine = refine;
       }},
      {"FLEXMPI_LB_MODEL", "lb-model", "count", "one of count, nnz, weight",
       "workload model: rows, nonzeros or user weights",
       [](Config& c, std::string_view v) {
         c.lb_model = parse_workload_model(parse_choice(v, {"count", "nnz", "weight"}));
       }},
      {"FLEXMPI_PARTITIONER", "partitioner", default_partitioner().name, partitioner_choices(),
       partitioner_help(),
       [](Config& c, std::string_view v) {
         c.partitioner = std::string(parsed_by_component([&] { return find_partitioner(v); }).name);
       }},
      {"FLEXMPI_METRIC", "metric", "auto", "auto, work, or papi:EVENT[,EVENT]",
       "speed metric: hardware counters (PAPI) or work units; auto = papi:PAPI_FP_OPS where "
       "available, else work",
       [](Config& c, std::string_view v) { c.metric = parse_metric(v); }},
  };
}

// Malleability policies (thesis 5.4); their own settings are in their folders.
std::vector<SettingDescriptor> malleability_settings() {
  return {
      {"FLEXMPI_POLICY", "policy", default_policy().name, policy_choices(), policy_help(),
       [](Config& c, std::string_view v) {
         c.policy = std::string(parsed_by_component([&] { return find_policy(v); }).name);
       }},
      {"FLEXMPI_MAX_PROCS", "max-procs", "(mpiexec's slots)", "a whole number from 1 to 1000000000",
       "the most processes the job may reach: XMPI_Spawn beyond it is refused (XMPI_ERR_ARG), a "
       "policy's growth and a schedule's spawn are cut to it, with a warning; default: with "
       "FLEXMPI_HOSTFILE or a resource manager that grants nodes their PEs, else the slots "
       "mpiexec gave the job (MPI_UNIVERSE_SIZE: -n, --host HOST:SLOTS), else this node's "
       "cores, never fewer than the processes mpiexec started",
       [](Config& c, std::string_view v) {
         c.max_procs = static_cast<int>(parse_whole_number(v, 1));
       }},
  };
}

// Resources: hosts and the resource manager (thesis 4.4, 5.4); a backend's
// own settings are in its folder.
std::vector<SettingDescriptor> resource_settings() {
  return {
      {"FLEXMPI_HOSTFILE", "hostfile", "(none)",
       "a readable file of hostname:procType:numPE[:cost] lines", "processor description",
       [](Config& c, std::string_view v) {
         c.hosts = parsed_by_component([&] { return read_hostfile(std::string(v)); });
         c.hostfile = std::string(v);
       }},
      {"FLEXMPI_SCHEDULER", "scheduler", "balance_all", "one of balance_all, balance_occupied",
       "how spawned processes are placed on nodes",
       [](Config& c, std::string_view v) {
         c.scheduler =
             parse_scheduling_policy(parse_choice(v, {"balance_all", "balance_occupied"}));
       }},
      {"FLEXMPI_RESOURCES", "resources", "hostfile", resource_manager_choices(),
       resource_manager_help(),
       [](Config& c, std::string_view v) {
         parsed_by_component([&] { validate_resources_setting(v); });
         c.resources = std::string(v);
       }},
  };
}

// What the nodes are worth and cost: node classes, the emulated cluster, the
// machine profile, a work profile (thesis 4.4, 5.3).
std::vector<SettingDescriptor> machine_settings() {
  return {
      {"FLEXMPI_NODE_CLASSES", "node-classes", "(none)",
       "a readable file of '<procType> <speed> [<cost per PE-hour> [<watts per PE>]]' lines",
       "what a PE of each node class is worth (thesis Table 6.4): policies, emulated cluster",
       [](Config& c, std::string_view v) {
         c.node_classes = parsed_by_component([&] { return read_node_classes(std::string(v)); });
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
             parsed_by_component([&] { return load_machine_profile(std::string(v)); });
         c.machine_profile_file = std::string(v);
       }},
      {"FLEXMPI_PROFILE", "profile", "(off)", "a flexmpi trace of an earlier run (JSON lines)",
       "work profile of an irregular application: the prediction model takes the next "
       "interval's work from it (thesis 5.3.1) instead of extrapolating",
       [](Config& c, std::string_view v) {
         c.work_profile = std::make_shared<const WorkProfile>(
             parsed_by_component([&] { return WorkProfile::load(std::string(v)); }));
         c.work_profile_file = std::string(v);
       }},
  };
}

// Output (docs/reference/trace.md) and emulation (docs/reference/behaviour.md).
std::vector<SettingDescriptor> output_settings() {
  return {
      {"FLEXMPI_TRACE", "trace", "(off)", "a file path", "JSON-lines trace written by rank 0",
       [](Config& c, std::string_view v) {
         if (v.empty()) throw SettingRejected{};
         c.trace = std::string(v);
       }},
      {"FLEXMPI_EMULATE_SPEED", "emulate-speed", "(off)",
       "comma-separated relative speeds in (0, 1], one per rank, each a number or a function "
       "SPEED@SIZE:SPEED[@SIZE:SPEED...] of the work units (0.9@2000:0.3 = 0.9 up to 2000, 0.3 "
       "beyond)",
       "make ranks behave like slower dedicated cores; entries past the initial processes "
       "apply to spawned ranks by rank number, ranks past the list run at full speed",
       [](Config& c, std::string_view v) {
         c.emulate_speed = parsed_by_component([&] { return parse_speed_list(v); });
       }},
      {"FLEXMPI_EMULATE_MODE", "emulate-mode", "burn", "one of burn, sleep",
       "how an emulated rank waits out its extra time: burn spins on the CPU (one real core "
       "per emulated one), sleep sleeps and counts the sleep as computation and CPU time "
       "(~20 emulated ranks on 2 cores; the real work must stay well below the emulated time)",
       [](Config& c, std::string_view v) {
         const std::optional<EmulationMode> mode = parse_emulation_mode(v);
         if (!mode) throw SettingRejected{};
         c.emulate_mode = *mode;
       }},
      {"FLEXMPI_EMULATE_UNIT_SECONDS", "emulate-unit-seconds", "(measured)",
       "a number of seconds > 0",
       "an emulated rank's full-speed time per work unit, measured once beforehand on an idle "
       "core, instead of measured as it runs: every run's emulated PEs then keep exactly their "
       "speed (for work whose time per unit is constant)",
       [](Config& c, std::string_view v) {
         const double seconds = parse_finite_number(v);
         if (!(seconds > 0.0)) throw SettingRejected{};
         c.emulate_unit_seconds = seconds;
       }},
      {"FLEXMPI_REPORT", "report", "(off)", "a file path, or - for standard error",
       "communication/computation profile written at MPI_Finalize",
       [](Config& c, std::string_view v) {
         if (v.empty()) throw SettingRejected{};
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
      {"FLEXMPI_COLLECTIVE_TIMEOUT", "collective-timeout", "30",
       "a number of seconds from 0 to 1000000 (0 = off)",
       "a flexmpi collective call (XMPI_Eval_*, XMPI_Redistribute_data, spawn, removal, data "
       "hand-over, the exchange at a sampling interval's end, XMPI_Checkpoint, XMPI_Resume, "
       "ULL_MPI_calibrate, DRUM's calls) that waits longer than this, and longer than 10 times "
       "the longest time so far between two of them, for the other ranks ends the job (exit "
       "status 4), naming the ranks that arrived, their call and iteration, and those that did "
       "not",
       [](Config& c, std::string_view v) {
         const double seconds = parse_finite_number(v);
         if (!(seconds >= 0.0 && seconds <= 1e6)) throw SettingRejected{};
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
         if (v.empty()) throw SettingRejected{};
         c.checkpoint.file = std::string(v);
       }},
      {"FLEXMPI_CHECKPOINT_EVERY", "checkpoint-every", "(off)",
       "a whole number of iterations (200) or of seconds followed by s (60s)",
       "write a checkpoint every so many iterations or seconds (at an iteration end)",
       [](Config& c, std::string_view v) {
         parsed_by_component([&] { parse_checkpoint_period(v, c.checkpoint); });
       }},
      {"FLEXMPI_CHECKPOINT_SIGNALS", "checkpoint-signals", "USR1", "USR1 or USR1,TERM",
       "signals that make every process checkpoint at the next iteration end (sbatch: "
       "--signal=B:USR1@60 with the batch script forwarding it, or --signal=USR1@60)",
       [](Config& c, std::string_view v) {
         parsed_by_component([&] { parse_checkpoint_signals(v, c.checkpoint); });
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
         const double seconds = parse_finite_number(v);
         if (!(seconds >= 0.01 && seconds <= 3600.0)) throw SettingRejected{};
         c.checkpoint.latency_seconds = seconds;
       }},
      {"FLEXMPI_RESTART", "restart", "(off)", "a checkpoint file",
       "restart from this checkpoint (any number of processes): XMPI_Resume fills the "
       "registered data and returns the iteration to resume from; FILE.prev is used when FILE "
       "is damaged",
       [](Config& c, std::string_view v) {
         if (v.empty()) throw SettingRejected{};
         c.checkpoint.restart_file = std::string(v);
       }},
  };
}

// In documentation order: docs/reference/settings.md and flexrun --help follow it.
std::vector<SettingDescriptor> make_settings() {
  std::vector<SettingDescriptor> table;
  const auto add = [&](const std::vector<SettingDescriptor>& group) {
    table.insert(table.end(), group.begin(), group.end());
  };
  add(balancing_settings());
  for (const PartitionerDescriptor& partitioner : partitioners()) add(partitioner.settings);
  add(malleability_settings());
  for (const PolicyDescriptor& policy : policies()) add(policy.settings);
  add(resource_settings());
  for (const ResourceManagerDescriptor& backend : resource_managers()) add(backend.settings);
  for (const auto& group :
       {machine_settings(), output_settings(), failure_settings(), checkpoint_settings()}) {
    add(group);
  }
  return table;
}

}  // namespace

std::string default_partitioner_name() { return std::string(default_partitioner().name); }
std::string default_policy_name() { return std::string(default_policy().name); }

std::vector<FileSetting> input_files(const Config& config) {
  std::vector<FileSetting> files;
  const auto add = [&](std::string_view setting, const std::string& path) {
    if (!path.empty()) files.push_back({std::string(setting), path});
  };
  add("FLEXMPI_HOSTFILE", config.hostfile);
  add("FLEXMPI_NODE_CLASSES", config.node_classes_file);
  add("FLEXMPI_RESOURCES", resources_input_file(config.resources));
  add("FLEXMPI_MACHINE_PROFILE", config.machine_profile_file);
  add("FLEXMPI_PROFILE", config.work_profile_file);
  for (const SettingDescriptor& setting : settings()) {
    if (setting.parse && setting.names_input_file) {
      add(setting.variable, config.strategy_settings.text(setting.variable));
    }
  }
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
    if (setting.apply) {
      setting.apply(config, value);
    } else {
      config.strategy_settings.set(setting.variable, value, setting.parse(value));
    }
  } catch (const SettingRejected& rejected) {
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
  check_resource_settings(config.resources, config.strategy_settings);
  if (const auto check = find_policy(config.policy).check; check != nullptr) check(config);
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
