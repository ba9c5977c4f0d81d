// MPI_Init, MPI_Init_thread and MPI_Finalize wrappers (thesis 4.2.2): they
// create and destroy the runtime, so a program needs no flexmpi call to be
// profiled (it may even be unmodified, with libflexmpi preloaded).
#include <mpi.h>

#include <csignal>
#include <cstdlib>

#include "interposition/hooks.hpp"
#include "util/output_file.hpp"
#include "util/signal_flag.hpp"

namespace {

// Open MPI's own MPI-IO (OMPIO, 4.1) waits forever in MPI_File_open on a
// communicator that holds processes spawned after MPI_Init (MPI_Comm_spawn,
// then merged), as flexmpi's are; ROMIO does not. A job that may write or
// read a checkpoint (src/checkpoint/) therefore takes ROMIO, unless the user
// chose a component; spawned processes get the same (launch_environment).
// MCA parameters are read in MPI_Init: this must come before it.
// And the scheduler's warning (SIGUSR1) must not kill a process that is still
// starting (a spawned one joins inside MPI_Init): it is caught from here on;
// the checkpointer acts on it, or gives the disposition back without a file.
void prepare_for_checkpoints() {
  if (std::getenv("FLEXMPI_CHECKPOINT") != nullptr) flexmpi::catch_signal(SIGUSR1);
#ifdef OPEN_MPI
  const bool checkpoints =
      std::getenv("FLEXMPI_CHECKPOINT") != nullptr || std::getenv("FLEXMPI_RESTART") != nullptr;
  if (checkpoints && std::getenv("OMPI_MCA_io") == nullptr) setenv("OMPI_MCA_io", "romio321", 0);
#endif
}

}  // namespace

extern "C" int MPI_Init(int* argc, char*** argv) {
  prepare_for_checkpoints();
  const int code = PMPI_Init(argc, argv);
  if (code == MPI_SUCCESS) flexmpi::start_runtime(MPI_THREAD_SINGLE);
  return code;
}

extern "C" int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  prepare_for_checkpoints();
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
