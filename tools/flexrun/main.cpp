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
#include <cstdlib>
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
#include "resources/slurm/slurm_resources.hpp"
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
    return "Usage: flexrun [-n N] [--SETTING=VALUE...] [--mpiexec=PATH] [--dry-run] [--] "
           "program [args...]\n";
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

// A launcher or library flexrun cannot use (exit kCannotRun).
class CannotRun : public std::runtime_error {
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

// A word that would be read as an option: "-" (standard error, for
// --report) and negative numbers are values.
bool looks_like_option(const std::string& word) {
  if (word.size() < 2 || word.front() != '-') return false;
  char* end = nullptr;
  std::strtod(word.c_str(), &end);
  return end != word.c_str() + word.size();
}

// flexrun's arguments split into its own options and, when '--' ends them,
// the program with its arguments (else the program is what CLI11 leaves).
struct SplitArguments {
  std::vector<std::string> own;
  std::optional<std::vector<std::string>> program;
};

// The refusal of `word` as the value of `option` (as typed): a value that
// looks like an option is taken only with '=', so that a forgotten value
// never swallows the next option ("--trace --dry-run" would trace to a file
// "--dry-run" and run the program).
UsageError option_as_value(const CLI::Option& option, const std::string& typed,
                           const std::string& word) {
  const std::vector<std::string>& long_names = option.get_lnames();
  const std::string spelled = long_names.empty() ? typed : "--" + long_names.front();
  return UsageError(typed + " needs a value, and '" + word + "' is an option: write " + spelled +
                    "=" + word + " for a file (or value) of that name");
}

// flexrun's own arguments, before the program (whose arguments stay
// untouched), made ready for CLI11:
//  - Open MPI spells the process count -np; CLI11 would read "-np 2" as -n
//    with the value "p": -np becomes --np.
//  - CLI11 reads an empty value ("--trace=") as no value and takes the next
//    word instead: "--trace= -n 2 prog" would trace to "-n" and run "2". An
//    empty value of any option that takes one is refused, as is a value in
//    the next word that looks like an option.
//  - '--' ends them: what follows is the program, whatever its name.
SplitArguments split_arguments(const CLI::App& app, int argc, char** argv) {
  SplitArguments split{{argv + 1, argv + argc}, std::nullopt};
  std::vector<std::string>& arguments = split.own;
  const CLI::Option* awaiting = nullptr;  // the option whose value is the next word
  std::string typed;                      // and how it was typed
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    std::string& argument = arguments[i];
    if (awaiting != nullptr) {
      if (argument.empty()) throw UsageError(typed + " needs a value");
      if (looks_like_option(argument)) throw option_as_value(*awaiting, typed, argument);
      awaiting = nullptr;
      continue;
    }
    if (argument == "--") {
      split.program.emplace(arguments.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                            arguments.end());
      arguments.resize(i);
      break;
    }
    if (!argument.starts_with("-")) break;  // the program starts here
    if (argument == "-np") argument = "--np";
    const std::size_t equals = argument.find('=');
    // "-n4" (a short option with its value attached) is no option name: nullptr.
    const CLI::Option* option = app.get_option_no_throw(argument.substr(0, equals));
    if (option == nullptr || option->get_items_expected_min() == 0) continue;
    if (equals == std::string::npos) {
      awaiting = option;
      typed = argument;
    } else if (equals + 1 == argument.size()) {
      throw UsageError(argument.substr(0, equals) + " needs a value");
    }
  }
  return split;
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

// What the command line asks for, as CLI11 fills it.
struct CommandLine {
  std::string nprocs;
  std::string mpiexec = FLEXRUN_DEFAULT_MPIEXEC;
  std::vector<std::string> mpiexec_args;
  bool dry_run = false;
  bool preload = false;
  bool keep_mpi_transport = false;
  bool settings_table = false;
  std::vector<std::string> values;    // one per setting of flexmpi::settings()
  std::vector<CLI::Option*> options;  // and its option
  std::vector<std::string> program;   // the program and its arguments
  bool program_after_separator = false;
};

void describe(CLI::App& app) {
  app.prefix_command();
  app.footer(
      "Example: flexrun -n 4 --sampling-interval=50 --trace=run.jsonl ./jacobi --size 4000\n"
      "A value that starts with '-' is given with '=' (--trace=-x.jsonl); '--' ends flexrun's\n"
      "options (flexrun -n 2 -- -program).\n"
      "Exit status: the program's (through mpiexec); 2 for a bad option or setting; 127 if the\n"
      "launcher cannot be run, does not answer --version or is no MPI launcher.");
  app.formatter(std::make_shared<UsageFormatter>());
  app.set_version_flag("--version", std::string("flexrun (flexmpi) ") + FLEXMPI_VERSION);
}

void add_launch_options(CLI::App& app, CommandLine& line) {
  const std::string group = "Launch";
  app.add_option("-n,--np", line.nprocs,
                 "number of MPI processes to start (default: mpiexec's choice)")
      ->type_name("N")
      ->group(group);
  app.add_option("--mpiexec", line.mpiexec, "MPI launcher to run")
      ->capture_default_str()
      ->type_name("PATH")
      ->group(group);
  app.add_option("--mpiexec-arg", line.mpiexec_args,
                 "one extra launcher argument, passed before -n (repeatable),\n"
                 "e.g. --mpiexec-arg=--host --mpiexec-arg=node1,node2")
      ->type_name("ARG")
      ->allow_extra_args(false)
      ->group(group);
  app.add_flag("--preload", line.preload,
               "profile an unmodified MPI program: preload the libflexmpi built for the\n"
               "launcher's MPI into its processes\n"
               "(profile-only mode; the profile goes to --report, default standard error)")
      ->group(group);
  app.add_flag("--keep-mpi-transport", line.keep_mpi_transport,
               "Open MPI: keep its default transport instead of pml ob1 + PMIx gds hash,\n"
               "which make a process spawned at run time start ~5x faster")
      ->group(group);
  app.add_flag("--dry-run", line.dry_run,
               "print the environment and command instead of running them")
      ->group(group);
  app.add_flag("--settings-table", line.settings_table,
               "print every setting as a Markdown table and exit")
      ->group(group);
}

// Every FLEXMPI_* setting of the library's table, as a long option.
void add_setting_options(CLI::App& app, CommandLine& line) {
  const auto& table = flexmpi::settings();
  line.values.resize(table.size());
  line.options.resize(table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const flexmpi::SettingDescriptor& s = table[i];
    line.options[i] =
        app.add_option("--" + std::string(s.option), line.values[i],
                       std::string(s.help) + "\n" + std::string(s.variable) + ", default " +
                           std::string(s.default_text) + "; accepts " + std::string(s.accepted))
            ->type_name("VALUE")
            ->group("flexmpi settings");
  }
}

// Parses the command line into `line`; the exit status if that was all
// (--help, --version, a parse error).
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, CommandLine& line) {
  SplitArguments split = split_arguments(app, argc, argv);
  std::reverse(split.own.begin(), split.own.end());  // CLI11 takes them last first
  try {
    app.parse(split.own);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kUsageError;
  }
  line.program_after_separator = split.program.has_value();
  line.program = split.program ? *split.program : app.remaining();
  return std::nullopt;
}

