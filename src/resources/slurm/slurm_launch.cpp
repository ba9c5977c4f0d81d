#include "resources/slurm/slurm_launch.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netdb.h>

#include <algorithm>
#include <numeric>

#include "resources/command_runner.hpp"
#include "resources/slurm/slurm_resources.hpp"

namespace flexmpi {
namespace {

bool resolves_as_host(const std::string& name) {
  addrinfo* found = nullptr;
  if (getaddrinfo(name.c_str(), nullptr, nullptr, &found) != 0) return false;
  freeaddrinfo(found);
  return true;
}

SlurmAllocation read_allocation(const LaunchSituation& situation) {
  const SlurmJob job = slurm_job_from_environment([&](const char* name) -> const char* {
    const std::string* value = situation.variable(name);
    return value == nullptr ? nullptr : value->c_str();
  });
  SlurmAllocation allocation;
  allocation.job_id = job.id;
  allocation.cpus = std::accumulate(job.cpus_per_node.begin(), job.cpus_per_node.end(), 0);
  const SystemCommandRunner runner(kSlurmCommandTimeout);
  allocation.nodes = parse_hostnames(runner.run({"scontrol", "show", "hostnames", job.node_list}));
  allocation.nodes_are_hosts =
      std::all_of(allocation.nodes.begin(), allocation.nodes.end(), resolves_as_host);
  return allocation;
}

// With Open MPI, inside `job`.
void advise_open_mpi(const LaunchSituation& situation, const SlurmAllocation& job,
                     LaunchAdvice& advice) {
  if (situation.variable("SLURM_CONF") != nullptr) advice.exported.emplace_back("SLURM_CONF");
  if (job.nodes_are_hosts) return;
  // mpirun would start its daemons with srun on nodes that are no host here.
  const std::string why = fmt::format(
      "Slurm's node names ({}) are not host names here: mpirun runs the processes on this machine",
      fmt::join(job.nodes, ","));
  advice.defaults.push_back({"OMPI_MCA_ras", "^slurm", why});
  advice.defaults.push_back({"OMPI_MCA_plm", "^slurm", why});
  if (job.cpus > 0) {
    advice.processes = job.cpus;
    advice.processes_why =
        "-n " + std::to_string(job.cpus) + ": the CPUs of Slurm job " + job.job_id;
  }
}

}  // namespace

LaunchAdvice slurm_launch_advice(const LaunchSituation& situation,
                                 const std::optional<SlurmAllocation>& allocation) {
  LaunchAdvice advice;
  if (allocation) {
    if (situation.policy_changes_processes) {
      advice.defaults.push_back(
          {"FLEXMPI_RESOURCES", "slurm",
           "inside Slurm job " + allocation->job_id +
               ": the policy asks Slurm for nodes (FLEXMPI_RESOURCES=slurm)"});
    }
    if (situation.open_mpi) advise_open_mpi(situation, *allocation, advice);
  }
  // Processes that helper jobs start join through ompi-server, which the
  // job's mpiexec must know from its start.
  if (const std::string* uri = situation.variable("FLEXMPI_SLURM_JOIN")) {
    if (situation.open_mpi) {
      advice.launcher_arguments = {"--ompi-server", "file:" + *uri};
      advice.notes.emplace_back(
          "FLEXMPI_SLURM_JOIN: mpiexec gets ompi-server's URI (--ompi-server)");
    } else {
      advice.notes.emplace_back(
          "FLEXMPI_SLURM_JOIN needs Open MPI (ports and ompi-server): the new processes will not "
          "be able to join");
    }
  }
  return advice;
}

LaunchAdvice advise_slurm_launch(const LaunchSituation& situation) {
  std::optional<SlurmAllocation> allocation;
  std::string warning;
  if (const std::string* id = situation.variable("SLURM_JOB_ID")) {
    try {
      allocation = read_allocation(situation);
    } catch (const std::exception& e) {
      warning = "inside Slurm job " + *id + " but its allocation cannot be read: " + e.what();
    }
  }
  LaunchAdvice advice = slurm_launch_advice(situation, allocation);
  if (!warning.empty()) advice.warnings.push_back(warning);
  return advice;
}

}  // namespace flexmpi
