// MPI_Init, MPI_Init_thread and MPI_Finalize wrappers (thesis 4.2.2): they
// create and destroy the runtime, so a program needs no flexmpi call to be
// profiled (it may even be unmodified, with libflexmpi preloaded).
#include <mpi.h>

#include <cstdlib>

#include "interposition/hooks.hpp"
#include "util/output_file.hpp"

extern "C" int MPI_Init(int* argc, char*** argv) {
  const int code = PMPI_Init(argc, argv);
  if (code == MPI_SUCCESS) flexmpi::start_runtime(MPI_THREAD_SINGLE);
  return code;
}

extern "C" int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int code = PMPI_Init_thread(argc, argv, required, provided);
  if (code == MPI_SUCCESS) flexmpi::start_runtime(*provided);
  return code;
}

extern "C" int MPI_Finalize(void) {
  const bool output_lost = flexmpi::stop_runtime();
  const int code = PMPI_Finalize();
  // The exit status says the trace or report is incomplete: a status of 0
  // would let a script take the partial output for the run's.
  if (output_lost) std::exit(flexmpi::kOutputLostStatus);
  return code;
}
