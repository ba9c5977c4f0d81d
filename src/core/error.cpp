#include "flexmpi/error.hpp"

#include <mpi.h>

#include <string>

namespace flexmpi {

void check_mpi(int mpi_code, const char* call) {
  if (mpi_code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (PMPI_Error_string(mpi_code, text, &length) != MPI_SUCCESS) length = 0;
  throw Error(Errc::mpi_failure, std::string(call) + " failed: " + std::string(text, length));
}

}  // namespace flexmpi
