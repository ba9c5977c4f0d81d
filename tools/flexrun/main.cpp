// flexrun: runs an MPI program under flexmpi (docs/reference/tools.md, flexrun).
//
//   flexrun -n 4 --sampling-interval=50 --hostfile=cluster.txt ./app args...
//
// Every FLEXMPI_* setting of the library's one settings table
// (src/core/settings.cpp) is a long option here: names, defaults, help and
// validation all come from that table, so flexrun can never accept a value
// the library would reject at MPI_Init. Values are checked before anything
// is launched; then mpiexec is exec'ed with the settings in its environment.
#include <dlfcn.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "command_line.hpp"
#include "core/settings.hpp"
#include "flexmpi/error.hpp"
#include "launch.hpp"
#include "resources/resource_manager.hpp"
#include "util/shell_quote.hpp"

namespace {

using flexrun::CannotRun;
using flexrun::CommandLine;
using flexrun::kCannotRun;
using flexrun::kUsageError;
using flexrun::launch_request;
using flexrun::UsageError;

// Checks the environment the processes will get (inherited FLEXMPI_*
// variables, the options and flexrun's defaults), as MPI_Init will: misspelt
// names included.
std::string check_environment(const flexrun::Environment& env) {
  std::vector<std::string> names;
  for (const auto& [name, value] : env) {
    if (name.starts_with("FLEXMPI_")) names.push_back(name);
  }
  try {
    flexmpi::load_config(
        [&](const char* name) {
          const std::string* value = flexrun::find_variable(env, name);
          return value == nullptr ? nullptr : value->c_str();
        },
        names);
  } catch (const flexmpi::Error& e) {
    return std::string("in the environment: ") + e.what() +
           " (unset it or override it with the flexrun option)";
  }
  return {};
}

void print_dry_run(const flexrun::LaunchPlan& plan, const flexrun::MpiInfo& mpi,
                   const std::string& mpiexec, unsigned cores) {
  std::cout << "# flexrun --dry-run: " << flexrun::flavour_name(mpi.flavour) << " ("
            << (mpi.version.empty() ? mpiexec : mpi.version) << "), " << cores << " cores\n";
  for (const std::string& note : plan.notes) std::cout << "# " << note << "\n";
  // The variables flexrun sets, then the FLEXMPI_* ones inherited unchanged:
  // together with the command line, a script that does what flexrun does.
  for (const auto& [name, value] : plan.added) {
    std::cout << "export " << name << "=" << flexmpi::shell_quote(value) << "\n";
  }
  for (const std::string& name : plan.forwarded) {
    if (flexrun::find_variable(plan.added, name) != nullptr) continue;
    std::cout << "export " << name << "="
              << flexmpi::shell_quote(*flexrun::find_variable(plan.environment, name))
              << "  # inherited\n";
  }
  std::string line;
  for (const std::string& word : plan.argv)
    line += (line.empty() ? "" : " ") + flexmpi::shell_quote(word);
  std::cout << line << "\n";
}

// The libflexmpi this flexrun runs with (build tree or installation), found
// from the address of one of its functions.
std::string libflexmpi_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&flexmpi::settings), &info) == 0 ||
      info.dli_fname == nullptr) {
    throw std::runtime_error("cannot locate libflexmpi");
  }
  return std::filesystem::canonical(info.dli_fname).string();
}

// The file name of the libflexmpi built for `flavour`: the libraries of both
// MPIs can be installed into one lib/ directory (CMakeLists.txt, "install").
const char* library_name(flexrun::MpiFlavour flavour) {
  return flavour == flexrun::MpiFlavour::mpich ? FLEXRUN_LIBRARY_MPICH : FLEXRUN_LIBRARY_OPENMPI;
}

// --preload: the libflexmpi built for the MPI the processes will run. That
// MPI is the launcher's; the program's (the libraries it is linked with)
// must agree with it, and decides when the launcher's is unknown. The
// library is this flexrun's own or, for the other MPI, the one installed
// beside it; a library preloaded into the other MPI's processes would crash
// them at their first MPI call, so without one flexrun refuses.
std::string preload_library(const std::string& mpiexec, const flexrun::MpiInfo& launcher,
                            const std::string& program) {
  using flexrun::flavour_name;
  using flexrun::MpiFlavour;
  const std::string file = flexrun::find_program(program);
  const flexrun::LinkedMpi linked = file.empty() ? flexrun::LinkedMpi{} : flexrun::linked_mpi(file);
  if (launcher.flavour != MpiFlavour::unknown && linked.flavour != MpiFlavour::unknown &&
      linked.flavour != launcher.flavour) {
    throw UsageError("--preload: " + program + " is linked with " + flavour_name(linked.flavour) +
                     " (" + linked.library + "), but " + mpiexec + " runs " +
                     flavour_name(launcher.flavour) + "; run it with " +
                     flavour_name(linked.flavour) + "'s launcher (--mpiexec=PATH)");
  }
  const bool by_launcher = launcher.flavour != MpiFlavour::unknown;
  const MpiFlavour wanted = by_launcher ? launcher.flavour : linked.flavour;
  const std::string own = libflexmpi_path();
  if (wanted == MpiFlavour::unknown) return own;  // nothing says which MPI will run
  const flexrun::LinkedMpi own_mpi = flexrun::linked_mpi(own);
  if (own_mpi.flavour == wanted) return own;
  const std::filesystem::path beside =
      std::filesystem::path(own).parent_path() / library_name(wanted);
  if (std::filesystem::exists(beside) && flexrun::linked_mpi(beside.string()).flavour == wanted) {
    return std::filesystem::canonical(beside).string();
  }
  std::string message =
      "--preload: " + (by_launcher ? mpiexec + " runs " : program + " is linked with ") +
      flavour_name(wanted) + ", but this flexrun's libflexmpi (" + own + ") is built for " +
      flavour_name(own_mpi.flavour) + " and no " + library_name(wanted) +
      " is installed beside it; build flexmpi with -DFLEXMPI_MPI=" +
      (wanted == MpiFlavour::mpich ? "mpich" : "openmpi") + " and install it into the same prefix";
  if (linked.flavour == MpiFlavour::unknown) {
    message += std::string(", or use ") + flavour_name(own_mpi.flavour) +
               "'s launcher (--mpiexec=" + FLEXRUN_DEFAULT_MPIEXEC + ")";
  }
  throw UsageError(message);
}

