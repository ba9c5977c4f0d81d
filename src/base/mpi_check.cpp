#include "base/mpi_check.hpp"

#include <mpi.h>

#include <string>

namespace flexmpi {

std::string mpi_error_text(int mpi_code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (PMPI_Error_string(mpi_code, text, &length) != MPI_SUCCESS) length = 0;
  return {text, static_cast<std::size_t>(length)};
}

void check_mpi(int mpi_code, const char* call) {
  if (mpi_code == MPI_SUCCESS) return;
  throw Error(Errc::mpi_failure, std::string(call) + " failed: " + mpi_error_text(mpi_code));
}

}  // namespace flexmpi
