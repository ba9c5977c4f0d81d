// MPI_Init, MPI_Init_thread and MPI_Finalize wrappers (thesis 4.2.2): they
// create and destroy the runtime, so a program needs no flexmpi call to be
// profiled (it may even be unmodified, with libflexmpi preloaded).
#include <mpi.h>

#include <csignal>
#include <cstdlib>

#include "interposition/hooks.hpp"
#ifdef FLEXMPI_FORTRAN_WRAPPERS
#include "interposition/fortran_binding.hpp"
#endif
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

// The three calls' flexmpi side, shared by the C and Fortran entries.
int after_init(int code, int provided) {
  if (code == MPI_SUCCESS) flexmpi::start_runtime(provided);
  return code;
}

template <class Finalize>
int around_finalize(Finalize&& finalize) {
  const bool output_lost = flexmpi::stop_runtime();
  const int code = finalize();
  // The exit status says the trace or report is incomplete: a status of 0
  // would let a script take the partial output for the run's.
  if (output_lost) std::exit(flexmpi::kOutputLostStatus);
  return code;
}

}  // namespace

extern "C" int MPI_Init(int* argc, char*** argv) {
  prepare_for_checkpoints();
  return after_init(PMPI_Init(argc, argv), MPI_THREAD_SINGLE);
}

extern "C" int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  prepare_for_checkpoints();
  const int code = PMPI_Init_thread(argc, argv, required, provided);
  return after_init(code, code == MPI_SUCCESS ? *provided : MPI_THREAD_SINGLE);
}

extern "C" int MPI_Finalize(void) {
  return around_finalize([] { return PMPI_Finalize(); });
}

#ifdef FLEXMPI_FORTRAN_WRAPPERS
// The Fortran bindings' MPI_Init, MPI_Init_thread and MPI_Finalize, where
// they reach the MPI library without calling the C functions above
// (fortran_binding.hpp says which, per MPI). Each forwards the caller's
// arguments unchanged to the MPI library's own entry; `ierror` may be absent
// (NULL) in mpi_f08.
namespace {

using InitEntry = void(MPI_Fint* ierror);
using InitThreadEntry = void(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror);

void fortran_init(InitEntry* pmpi_init, MPI_Fint* ierror) {
  prepare_for_checkpoints();
  MPI_Fint local_ierror = MPI_SUCCESS;
  MPI_Fint* const code = ierror != nullptr ? ierror : &local_ierror;
  pmpi_init(code);
  after_init(*code, MPI_THREAD_SINGLE);
}

void fortran_init_thread(InitThreadEntry* pmpi_init_thread, MPI_Fint* required, MPI_Fint* provided,
                         MPI_Fint* ierror) {
  prepare_for_checkpoints();
  MPI_Fint local_ierror = MPI_SUCCESS;
  MPI_Fint* const code = ierror != nullptr ? ierror : &local_ierror;
  pmpi_init_thread(required, provided, code);
  after_init(*code, *code == MPI_SUCCESS ? *provided : MPI_THREAD_SINGLE);
}

void fortran_finalize(InitEntry* pmpi_finalize, MPI_Fint* ierror) {
  MPI_Fint local_ierror = MPI_SUCCESS;
  MPI_Fint* const code = ierror != nullptr ? ierror : &local_ierror;
  around_finalize([&] {
    pmpi_finalize(code);
    return static_cast<int>(*code);
  });
}

}  // namespace

// One binding's three entries, forwarding to the MPI library's own.
#define FLEXMPI_FORTRAN_INIT_FINALIZE(init, init_thread, finalize, pmpi_init, pmpi_init_thread, \
                                      pmpi_finalize)                                            \
  extern "C" void init(MPI_Fint* ierror) { fortran_init(pmpi_init, ierror); }                   \
  extern "C" void init_thread(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror) {       \
    fortran_init_thread(pmpi_init_thread, required, provided, ierror);                          \
  }                                                                                             \
  extern "C" void finalize(MPI_Fint* ierror) { fortran_finalize(pmpi_finalize, ierror); }
#ifdef OPEN_MPI
extern "C" InitEntry pmpi_init_, pmpi_finalize_, pmpi_init_f08_, pmpi_finalize_f08_;
extern "C" InitThreadEntry pmpi_init_thread_, pmpi_init_thread_f08_;
// mpif.h and `use mpi` call one of these four spellings, all exported by Open MPI.
FLEXMPI_FORTRAN_INIT_FINALIZE(mpi_init_, mpi_init_thread_, mpi_finalize_, pmpi_init_,
                              pmpi_init_thread_, pmpi_finalize_)
FLEXMPI_FORTRAN_INIT_FINALIZE(mpi_init, mpi_init_thread, mpi_finalize, pmpi_init_,
                              pmpi_init_thread_, pmpi_finalize_)
FLEXMPI_FORTRAN_INIT_FINALIZE(mpi_init__, mpi_init_thread__, mpi_finalize__, pmpi_init_,
                              pmpi_init_thread_, pmpi_finalize_)
FLEXMPI_FORTRAN_INIT_FINALIZE(MPI_INIT, MPI_INIT_THREAD, MPI_FINALIZE, pmpi_init_,
                              pmpi_init_thread_, pmpi_finalize_)
FLEXMPI_FORTRAN_INIT_FINALIZE(mpi_init_f08_, mpi_init_thread_f08_, mpi_finalize_f08_,
                              pmpi_init_f08_, pmpi_init_thread_f08_, pmpi_finalize_f08_)
#else
// MPICH: only mpi_f08's entries bypass the C functions.
using flexmpi::fortran::next_definition;
FLEXMPI_FORTRAN_INIT_FINALIZE(mpi_init_f08_, mpi_init_thread_f08_, mpi_finalize_f08_,
                              next_definition<InitEntry>("mpi_init_f08_"),
                              next_definition<InitThreadEntry>("mpi_init_thread_f08_"),
                              next_definition<InitEntry>("mpi_finalize_f08_"))
#endif
#undef FLEXMPI_FORTRAN_INIT_FINALIZE
#endif  // FLEXMPI_FORTRAN_WRAPPERS
