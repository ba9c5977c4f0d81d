// What a launch by flexrun inside a Slurm allocation (salloc, sbatch) needs
// (docs/design/slurm.md): the slurm backend's advise_launch. Where the node
// names are not host names here (a local test cluster whose nodes all run on
// this machine), mpirun must not start its daemons through Slurm, and the
// processes it starts on this machine are as many as the allocation's CPUs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "resources/resource_manager.hpp"

namespace flexmpi {

/// The Slurm allocation flexrun runs in.
struct SlurmAllocation {
  std::string job_id;              ///< SLURM_JOB_ID
  std::vector<std::string> nodes;  ///< SLURM_JOB_NODELIST expanded
  int cpus = 0;                    ///< CPUs of the allocation (SLURM_JOB_CPUS_PER_NODE summed)
  /// Every node name resolves as a host name here (getaddrinfo).
  bool nodes_are_hosts = true;
};

/// The advice for `situation` inside `allocation` (nullopt: outside one):
/// FLEXMPI_RESOURCES=slurm for a policy that changes the process count; with
/// Open MPI, SLURM_CONF exported (the resource manager's Slurm commands must
/// find the job's cluster), mpirun's Slurm launch off and -n the CPUs where
/// the node names are not host names; with FLEXMPI_SLURM_JOIN, mpiexec told
/// ompi-server's URI. Pure.
[[nodiscard]] LaunchAdvice slurm_launch_advice(const LaunchSituation& situation,
                                               const std::optional<SlurmAllocation>& allocation);

/// The descriptor's advise_launch: with SLURM_JOB_ID set, reads the
/// allocation (Slurm's environment, `scontrol show hostnames`, host name
/// lookups), then slurm_launch_advice. An allocation that cannot be read is
/// a warning, and mpirun is left to its defaults.
[[nodiscard]] LaunchAdvice advise_slurm_launch(const LaunchSituation& situation);

}  // namespace flexmpi
