// flexrun: runs an MPI program under flexmpi (docs/reference/tools.md, flexrun).
//
//   flexrun -n 4 --policy=amp --goal=0.75 --constraint=cost --hostfile=cluster.txt ./app args...
//
// Every FLEXMPI_* setting of the library's one settings table
// (src/core/settings.cpp) is a long option here: names, defaults, help and
// validation all come from that table, so flexrun can never accept a value
// the library would reject at MPI_Init. Values are checked before anything
// is launched; then mpiexec is exec'ed with the settings in its environment.
#include <dlfcn.h>
#include <netdb.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/settings.hpp"
#include "flexmpi/error.hpp"
#include "launch.hpp"
#include "resources/slurm_resources.hpp"
#include "util/shell_quote.hpp"

namespace {

// Exit code for anything wrong with the command line or a setting.
constexpr int kUsageError = 2;
// Exit code when mpiexec cannot be run (as a shell does for a missing command).
constexpr int kCannotRun = 127;

// CLI11 cannot describe "the program and its arguments" as a prefix command.
class UsageFormatter : public CLI::Formatter {
 public:
  UsageFormatter() { column_width(34); }
  std::string make_usage(const CLI::App*, std::string) const override {
    return "Usage: flexrun [-n N] [--SETTING=VALUE...] [--mpiexec=PATH] [--dry-run] program "
           "[args...]\n";
  }
};

// A table cell: '|' would end the cell.
std::string cell(std::string_view text) {
  std::string escaped;
  for (const char c : text) {
    if (c == '|') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

void print_settings_table() {
  std::cout << "| variable | flexrun option | default | accepted values | meaning |\n"
            << "|---|---|---|---|---|\n";
  for (const flexmpi::SettingDescriptor& s : flexmpi::settings()) {
    std::cout << "| `" << s.variable << "` | `--" << s.option << "` | " << cell(s.default_text)
              << " | " << cell(s.accepted) << " | " << cell(s.help) << " |\n";
  }
}

// Checks one option's value with the library's own parser; returns the
// message naming the option and what it accepts, or "" if the value is good.
std::string check_option(const flexmpi::SettingDescriptor& setting, const std::string& value) {
  try {
    flexmpi::Config config;
    flexmpi::apply_setting(config, setting, value);
  } catch (const flexmpi::Error& e) {
    return "--" + std::string(setting.option) + "=" + value + ": " + e.what();
  }
  return {};
}

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

// A command line flexrun refuses before launching anything (exit kUsageError).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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

bool resolves_as_host(const std::string& name) {
  addrinfo* found = nullptr;
  if (getaddrinfo(name.c_str(), nullptr, nullptr, &found) != 0) return false;
  freeaddrinfo(found);
  return true;
}

// The Slurm allocation flexrun runs in, if any (SLURM_JOB_ID set). What
// cannot be read is said on stderr, and mpirun is then left to its defaults.
std::optional<flexrun::SlurmAllocation> slurm_allocation() {
  if (std::getenv("SLURM_JOB_ID") == nullptr) return std::nullopt;
  flexrun::SlurmAllocation allocation;
  try {
    const flexmpi::SlurmJob job = flexmpi::slurm_job_from_environment(std::getenv);
    allocation.job_id = job.id;
    allocation.cpus = std::accumulate(job.cpus_per_node.begin(), job.cpus_per_node.end(), 0);
    const flexmpi::SystemCommandRunner runner(std::chrono::seconds(15));
    allocation.nodes =
        flexmpi::parse_hostnames(runner.run({"scontrol", "show", "hostnames", job.node_list}));
  } catch (const std::exception& e) {
    std::cerr << "flexrun: warning: inside Slurm job " << std::getenv("SLURM_JOB_ID")
              << " but its allocation cannot be read: " << e.what() << "\n";
    return std::nullopt;
  }
  allocation.nodes_are_hosts =
      std::all_of(allocation.nodes.begin(), allocation.nodes.end(), resolves_as_host);
  return allocation;
}

// flexrun's own arguments, before the program (whose arguments stay untouched),
// made ready for CLI11:
//  - Open MPI spells the process count -np; CLI11 would read "-np 2" as -n
//    with the value "p": -np becomes --np.
//  - CLI11 reads an empty value ("--trace=") as no value and takes the next
//    word instead: "--trace= -n 2 prog" would trace to "-n" and run "2". An
//    empty value of any option that takes one is refused.
std::vector<std::string> own_arguments(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> arguments(argv, argv + argc);
  std::string awaiting_value;  // the option, as typed, whose value is the next word
  for (std::size_t i = 1; i < arguments.size(); ++i) {
    std::string& argument = arguments[i];
    if (!awaiting_value.empty()) {
      if (argument.empty()) throw UsageError(awaiting_value + " needs a value");
      awaiting_value.clear();
      continue;
    }
    if (argument == "--" || !argument.starts_with("-")) break;  // the program starts here
    if (argument == "-np") argument = "--np";
    const std::size_t equals = argument.find('=');
    // "-n4" (a short option with its value attached) is no option name: nullptr.
    const CLI::Option* option = app.get_option_no_throw(argument.substr(0, equals));
    const bool takes_value = option != nullptr && option->get_items_expected_min() > 0;
    if (!takes_value) continue;
    if (equals == std::string::npos) {
      awaiting_value = argument;
    } else if (equals + 1 == argument.size()) {
      throw UsageError(argument.substr(0, equals) + " needs a value");
    }
  }
  return arguments;
}

// The process count of -n in words when it is not one (CLI11's range check
// would print the bounds of a double).
int process_count(const std::string& text) {
  int count = 0;
  const char* end = text.data() + text.size();
  const auto [parsed_to, error] = std::from_chars(text.data(), end, count);
  if (error != std::errc() || parsed_to != end || count < 1) {
    throw UsageError("-n " + text + ": expected a number of processes >= 1");
  }
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "flexrun: run an MPI program under flexmpi.\n"
      "Each flexmpi setting below becomes the environment variable shown; settings already in\n"
      "the environment are kept unless an option overrides them. Everything from the program\n"
      "name on is passed to the program untouched.",
      "flexrun"};
  app.prefix_command();
  app.footer(
      "Example: flexrun -n 4 --sampling-interval=50 --trace=run.jsonl ./jacobi --size 4000\n"
      "Exit status: the program's (through mpiexec); 2 for a bad option or setting; 127 if the\n"
      "launcher cannot be run.");
  app.formatter(std::make_shared<UsageFormatter>());
  app.set_version_flag("--version", std::string("flexrun (flexmpi) ") + FLEXMPI_VERSION);

  std::string nprocs;
  std::string mpiexec = FLEXRUN_DEFAULT_MPIEXEC;
  std::vector<std::string> mpiexec_args;
  bool dry_run = false;
  bool preload = false;
  bool keep_mpi_transport = false;
  bool settings_table = false;
  const std::string launch_group = "Launch";
  app.add_option("-n,--np", nprocs, "number of MPI processes to start (default: mpiexec's choice)")
      ->type_name("N")
      ->group(launch_group);
  app.add_option("--mpiexec", mpiexec, "MPI launcher to run")
      ->capture_default_str()
      ->type_name("PATH")
      ->group(launch_group);
  app.add_option("--mpiexec-arg", mpiexec_args,
                 "one extra launcher argument, passed before -n (repeatable),\n"
                 "e.g. --mpiexec-arg=--host --mpiexec-arg=node1,node2")
      ->type_name("ARG")
      ->allow_extra_args(false)
      ->group(launch_group);
  app.add_flag("--preload", preload,
               "profile an unmodified MPI program: preload the libflexmpi built for the\n"
               "launcher's MPI into its processes\n"
               "(profile-only mode; the profile goes to --report, default standard error)")
      ->group(launch_group);
  app.add_flag("--keep-mpi-transport", keep_mpi_transport,
               "Open MPI: keep its default transport instead of pml ob1 + PMIx gds hash,\n"
               "which make a process spawned at run time start ~5x faster")
      ->group(launch_group);
  app.add_flag("--dry-run", dry_run, "print the environment and command instead of running them")
      ->group(launch_group);
  app.add_flag("--settings-table", settings_table,
               "print every setting as a Markdown table and exit")
      ->group(launch_group);

  const auto& table = flexmpi::settings();
  std::vector<std::string> values(table.size());
  std::vector<CLI::Option*> options(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const flexmpi::SettingDescriptor& s = table[i];
    options[i] =
        app.add_option("--" + std::string(s.option), values[i],
                       std::string(s.help) + "\n" + std::string(s.variable) + ", default " +
                           std::string(s.default_text) + "; accepts " + std::string(s.accepted))
            ->type_name("VALUE")
            ->group("flexmpi settings");
  }

  flexrun::LaunchRequest request;
  try {
    std::vector<std::string> arguments = own_arguments(app, argc, argv);
    arguments.erase(arguments.begin());                // without flexrun's own name
    std::reverse(arguments.begin(), arguments.end());  // CLI11 takes them last first
    app.parse(arguments);
    if (!nprocs.empty()) request.nprocs = process_count(nprocs);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kUsageError;
  } catch (const UsageError& e) {
    std::cerr << "flexrun: " << e.what() << "\n";
    return kUsageError;
  }
  if (settings_table) {
    print_settings_table();
    return 0;
  }

  std::vector<std::string> program = app.remaining();
  if (!program.empty() && program.front() == "--") program.erase(program.begin());
  if (program.empty()) {
    std::cerr << "flexrun: no program given\n"
              << "Run 'flexrun --help' for the options.\n";
    return kUsageError;
  }
  if (program.front().starts_with("-")) {
    std::cerr << "flexrun: unknown option '" << program.front()
              << "'; run 'flexrun --help' for the options (put '--' before a program whose name "
                 "starts with '-')\n";
    return kUsageError;
  }

  request.mpiexec = mpiexec;
  request.mpiexec_args = mpiexec_args;
  request.program = program;
  request.fast_spawn = !keep_mpi_transport;
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (options[i]->count() == 0) continue;
    if (const std::string message = check_option(table[i], values[i]); !message.empty()) {
      std::cerr << "flexrun: " << message << "\n";
      return kUsageError;
    }
    request.settings.emplace_back(std::string(table[i].variable), values[i]);
  }

  flexrun::MpiInfo mpi;
  try {
    mpi = flexrun::detect_mpi(mpiexec);
  } catch (const std::exception& e) {
    if (!dry_run) {
      std::cerr << "flexrun: " << e.what() << " (give the launcher with --mpiexec=PATH)\n";
      return kCannotRun;
    }
    mpi.version = std::string("not runnable: ") + e.what();
  }
  if (preload) {
    try {
      request.preload = preload_library(mpiexec, mpi, program.front());
    } catch (const UsageError& e) {
      std::cerr << "flexrun: " << e.what() << "\n";
      return kUsageError;
    } catch (const std::exception& e) {
      std::cerr << "flexrun: --preload: " << e.what() << "\n";
      return kCannotRun;
    }
  }
  flexrun::Host host;
  host.cores = std::max(1u, std::thread::hardware_concurrency());
  host.root = geteuid() == 0;
  host.slurm = slurm_allocation();
  const flexrun::LaunchPlan plan =
      flexrun::plan_launch(request, mpi, flexrun::current_environment(), host);
  // Checked as the processes will get them, flexrun's own defaults included.
  if (const std::string message = check_environment(plan.environment); !message.empty()) {
    std::cerr << "flexrun: " << message << "\n";
    return kUsageError;
  }
  if (dry_run) {
    print_dry_run(plan, mpi, mpiexec, host.cores);
    return 0;
  }
  exec_plan(plan);
}
