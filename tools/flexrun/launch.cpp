#include "launch.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "policies/policy.hpp"

extern char** environ;

namespace flexrun {

const char* flavour_name(MpiFlavour flavour) {
  switch (flavour) {
    case MpiFlavour::open_mpi:
      return "Open MPI";
    case MpiFlavour::mpich:
      return "MPICH";
    case MpiFlavour::unknown:
      break;
  }
  return "unknown MPI";
}

MpiInfo classify_mpi(const std::string& version_output) {
  MpiInfo info;
  info.version = version_output.substr(0, version_output.find('\n'));
  const auto contains = [&](std::string_view word) {
    return version_output.find(word) != std::string::npos;
  };
  // Open MPI 4 says "mpiexec (OpenRTE) 4.1.4", Open MPI 5 "mpiexec (Open MPI) 5.0.x";
  // MPICH's Hydra prints "HYDRA build details:" (Intel MPI also uses Hydra).
  if (contains("OpenRTE") || contains("Open MPI") || contains("open-mpi.org")) {
    info.flavour = MpiFlavour::open_mpi;
  } else if (const flexmpi::BatchLauncher* batch = flexmpi::find_batch_launcher(version_output)) {
    info.launcher = batch->name;  // it starts MPI processes of any MPI
  } else if (contains("HYDRA") || contains("MPICH")) {
    info.flavour = MpiFlavour::mpich;
    // Hydra's first line is a header; its "Version:" line says more.
    const std::size_t at = version_output.find("Version:");
    if (at != std::string::npos) {
      const std::size_t start = version_output.find_first_not_of(" \t", at + 8);
      const std::size_t end = version_output.find('\n', at);
      info.version =
          "Hydra " + version_output.substr(start, end == std::string::npos ? end : end - start);
    }
  }
  if (info.flavour != MpiFlavour::unknown) info.launcher = flavour_name(info.flavour);
  return info;
}

namespace {

// The time a command flexrun asks about the launch (`mpiexec --version`,
// `ldd PROGRAM`) has to answer: they answer in well under a second, so a
// command still running after this never will (a hung or a wrong launcher).
constexpr std::chrono::seconds kCommandSeconds{10};

// A command that had not ended within kCommandSeconds (it was killed).
class CommandTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Kills what `pid` started (its own process group) and reaps it.
void kill_group(pid_t pid) {
  kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// What process `pid` (the command `command`) writes to `fd` until it ends;
// throws CommandTimeout, the command killed, if it has not ended by `deadline`.
std::string output_until_exit(int fd, pid_t pid, const std::string& command,
                              std::chrono::steady_clock::time_point deadline) {
  const auto timeout = [&] {
    close(fd);
    kill_group(pid);
    throw CommandTimeout("'" + command + "' did not end within " +
                         std::to_string(kCommandSeconds.count()) + " s");
  };
  std::string output;
  char buffer[4096];
  for (bool reading = true; reading;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd readable{fd, POLLIN, 0};
    const int ready = left.count() > 0 ? poll(&readable, 1, static_cast<int>(left.count())) : 0;
    if (ready == 0) timeout();
    if (ready < 0 && errno == EINTR) continue;
    const ssize_t got = ready < 0 ? -1 : read(fd, buffer, sizeof buffer);
    if (got > 0) {
      output.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      reading = false;
    }
  }
  // Its output closed: the command itself may still run (a script whose
  // child closed it), so it too is given until the deadline.
  for (int status = 0; waitpid(pid, &status, WNOHANG) != pid;) {
    if (std::chrono::steady_clock::now() >= deadline) timeout();
    usleep(10000);
  }
  close(fd);
  return output;
}

// Runs a command with standard input from /dev/null, in a process group of
// its own, and returns what it wrote to standard output and error. Throws
// std::runtime_error if it cannot be started, CommandTimeout if it has not
// ended within kCommandSeconds (then it and what it started are killed).
std::string command_output(std::vector<std::string> words) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);  // group 0: its own
  std::vector<char*> argv;
  std::string command;
  for (std::string& word : words) {
    argv.push_back(word.data());
    command += (command.empty() ? "" : " ") + word;
  }
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    throw std::runtime_error("cannot run '" + words.front() + "': " + std::strerror(spawned));
  }
  return output_until_exit(pipe_fds[0], pid, command,
                           std::chrono::steady_clock::now() + kCommandSeconds);
}

}  // namespace

MpiInfo detect_mpi(const std::string& mpiexec) {
  try {
    return classify_mpi(command_output({mpiexec, "--version"}));
  } catch (const CommandTimeout&) {
    throw std::runtime_error("the launcher '" + mpiexec + "' did not answer '--version' within " +
                             std::to_string(kCommandSeconds.count()) + " s and was killed");
  }
}

