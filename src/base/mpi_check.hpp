// MPI return codes as flexmpi errors: every MPI call flexmpi makes goes
// through check_mpi, so a failure becomes an Error naming the call.
#pragma once

#include <string>

#include "flexmpi/error.hpp"

namespace flexmpi {

/// MPI's text for an error code ("" if MPI has none).
std::string mpi_error_text(int mpi_code);
/// Throws Error(Errc::mpi_failure) naming the call if an MPI return code is not MPI_SUCCESS.
void check_mpi(int mpi_code, const char* call);

}  // namespace flexmpi
