// The one per-call path of every PMPI wrapper, C and Fortran: time the
// PMPI call, then count what it moved (thesis 4.2.2, Fig. 4.5).
#pragma once

#include <mpi.h>

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
  const std::uint64_t start = profile.timer().now();
  const int code = call();
  const double elapsed = profile.timer().seconds(profile.timer().now() - start);
  profile.record_call(op, comm, code == MPI_SUCCESS, count, elapsed);
  runtime->after_mpi_call();
  return code;
}

}  // namespace flexmpi