LinkedMpi classify_linked_mpi(const std::string& ldd_output) {
  std::string open_mpi;
  std::string mpich;
  std::size_t start = 0;
  while (start < ldd_output.size()) {
    std::size_t end = ldd_output.find('\n', start);
    if (end == std::string::npos) end = ldd_output.size();
    // "\tlibmpi.so.40 => /lib/x86_64-linux-gnu/libmpi.so.40 (0x...)": the name asked for.
    const std::string_view line = std::string_view(ldd_output).substr(start, end - start);
    start = end + 1;
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;
    const std::string_view name = line.substr(first, line.find_first_of(" \t", first) - first);
    if (open_mpi.empty() &&
        (name.starts_with("libmpi.so.40") || name.starts_with("libopen-pal.so"))) {
      open_mpi = name;
    }
    if (mpich.empty() && (name.starts_with("libmpich.so") || name.starts_with("libmpi.so.12"))) {
      mpich = name;
    }
  }
  if (open_mpi.empty() == mpich.empty()) return {};  // neither, or both
  return open_mpi.empty() ? LinkedMpi{MpiFlavour::mpich, mpich}
                          : LinkedMpi{MpiFlavour::open_mpi, open_mpi};
}

LinkedMpi linked_mpi(const std::string& path) {
  try {
    return classify_linked_mpi(command_output({"ldd", path}));
  } catch (const std::runtime_error&) {
    return {};  // no ldd: not visible
  }
}

