#include "resources/process_bound.hpp"

#include <algorithm>
#include <climits>

namespace flexmpi {

int ProcessBound::headroom(int running) const {
  if (limit == 0) return INT_MAX;
  return std::max(0, limit - running);
}

std::string ProcessBound::describe() const {
  return "the job's bound of " + std::to_string(limit) + " processes (" + origin + ")" +
         (remedy.empty() ? std::string() : "; " + remedy);
}

namespace {

constexpr const char* kRaise =
    "raise it with FLEXMPI_MAX_PROCS (flexrun --max-procs), more slots for mpiexec "
    "(--host HOST:SLOTS) or a hostfile (FLEXMPI_HOSTFILE)";

}  // namespace

ProcessBound process_bound(const ProcessBoundInputs& inputs) {
  if (inputs.max_procs_setting > 0) {
    return {inputs.max_procs_setting,
            "FLEXMPI_MAX_PROCS=" + std::to_string(inputs.max_procs_setting),
            "raise it with FLEXMPI_MAX_PROCS (flexrun --max-procs)"};
  }
  if (inputs.nodes_described) return {};
  const int initial = std::max(1, inputs.initial_processes);
  if (inputs.universe_size && *inputs.universe_size > 0) {
    const int slots = *inputs.universe_size;
    if (slots < initial) {
      return {initial,
              "the " + std::to_string(initial) + " processes mpiexec started, more than " + "its " +
                  std::to_string(slots) + " slots",
              kRaise};
    }
    return {slots,
            "the " + std::to_string(slots) + " slots mpiexec gave the job, MPI_UNIVERSE_SIZE",
            kRaise};
  }
  const int cores = std::max(1, inputs.cores);
  if (cores < initial) {
    return {initial,
            "the " + std::to_string(initial) + " processes mpiexec started, more than " +
                "this node's " + std::to_string(cores) + " cores",
            kRaise};
  }
  return {cores, "this node's " + std::to_string(cores) + " cores, MPI giving no universe size",
          kRaise};
}

}  // namespace flexmpi
