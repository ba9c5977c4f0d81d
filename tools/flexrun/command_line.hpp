// flexrun's command line (docs/reference/tools.md, flexrun): its launch
// options and one long option per FLEXMPI_* setting of the library's table,
// parsed with CLI11 and checked with the library's own parsers before
// anything is launched.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "launch.hpp"

namespace flexrun {

// Exit code for anything wrong with the command line or a setting.
constexpr int kUsageError = 2;
// Exit code when mpiexec cannot be run (as a shell does for a missing command).
constexpr int kCannotRun = 127;

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

// Describes flexrun and declares its options, filled into `line`.
void define_options(CLI::App& app, CommandLine& line);

// Parses the command line into `line`; the exit status if that was all
// (--help, --version, a parse error). Throws UsageError.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, CommandLine& line);

// The launch request of the command line; the options' values checked with
// the library's own parsers. Throws UsageError.
LaunchRequest launch_request(const CommandLine& line);

// Every setting as a Markdown table (--settings-table).
void print_settings_table();

}  // namespace flexrun
