// The communicators flexmpi owns: XMPI_COMM_WORLD is flexmpi's (rebuilt at
// every spawn and removal, used by its own calls), so the calls that destroy
// a communicator refuse it. Freed, its handle dangled and the next collective
// on it crashed inside the MPI library. The refusal is MPI's way of saying a
// communicator is wrong: MPI_ERR_COMM through the communicator's error handler
// (MPI_ERRORS_ARE_FATAL ends the job; MPI_ERRORS_RETURN returns the code),
// with the reason on standard error.
#include <mpi.h>

#include <cstdio>

#include "flexmpi.h"

namespace {

bool owned_by_flexmpi(const MPI_Comm* comm) {
  return comm != nullptr && *comm != MPI_COMM_NULL && *comm == XMPI_COMM_WORLD;
}

int refuse(MPI_Comm comm, const char* function) {
  std::fprintf(stderr,
               "flexmpi: %s(&XMPI_COMM_WORLD) refused (MPI_ERR_COMM): flexmpi owns "
               "XMPI_COMM_WORLD and rebuilds it when processes change; free only communicators "
               "your program created (MPI_Comm_dup XMPI_COMM_WORLD for one of your own)\n",
               function);
  std::fflush(stderr);
  PMPI_Comm_call_errhandler(comm, MPI_ERR_COMM);
  return MPI_ERR_COMM;
}

}  // namespace

extern "C" {

int MPI_Comm_free(MPI_Comm* comm) {
  if (owned_by_flexmpi(comm)) return refuse(*comm, "MPI_Comm_free");
  return PMPI_Comm_free(comm);
}

int MPI_Comm_disconnect(MPI_Comm* comm) {
  if (owned_by_flexmpi(comm)) return refuse(*comm, "MPI_Comm_disconnect");
  return PMPI_Comm_disconnect(comm);
}

}  // extern "C"
