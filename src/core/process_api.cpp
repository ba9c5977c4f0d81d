// The C++ API of dynamic process management (include/flexmpi/flexmpi.hpp)
// over the runtime's process manager.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/runtime.hpp"
#include "flexmpi/flexmpi.hpp"
#include "process/process_manager.hpp"

namespace flexmpi {
namespace {

Partition to_partition(const RowBlock& block) {
  return {static_cast<int>(block.count), static_cast<int>(block.displ)};
}

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

}  // namespace

bool spawn_supported() { return !ProcessManager::spawn_unsupported_reason().has_value(); }

void spawn_processes(const std::string& command, std::span<const std::string> argv, int nprocs,
                     std::span<const std::string> node_classes, const SpawnOptions& options) {
  SpawnRequest request;
  request.command = command;
  // No command and no arguments: this program as it was started, so that the
  // new processes take part in the same collectives (as reconfigure()).
  if (command.empty() && argv.empty()) {
    request.argv = own_arguments();
  } else {
    request.argv.assign(argv.begin(), argv.end());
  }
  request.nprocs = nprocs;
  request.node_classes.assign(node_classes.begin(), node_classes.end());
  request.info = options.info;
  request.batch = options.batch;
  Runtime::get().processes().spawn(request);
}

void remove_processes(int nprocs, std::span<const std::string> node_classes) {
  Runtime::get().processes().remove(nprocs, node_classes);
}

void remove_ranks(std::span<const int> ranks) { Runtime::get().processes().remove_ranks(ranks); }

int get_data() { return Runtime::get().processes().get_data(); }

Partition send_data(int iteration) {
  return to_partition(Runtime::get().processes().send_data(iteration));
}

Partition reconfigure(const std::map<std::string, int>& processes, int iteration,
                      const ReconfigureOptions& options) {
  SpawnRequest how;
  how.command = options.command;
  how.argv = options.command.empty() && options.argv.empty() ? own_arguments() : options.argv;
  how.info = options.spawn.info;
  how.batch = options.spawn.batch;
  return to_partition(Runtime::get().processes().reconfigure(processes, iteration, how));
}

}  // namespace flexmpi
