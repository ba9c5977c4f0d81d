// The new process's side of a spawn: joining its parents in MPI_Init.
#include <cstdio>
#include <cstdlib>

#include "base/context.hpp"
#include "base/mpi_check.hpp"
#include "flexmpi.h"
#include "flexmpi/error.hpp"
#include "process/launch_environment.hpp"
#include "process/process_manager.hpp"
#include "util/agreement.hpp"

namespace flexmpi {

using nlohmann::json;
using namespace launch;  // NOLINT(google-build-using-namespace)

bool ProcessManager::is_spawned_process() {
  if (std::getenv(kJoinPortVariable) != nullptr) return true;  // started by a helper job
  MPI_Comm parent = MPI_COMM_NULL;
  if (PMPI_Comm_get_parent(&parent) != MPI_SUCCESS || parent == MPI_COMM_NULL) return false;
  return std::getenv(kSpawnedMarker) != nullptr;
}

ProcessManager::ParentJoin ProcessManager::join_parents() {
  ParentJoin joined;
  if (const char* port = std::getenv(kJoinPortVariable)) {
    // Started by the resource manager: every running process accepts (accept_launched).
    MPI_Comm inter = MPI_COMM_NULL;
    check_mpi(PMPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter),
              "MPI_Comm_connect (joining)");
    check_mpi(PMPI_Intercomm_merge(inter, 1, &joined.merged), "MPI_Intercomm_merge (joining)");
    free_comm(inter);
  } else {
    // Merge with rank 0 (which spawned us), then join all the others through it.
    MPI_Comm parent = MPI_COMM_NULL, peer = MPI_COMM_NULL, siblings = MPI_COMM_NULL,
             inter = MPI_COMM_NULL;
    check_mpi(PMPI_Comm_get_parent(&parent), "MPI_Comm_get_parent");
    check_mpi(PMPI_Intercomm_merge(parent, 1, &peer), "MPI_Intercomm_merge (spawned)");
    check_mpi(PMPI_Comm_disconnect(&parent), "MPI_Comm_disconnect (parent)");
    check_mpi(PMPI_Comm_dup(MPI_COMM_WORLD, &siblings), "MPI_Comm_dup");
    check_mpi(PMPI_Intercomm_create(siblings, 0, peer, 0, kJoinTag, &inter),
              "MPI_Intercomm_create (spawned)");
    check_mpi(PMPI_Intercomm_merge(inter, 1, &joined.merged), "MPI_Intercomm_merge (spawned)");
    free_comm(inter);
    free_comm(peer);
    free_comm(siblings);
  }
  joined.join = broadcast_json(json(), 0, joined.merged);
  apply_environment(joined.join["env"]);
  return joined;
}

void ProcessManager::abandon_join(ParentJoin& joined, const std::string& failure,
                                  int first_failing) {
  int rank = 0;
  PMPI_Comm_rank(joined.merged, &rank);
  if (first_failing == rank) {
    std::fprintf(stderr, "flexmpi (spawned process): %s\n", failure.c_str());
  }
  free_comm(joined.merged);
  PMPI_Finalize();
  std::exit(first_failing == rank ? EXIT_FAILURE : EXIT_SUCCESS);
}

void ProcessManager::finish_join(ParentJoin& joined) {
  std::string name = processor_name();
  name.resize(MPI_MAX_PROCESSOR_NAME, '\0');
  check_mpi(PMPI_Gather(name.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, nullptr,
                        MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, joined.merged),
            "MPI_Gather (hosts)");
  adopt(context_.library_comm(), XMPI_COMM_WORLD, joined.join, true);
  check_mpi(PMPI_Comm_set_errhandler(context_.library_comm(), MPI_ERRORS_RETURN),
            "MPI_Comm_set_errhandler");
  free_comm(joined.merged);
  // The spawns left in this XMPI_Spawn call are collective over us too.
  const int remaining = joined.join["remaining"].get<int>();
  if (remaining > 0) run_spawn_steps(remaining, true);
}

}  // namespace flexmpi
