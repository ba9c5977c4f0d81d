// The one way the resource managers ask an outside program (sinfo, squeue,
// scontrol, sbatch, scancel): its standard output, or an Error naming the
// command line and what it wrote to stderr. Tests replace it with recorded
// outputs.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace flexmpi {

/// `argv` as one line, for messages: "squeue -h -p flex".
[[nodiscard]] std::string command_line(const std::vector<std::string>& argv);

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  /// The standard output of `argv` (argv[0] looked up in PATH). Throws
  /// Error(unsupported) naming the command line, its exit status or the
  /// timeout, and its stderr, if it cannot be run, fails or does not finish.
  [[nodiscard]] virtual std::string run(const std::vector<std::string>& argv) const = 0;
};

/// Runs the command as a child process, killed after `timeout`.
class SystemCommandRunner final : public CommandRunner {
 public:
  explicit SystemCommandRunner(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  [[nodiscard]] std::string run(const std::vector<std::string>& argv) const override;

 private:
  std::chrono::milliseconds timeout_;
};

}  // namespace flexmpi