// The program as the launcher must be given it: a name that starts with '-'
// (after '--') would be read as the launcher's option, so it is given as
// the file it names (on PATH, else in the working directory).
std::string launchable(const std::string& program) {
  if (!program.starts_with("-")) return program;
  const std::string found = flexrun::find_program(program);
  return found.empty() || found.starts_with("-") ? "./" + program : found;
}

// The launch request of the command line; the options' values checked with
// the library's own parsers.
flexrun::LaunchRequest launch_request(const CommandLine& line) {
  if (line.program.empty()) {
    throw UsageError("no program given\nRun 'flexrun --help' for the options.");
  }
  if (!line.program_after_separator && line.program.front().starts_with("-")) {
    throw UsageError("unknown option '" + line.program.front() +
                     "'; run 'flexrun --help' for the options (put '--' before a program whose "
                     "name starts with '-')");
  }
  flexrun::LaunchRequest request;
  if (!line.nprocs.empty()) request.nprocs = process_count(line.nprocs);
  request.mpiexec = line.mpiexec;
  request.mpiexec_args = line.mpiexec_args;
  request.program = line.program;
  request.program.front() = launchable(line.program.front());
  request.fast_spawn = !line.keep_mpi_transport;
  const auto& table = flexmpi::settings();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (line.options[i]->count() == 0) continue;
    if (const std::string message = check_option(table[i], line.values[i]); !message.empty()) {
      throw UsageError(message);
    }
    request.settings.emplace_back(std::string(table[i].variable), line.values[i]);
  }
  return request;
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
      problem = "'" + line.mpiexec + "' is no MPI launcher: its --version (" +
                (mpi.version.empty() ? "nothing" : "'" + mpi.version + "'") +
                ") names none flexrun can run the program with (Open MPI's mpiexec, MPICH's "
                "Hydra, Slurm's srun)";
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
  host.slurm = slurm_allocation();
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
  const flexrun::LaunchPlan plan =
      flexrun::plan_launch(request, mpi, flexrun::current_environment(), host);
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
  CommandLine line;
  describe(app);
  add_launch_options(app, line);
  add_setting_options(app, line);
  try {
    if (const std::optional<int> done = parse_command_line(app, argc, argv, line)) return *done;
    if (line.settings_table) {
      print_settings_table();
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
