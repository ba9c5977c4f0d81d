// How many processes a job may reach (bounded by default). Growth
// is never unbounded: without a description of the machine a spawn beyond
// what mpiexec gave the job would oversubscribe it, one process at a time.
//
//   FLEXMPI_MAX_PROCS set      that number, whatever else is known;
//   a hostfile, or a backend   no bound of its own: the scheduler never
//                              places more processes on a node than its PEs;
//   else                       the slots mpiexec gave the job
//                              (MPI_UNIVERSE_SIZE: -n, --host H:SLOTS, the
//                              batch allocation), else this node's cores; and
//                              never fewer than the processes mpiexec started
//                              (an oversubscribed start keeps them all).
// Pure logic, no MPI: the process manager asks MPI for the universe size.
#pragma once

#include <optional>
#include <string>

namespace flexmpi {

struct ProcessBound {
  int limit = 0;       ///< processes the job may reach; 0: no bound but the PEs described
  std::string origin;  ///< what set it, for messages ("FLEXMPI_MAX_PROCS=4", ...)
  std::string remedy;  ///< how to raise it, for messages ("" if it cannot be)

  /// Whether the job may run `processes` processes.
  [[nodiscard]] bool allows(long long processes) const { return limit == 0 || processes <= limit; }
  /// Processes that may still be added to `running` (0 if none; a large
  /// number without a bound).
  [[nodiscard]] int headroom(int running) const;
  /// "the job's bound of 2 processes (the 2 slots mpiexec gave the job,
  /// MPI_UNIVERSE_SIZE); raise it with ...": the end of every refusal.
  /// Also the bound of a job that can spawn no more (a failed spawn).
  [[nodiscard]] std::string describe() const;
  friend bool operator==(const ProcessBound&, const ProcessBound&) = default;
};

struct ProcessBoundInputs {
  int max_procs_setting = 0;         ///< FLEXMPI_MAX_PROCS, 0: not set
  bool nodes_described = false;      ///< a hostfile, or a backend's grants (grants_bound_processes)
  std::optional<int> universe_size;  ///< MPI_UNIVERSE_SIZE, if MPI sets it
  int cores = 1;                     ///< the cores this process may run on
  int initial_processes = 1;         ///< the processes mpiexec started
};

/// The bound of the rules above.
[[nodiscard]] ProcessBound process_bound(const ProcessBoundInputs& inputs);

}  // namespace flexmpi
