// The communicators flexmpi owns: XMPI_COMM_WORLD is flexmpi's (rebuilt at
// every spawn and removal, used by its own calls), so the calls that destroy
// a communicator refuse it, from C and from Fortran. Freed, its handle
// dangled and the next collective on it crashed inside the MPI library. The
// refusal is MPI's way of saying a communicator is wrong: MPI_ERR_COMM
// through the communicator's error handler (MPI_ERRORS_ARE_FATAL ends the
// job; MPI_ERRORS_RETURN returns the code), with the reason on standard error.
#include <mpi.h>

#include <cstdio>

#include "flexmpi.h"
#ifdef FLEXMPI_FORTRAN_WRAPPERS
#include "interposition/fortran_binding.hpp"
#endif

namespace {

bool owned_by_flexmpi(MPI_Comm comm) { return comm != MPI_COMM_NULL && comm == XMPI_COMM_WORLD; }

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
  if (comm != nullptr && owned_by_flexmpi(*comm)) return refuse(*comm, "MPI_Comm_free");
  return PMPI_Comm_free(comm);
}

int MPI_Comm_disconnect(MPI_Comm* comm) {
  if (comm != nullptr && owned_by_flexmpi(*comm)) return refuse(*comm, "MPI_Comm_disconnect");
  return PMPI_Comm_disconnect(comm);
}

}  // extern "C"

#ifdef FLEXMPI_FORTRAN_WRAPPERS
// The Fortran entries, where they reach the MPI library without calling the
// C functions above (fortran_binding.hpp says which, per MPI): each refuses
// XMPI_COMM_WORLD's handle the same way, else forwards the caller's
// arguments unchanged to the MPI library's own entry. `ierror` may be absent
// (NULL) in mpi_f08.
namespace {

using CommEntry = void(MPI_Fint* comm, MPI_Fint* ierror);

void fortran_protected(CommEntry* pmpi, const char* function, MPI_Fint* comm, MPI_Fint* ierror) {
  const MPI_Comm c_comm = PMPI_Comm_f2c(*comm);
  if (owned_by_flexmpi(c_comm)) {
    const int code = refuse(c_comm, function);
    if (ierror != nullptr) *ierror = code;
    return;
  }
  MPI_Fint local_ierror = MPI_SUCCESS;
  pmpi(comm, ierror != nullptr ? ierror : &local_ierror);
}

}  // namespace

#define FLEXMPI_FORTRAN_PROTECTED(free, disconnect, pmpi_free, pmpi_disconnect) \
  extern "C" void free(MPI_Fint* comm, MPI_Fint* ierror) {                      \
    fortran_protected(pmpi_free, "MPI_Comm_free", comm, ierror);                \
  }                                                                             \
  extern "C" void disconnect(MPI_Fint* comm, MPI_Fint* ierror) {                \
    fortran_protected(pmpi_disconnect, "MPI_Comm_disconnect", comm, ierror);    \
  }
#ifdef OPEN_MPI
extern "C" CommEntry pmpi_comm_free_, pmpi_comm_disconnect_, pmpi_comm_free_f08_,
    pmpi_comm_disconnect_f08_;
// mpif.h and `use mpi` call one of these four spellings, all exported by Open MPI.
FLEXMPI_FORTRAN_PROTECTED(mpi_comm_free_, mpi_comm_disconnect_, pmpi_comm_free_,
                          pmpi_comm_disconnect_)
FLEXMPI_FORTRAN_PROTECTED(mpi_comm_free, mpi_comm_disconnect, pmpi_comm_free_,
                          pmpi_comm_disconnect_)
FLEXMPI_FORTRAN_PROTECTED(mpi_comm_free__, mpi_comm_disconnect__, pmpi_comm_free_,
                          pmpi_comm_disconnect_)
FLEXMPI_FORTRAN_PROTECTED(MPI_COMM_FREE, MPI_COMM_DISCONNECT, pmpi_comm_free_,
                          pmpi_comm_disconnect_)
FLEXMPI_FORTRAN_PROTECTED(mpi_comm_free_f08_, mpi_comm_disconnect_f08_, pmpi_comm_free_f08_,
                          pmpi_comm_disconnect_f08_)
#else
// MPICH: only mpi_f08's entries without a choice buffer bypass the C functions.
using flexmpi::fortran::next_definition;
FLEXMPI_FORTRAN_PROTECTED(mpi_comm_free_f08_, mpi_comm_disconnect_f08_,
                          next_definition<CommEntry>("mpi_comm_free_f08_"),
                          next_definition<CommEntry>("mpi_comm_disconnect_f08_"))
#endif
#undef FLEXMPI_FORTRAN_PROTECTED
#endif  // FLEXMPI_FORTRAN_WRAPPERS