std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string_view directories = path == nullptr ? "" : path;
  while (!directories.empty()) {
    const std::size_t colon = std::min(directories.find(':'), directories.size());
    const std::string directory(directories.substr(0, colon));
    directories.remove_prefix(std::min(colon + 1, directories.size()));
    const std::string candidate = (directory.empty() ? "." : directory) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

Environment current_environment() {
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::size_t equals = text.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    env.emplace_back(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  return env;
}

const std::string* find_variable(const Environment& env, const std::string& name) {
  const auto found =
      std::find_if(env.begin(), env.end(), [&](const auto& entry) { return entry.first == name; });
  return found == env.end() ? nullptr : &found->second;
}

void set_variable(Environment& env, const std::string& name, const std::string& value) {
  const auto found =
      std::find_if(env.begin(), env.end(), [&](const auto& entry) { return entry.first == name; });
  if (found == env.end()) {
    env.emplace_back(name, value);
  } else {
    found->second = value;
  }
}

bool policy_changes_processes(const Environment& env) {
  const std::string* policy = find_variable(env, "FLEXMPI_POLICY");
  if (policy == nullptr) return false;
  const auto all = flexmpi::policies();
  return std::any_of(all.begin(), all.end(), [&](const flexmpi::PolicyDescriptor& d) {
    return d.name == *policy && d.changes_processes;
  });
}

std::vector<flexmpi::LaunchAdvice> resource_advice(const LaunchRequest& request, const MpiInfo& mpi,
                                                   const Environment& inherited) {
  Environment environment = inherited;
  for (const auto& [name, value] : request.settings) set_variable(environment, name, value);
  return flexmpi::advise_launch(
      {.variable = [&](const std::string& name) { return find_variable(environment, name); },
       .open_mpi = mpi.flavour == MpiFlavour::open_mpi,
       .policy_changes_processes = policy_changes_processes(environment)});
}

namespace {

// The advice's defaults and process count (see plan_launch); a reason is
// noted once, when flexrun set what it explains.
template <typename AddDefault>
void apply_defaults(const flexmpi::LaunchAdvice& advice, const AddDefault& add_default,
                    LaunchPlan& plan, std::optional<int>& nprocs) {
  const auto note = [&](const std::string& why) {
    if (!why.empty() && std::find(plan.notes.begin(), plan.notes.end(), why) == plan.notes.end()) {
      plan.notes.push_back(why);
    }
  };
  for (const flexmpi::LaunchDefault& wanted : advice.defaults) {
    if (add_default(wanted.variable, wanted.value)) note(wanted.why);
  }
  if (!nprocs && advice.processes > 0) {
    nprocs = advice.processes;
    note(advice.processes_why);
  }
  for (const std::string& why : advice.notes) note(why);
}

}  // namespace

LaunchPlan plan_launch(const LaunchRequest& request, const MpiInfo& mpi,
                       const Environment& inherited, const Host& host,
                       const std::vector<flexmpi::LaunchAdvice>& advice) {
  LaunchPlan plan;
  plan.environment = inherited;
  const auto add = [&](const std::string& name, const std::string& value) {
    set_variable(plan.environment, name, value);
    set_variable(plan.added, name, value);
  };
  // Only set when the user has not chosen otherwise.
  const auto add_default = [&](const std::string& name, const std::string& value) {
    if (find_variable(plan.environment, name) != nullptr) return false;
    add(name, value);
    return true;
  };
  for (const auto& [name, value] : request.settings) add(name, value);

  const bool open_mpi = mpi.flavour == MpiFlavour::open_mpi;
  std::optional<int> nprocs = request.nprocs;
  for (const flexmpi::LaunchAdvice& backend : advice) {
    apply_defaults(backend, add_default, plan, nprocs);
  }
  // MPICH places any number of processes on a node; Open MPI refuses more
  // than its slots (the cores) unless oversubscription is allowed, and with
  // more ranks than cores waiting ranks must yield the CPU (docs/reference/behaviour.md,
  // MPI implementations).
  if (mpi.flavour != MpiFlavour::mpich) {
    if (nprocs && *nprocs > static_cast<int>(host.cores)) {
      const bool oversubscribe = add_default("OMPI_MCA_rmaps_base_oversubscribe", "1");
      const bool yield = add_default("OMPI_MCA_mpi_yield_when_idle", "1");
      if (oversubscribe || yield) {
        plan.notes.push_back(std::to_string(*nprocs) + " processes on " +
                             std::to_string(host.cores) +
                             " cores: oversubscription allowed, idle ranks yield");
      }
    } else if (policy_changes_processes(plan.environment)) {
      if (add_default("OMPI_MCA_rmaps_base_oversubscribe", "1")) {
        plan.notes.push_back("policy " + *find_variable(plan.environment, "FLEXMPI_POLICY") +
                             " spawns processes: oversubscription allowed");
      }
    }
  }
  if (open_mpi && request.fast_spawn) {
    // A process spawned at run time pays MPI_Init with the UCX transport:
    // 266 ms here against 46 ms with ob1 and PMIx's hash store, which also
    // hang less often in MPI_Comm_spawn (docs/results.md, "Process
    // creation and removal"). Parents and children must share one pml, so it is a
    // job-wide choice; --keep-mpi-transport leaves Open MPI's own.
    const bool pml = add_default("OMPI_MCA_pml", "ob1");
    const bool gds = add_default("PMIX_MCA_gds", "hash");
    if (pml || gds) {
      plan.notes.push_back(
          "fast process spawning: pml ob1, PMIx gds hash (--keep-mpi-transport: Open MPI's "
          "defaults)");
    }
  }
  if (open_mpi && host.root) {
    const bool allow = add_default("OMPI_ALLOW_RUN_AS_ROOT", "1");
    const bool confirm = add_default("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    if (allow || confirm) plan.notes.push_back("running as root: Open MPI allowed to run as root");
  }

  for (const auto& [name, value] : plan.environment) {
    if (name.starts_with("FLEXMPI_")) plan.forwarded.push_back(name);
  }

  plan.argv.push_back(request.mpiexec);
  // Open MPI starts remote processes with its own environment: -x exports ours.
  // Hydra (MPICH) forwards the whole environment by default.
  if (open_mpi) {
    for (const std::string& name : plan.forwarded) {
      plan.argv.push_back("-x");
      plan.argv.push_back(name);
    }
  }
  for (const flexmpi::LaunchAdvice& backend : advice) {
    if (open_mpi) {
      for (const std::string& name : backend.exported) {
        if (find_variable(plan.environment, name) != nullptr) {
          plan.argv.insert(plan.argv.end(), {"-x", name});
        }
      }
    }
    plan.argv.insert(plan.argv.end(), backend.launcher_arguments.begin(),
                     backend.launcher_arguments.end());
  }
  if (!request.preload.empty()) {
    // Prepend to the user's own preloads; mpiexec itself must not load MPI.
    const std::string* existing = find_variable(inherited, "LD_PRELOAD");
    const std::string value =
        request.preload + (existing != nullptr && !existing->empty() ? ":" + *existing : "");
    if (open_mpi) {
      plan.argv.insert(plan.argv.end(), {"-x", "LD_PRELOAD=" + value});
    } else {
      plan.argv.insert(plan.argv.end(), {"-genv", "LD_PRELOAD", value});
    }
    plan.notes.push_back("profile-only mode: the processes preload " + request.preload);
  }
  plan.argv.insert(plan.argv.end(), request.mpiexec_args.begin(), request.mpiexec_args.end());
  if (nprocs) {
    plan.argv.push_back("-n");
    plan.argv.push_back(std::to_string(*nprocs));
  }
  plan.argv.insert(plan.argv.end(), request.program.begin(), request.program.end());
  return plan;
}

}  // namespace flexrun
