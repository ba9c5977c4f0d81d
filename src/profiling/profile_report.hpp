// The communication/computation profile of a whole run (profile-only mode,
// thesis 4.2.2): gathered on rank 0 at MPI_Finalize and written as JSON to a
// file, or as a readable table to standard error.
#pragma once

#include <mpi.h>

#include <string>

#include "profiling/comm_profile.hpp"

namespace flexmpi {

/// Collective over `comm`. `destination`: a file path for JSON, "-" for a
/// table on standard error. `wall_seconds`: this process's MPI_Init..now.
/// Returns false if writing failed (reported on standard error already);
/// throws Error(bad_config) if the file cannot be opened.
bool write_profile_report(const CommProfile& profile, double wall_seconds, MPI_Comm comm,
                          const std::string& destination);

}  // namespace flexmpi
