// The Fortran bindings' side of the PMPI wrappers (thesis 4.2.2): a Fortran
// program's MPI calls reach the MPI library through entries such as
// mpi_send_ (mpif.h, `use mpi`) and mpi_send_f08_ (`use mpi_f08`), every
// argument by reference. Where those entries call the C PMPI_ functions
// directly, the C wrappers never see the call, so flexmpi defines the
// entries too (generated from profiling/mpi_functions.def): each forwards
// the caller's pointers unchanged to the MPI library's own entry and, for
// the profile only, reads the values as C handles after the call.
//
// Which entries need a wrapper, per MPI (checked against the libraries'
// symbols and calls; docs/reference/pmpi.md):
// - Open MPI: every entry of mpif.h/`use mpi` and of mpi_f08 calls PMPI_
//   directly; flexmpi defines them all and forwards to the PMPI entries Open
//   MPI exports (pmpi_send_, pmpi_send_f08_).
// - MPICH: mpif.h/`use mpi` and mpi_f08's entries with a choice buffer
//   (mpi_send_f08ts_) call the C MPI_ functions, which the C wrappers count;
//   mpi_f08's entries without a buffer (mpi_barrier_f08_) call PMPI_
//   directly. flexmpi defines those alone and forwards to MPICH's own
//   definition, found after flexmpi's (MPICH exports no PMPI name for them).
#pragma once

#include <dlfcn.h>
#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace flexmpi::fortran {

static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are read as int arrays");

/// The binding a program called: mpif.h and `use mpi` share their entries.
enum class Binding { mpif, f08 };

/// The MPI library's definition of a Fortran entry flexmpi also defines: the
/// next one in the dynamic linker's lookup order.
template <class Function>
Function* next_definition(const char* name) {
  void* entry = dlsym(RTLD_NEXT, name);
  if (entry == nullptr) {
    std::fprintf(stderr, "flexmpi: the MPI library defines no %s\n", name);
    std::abort();
  }
  return reinterpret_cast<Function*>(entry);
}

/// A Fortran status big enough for the C status it converts to.
inline constexpr std::size_t kStatusSize = sizeof(MPI_Status) / sizeof(MPI_Fint) + 1;

#ifdef OPEN_MPI
// Open MPI's Fortran MPI_IN_PLACE, one common block for mpif.h, `use mpi` and
// mpi_f08 (libmpi and the Fortran libraries define it; the linker keeps one).
extern "C" MPI_Fint mpi_fortran_in_place_;

/// The buffer a byte rule reads: the Fortran MPI_IN_PLACE becomes C's.
inline const void* buffer(const void* fortran_buffer) {
  return fortran_buffer == &mpi_fortran_in_place_ ? MPI_IN_PLACE : fortran_buffer;
}

inline bool is_status_ignore(Binding /*both share Open MPI's sentinel*/, const MPI_Fint* status) {
  return status == MPI_F_STATUS_IGNORE;
}

/// A Fortran status read as C's, for as long as the expression reading it.
struct CStatus {
  MPI_Status status;
  operator const MPI_Status*() const { return &status; }  // NOLINT: read as a pointer
};

/// mpi_f08's TYPE(MPI_Status) has the INTEGER status's layout in Open MPI.
inline CStatus status_to_c(Binding /*both*/, const MPI_Fint* status) {
  CStatus converted{};
  PMPI_Status_f2c(status, &converted.status);
  return converted;
}
#endif

/// An INTEGER array of datatype handles read as C datatypes, one by one.
struct TypeArray {
  const MPI_Fint* handles;
  MPI_Datatype operator[](int i) const { return PMPI_Type_f2c(handles[i]); }
};

/// An INTEGER array of request handles read as C requests, one by one.
struct RequestArray {
  const MPI_Fint* handles;
  MPI_Request operator[](int i) const { return PMPI_Request_f2c(handles[i]); }
};

}  // namespace flexmpi::fortran