[[noreturn]] void exec_plan(const flexrun::LaunchPlan& plan) {
  std::vector<std::string> entries;
  entries.reserve(plan.environment.size());
  for (const auto& [name, value] : plan.environment) entries.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& entry : entries) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> words = plan.argv;
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::fflush(nullptr);
  execvpe(argv[0], argv.data(), envp.data());
  std::cerr << "flexrun: cannot run '" << plan.argv.front() << "': " << std::strerror(errno)
            << " (give the launcher with --mpiexec=PATH)\n";
  std::exit(kCannotRun);
}

// The launcher's MPI, from its answer to --version. A launcher that cannot
// be run, does not answer, or names no MPI launcher (/bin/true would exit 0
// without running the program) is refused; a dry run only says so.
flexrun::MpiInfo probe_launcher(const CommandLine& line) {
  flexrun::MpiInfo mpi;
  std::string problem;
  try {
    mpi = flexrun::detect_mpi(line.mpiexec);
    if (mpi.launcher.empty()) {
      problem =
          "'" + line.mpiexec + "' is no MPI launcher: its --version (" +
          (mpi.version.empty() ? "nothing" : "'" + mpi.version + "'") +
          ") names none flexrun can run the program with (Open MPI's mpiexec, MPICH's "
          "Hydra" +
          (flexmpi::batch_launcher_names().empty() ? "" : ", " + flexmpi::batch_launcher_names()) +
          ")";
    }
  } catch (const std::exception& e) {
    problem = e.what();
  }
  if (problem.empty()) return mpi;
  if (!line.dry_run) throw CannotRun(problem + " (give the launcher with --mpiexec=PATH)");
  mpi.version = "not usable: " + problem;
  return mpi;
}

flexrun::Host this_host() {
  flexrun::Host host;
  host.cores = std::max(1u, std::thread::hardware_concurrency());
  host.root = geteuid() == 0;
  return host;
}

// The steps of a launch: the request, the launcher, the library to preload,
// the plan and its environment checked as MPI_Init will; then run (or print) it.
int launch(const CommandLine& line) {
  flexrun::LaunchRequest request = launch_request(line);
  const flexrun::MpiInfo mpi = probe_launcher(line);
  if (line.preload) {
    try {
      request.preload = preload_library(line.mpiexec, mpi, line.program.front());
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {
      throw CannotRun(std::string("--preload: ") + e.what());
    }
  }
  const flexrun::Host host = this_host();
  const flexrun::Environment inherited = flexrun::current_environment();
  const std::vector<flexmpi::LaunchAdvice> advice =
      flexrun::resource_advice(request, mpi, inherited);
  for (const flexmpi::LaunchAdvice& backend : advice) {
    for (const std::string& warning : backend.warnings) {
      std::cerr << "flexrun: warning: " << warning << "\n";
    }
  }
  const flexrun::LaunchPlan plan = flexrun::plan_launch(request, mpi, inherited, host, advice);
  // Checked as the processes will get them, flexrun's own defaults included.
  if (const std::string message = check_environment(plan.environment); !message.empty()) {
    throw UsageError(message);
  }
  if (line.dry_run) {
    print_dry_run(plan, mpi, line.mpiexec, host.cores);
    return 0;
  }
  exec_plan(plan);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "flexrun: run an MPI program under flexmpi.\n"
      "Each flexmpi setting below becomes the environment variable shown; settings already in\n"
      "the environment are kept unless an option overrides them. Everything from the program\n"
      "name on is passed to the program untouched.",
      "flexrun"};
  flexrun::CommandLine line;
  flexrun::define_options(app, line);
  try {
    if (const std::optional<int> done = flexrun::parse_command_line(app, argc, argv, line)) {
      return *done;
    }
    if (line.settings_table) {
      flexrun::print_settings_table();
      return 0;
    }
    return launch(line);
  } catch (const UsageError& e) {
    std::cerr << "flexrun: " << e.what() << "\n";
    return kUsageError;
  } catch (const CannotRun& e) {
    std::cerr << "flexrun: " << e.what() << "\n";
    return kCannotRun;
  }
}
