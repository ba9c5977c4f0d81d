// The one per-call path of every PMPI wrapper, C and Fortran: time the
// PMPI call, then count what it moved (thesis 4.2.2, Fig. 4.5).
//
// Transparent to the caller: the path reads the timer as integer ticks and
// counts in integers, so it raises no floating-point flag, and the caller
// gets errno as the MPI library left it (the profile may ask MPI about a
// communicator it has not seen, which may set errno). The monitor's rare
// paths that compute in floating point guard the flags themselves.
#pragma once

#include <mpi.h>

#include <cerrno>
#include <cstdint>

#include "interposition/hooks.hpp"
#include "profiling/comm_profile.hpp"

namespace flexmpi {

template <class Call, class Count>
inline int profiled(MpiOp op, MPI_Comm comm, Call&& call, Count&& count) {
  InterpositionHooks* runtime = InterpositionHooks::active();
  if (runtime == nullptr) return call();
  // Before the timer: a wait the emulation adds to the stretch of
  // computation that ends here is computation, not MPI time.
  runtime->before_mpi_call();
  CommProfile& profile = runtime->comm_profile();
  const std::uint64_t start = profile.call_starts();
  const int code = call();
  int& error = errno;  // one look-up of the thread's errno for the read and the write
  const int mpi_error = error;
  profile.call_ends(op, comm, code == MPI_SUCCESS, count, start);
  runtime->after_mpi_call();
  error = mpi_error;
  return code;
}

}  // namespace flexmpi
