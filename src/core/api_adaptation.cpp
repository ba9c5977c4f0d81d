// The C++ API's calls that evaluate the load balance and change the
// processes (include/flexmpi/flexmpi.hpp).
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "checkpoint/checkpointer.hpp"
#include "core/api_support.hpp"
#include "core/runtime.hpp"
#include "flexmpi/flexmpi.hpp"
#include "process/process_manager.hpp"

namespace flexmpi {

namespace {

// This program's arguments (argv[1..]), as the kernel recorded them.
std::vector<std::string> own_arguments() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::string> arguments;
  std::string::size_type start = 0;
  while (start < text.size()) {
    const auto end = text.find('\0', start);
    arguments.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (!arguments.empty()) arguments.erase(arguments.begin());
  return arguments;
}

// How spawned processes start: no command and no arguments is this program
// as it was started, so that they take part in the same collectives.
SpawnRequest spawn_request(const std::string& command, std::vector<std::string> argv) {
  SpawnRequest request;
  request.command = command;
  request.argv = command.empty() && argv.empty() ? own_arguments() : std::move(argv);
  return request;
}

SpawnRequest spawn_request(const ReconfigureOptions& options) {
  SpawnRequest request = spawn_request(options.command, options.argv);
  request.info = options.spawn.info;
  request.batch = options.spawn.batch;
  return request;
}

// XMPI_Eval_lbalance (`how` null: the processes may not change) and
// XMPI_Eval_reconfig: the same checks, one loop.
Partition evaluate(int rank, int nprocs, int iteration, int max_iterations, Partition current,
                   std::span<const double> weight, const SpawnRequest* how) {
  Runtime& runtime = member_runtime();
  require_own(runtime, rank, nprocs);
  if (runtime.checkpoints().restart_pending()) {
    throw Error(Errc::bad_state,
                "FLEXMPI_RESTART is set but XMPI_Resume was not called: call it after registering "
                "the data, before the loop, and start the loop at the iteration it gives");
  }
  if (iteration < 0 || max_iterations <= iteration) {
    throw Error(Errc::invalid_argument,
                "it=" + std::to_string(iteration) + ", maxit=" + std::to_string(max_iterations) +
                    ": expected 0 <= it < maxit (it: the iteration just completed, maxit: the "
                    "iterations of the loop)");
  }
  if (!runtime.state().blocks().empty()) {
    const RowBlock& mine = runtime.state().blocks()[static_cast<std::size_t>(rank)];
    if (current.count != mine.count || current.displ != mine.displ) {
      throw Error(Errc::invalid_argument,
                  "count/displ (" + std::to_string(current.count) + ", " +
                      std::to_string(current.displ) + ") are not this process's block (" +
                      std::to_string(mine.count) + ", " + std::to_string(mine.displ) + ")");
    }
  }
  const RowBlock block = runtime.controller().evaluate(iteration, max_iterations, weight, how);
  if (runtime.processes().status() != ProcessStatus::removed &&
      runtime.checkpoints().at_iteration_end(iteration, max_iterations)) {
    Runtime::end_after_checkpoint();
  }
  return to_partition(block);
}

}  // namespace

Partition eval_lbalance(int rank, int nprocs, int iteration, int max_iterations, Partition current,
                        std::span<const double> weight) {
  const BlockChangeWatch watch;
  return evaluate(rank, nprocs, iteration, max_iterations, current, weight, nullptr);
}

Partition eval_reconfig(int rank, int nprocs, int iteration, int max_iterations, Partition current,
                        std::span<const double> weight, const ReconfigureOptions& options) {
  const BlockChangeWatch watch;
  const SpawnRequest how = spawn_request(options);
  return evaluate(rank, nprocs, iteration, max_iterations, current, weight, &how);
}

bool spawn_supported() { return !ProcessManager::spawn_unsupported_reason().has_value(); }

void spawn_processes(const std::string& command, std::span<const std::string> argv, int nprocs,
                     std::span<const std::string> node_classes, const SpawnOptions& options) {
  SpawnRequest request = spawn_request(command, {argv.begin(), argv.end()});
  request.nprocs = nprocs;
  request.node_classes.assign(node_classes.begin(), node_classes.end());
  request.info = options.info;
  request.batch = options.batch;
  const BlockChangeWatch watch;
  member_runtime().processes().spawn(request);
}

void remove_processes(int nprocs, std::span<const std::string> node_classes) {
  const BlockChangeWatch watch;
  member_runtime().processes().remove(nprocs, node_classes);
}

void remove_ranks(std::span<const int> ranks) {
  const BlockChangeWatch watch;
  member_runtime().processes().remove_ranks(ranks);
}

int get_data() {
  const BlockChangeWatch watch;
  return member_runtime().processes().get_data();
}

Partition send_data(int iteration) {
  const BlockChangeWatch watch;
  return to_partition(member_runtime().processes().send_data(iteration));
}

Partition reconfigure(const std::map<std::string, int>& processes, int iteration,
                      const ReconfigureOptions& options) {
  const BlockChangeWatch watch;
  return to_partition(
      member_runtime().processes().reconfigure(processes, iteration, spawn_request(options)));
}

}  // namespace flexmpi
