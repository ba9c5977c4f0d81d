#include "command_line.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string_view>

#include "core/settings.hpp"
#include "flexmpi/error.hpp"

namespace flexrun {

namespace {

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

// The program as the launcher must be given it: a name that starts with '-'
// (after '--') would be read as the launcher's option, so it is given as
// the file it names (on PATH, else in the working directory).
std::string launchable(const std::string& program) {
  if (!program.starts_with("-")) return program;
  const std::string found = flexrun::find_program(program);
  return found.empty() || found.starts_with("-") ? "./" + program : found;
}

}  // namespace

void define_options(CLI::App& app, CommandLine& line) {
  describe(app);
  add_launch_options(app, line);
  add_setting_options(app, line);
}

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

void print_settings_table() {
  std::cout << "| variable | flexrun option | default | accepted values | meaning |\n"
            << "|---|---|---|---|---|\n";
  for (const flexmpi::SettingDescriptor& s : flexmpi::settings()) {
    std::cout << "| `" << s.variable << "` | `--" << s.option << "` | " << cell(s.default_text)
              << " | " << cell(s.accepted) << " | " << cell(s.help) << " |\n";
  }
}

}  // namespace flexrun
