// Refuses to run in a process whose MPI is not the one this libflexmpi is
// built for (docs/reference/tools.md, "flexrun --preload").
//
// Open MPI and MPICH differ in their ABI: Open MPI's handles are pointers to
// its own objects (MPI_COMM_WORLD is &ompi_mpi_comm_world), MPICH's are
// integers, and MPI_Status differs. A libflexmpi preloaded into a program of
// the other MPI loads its own MPI beside the program's, and its calls reach
// the program's MPI with handles of the wrong kind: the first one crashes.
// Passing calls through unprofiled would not help, since the wrappers
// themselves are compiled for the other ABI. So the process stops, with one
// line saying why, before any MPI call is made.
//
// MPI_Get_library_version is the one probe safe in either MPI: it may be
// called before MPI_Init (MPI-3.1 section 8.1.1) and takes no handle, only a
// buffer, which is made large enough for both (Open MPI writes at most 256
// characters, MPICH 8192).
#include <dlfcn.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

#if defined(OPEN_MPI)
constexpr const char* kBuiltFor = "Open MPI";
constexpr const char* kOtherBuildOption = "mpich";
#else
constexpr const char* kBuiltFor = "MPICH";
constexpr const char* kOtherBuildOption = "openmpi";
#endif

// Whether the MPI whose version text is `version` has the ABI of the one
// this library is built for. Open MPI names itself; every other MPI here
// (MPICH and its derivatives: Intel MPI, MVAPICH) shares MPICH's ABI.
bool same_abi(const char* version) {
  const bool open_mpi = std::strstr(version, "Open MPI") != nullptr;
#if defined(OPEN_MPI)
  return open_mpi;
#else
  return !open_mpi;
#endif
}

// Runs when the library is loaded, before main, whichever binding (C or
// Fortran) the program will initialise MPI through: its MPI dependency is
// loaded by then, and MPI_Get_library_version reaches the MPI that the
// program's own calls (and the wrappers' PMPI calls) will reach. Priority
// 101, the first a program may use: before the library's static objects.
__attribute__((constructor(101))) void refuse_other_mpi() {
  static char version[16384];
  int length = 0;
  if (PMPI_Get_library_version(version, &length) != MPI_SUCCESS) return;
  version[sizeof version - 1] = '\0';
  if (same_abi(version)) return;
  Dl_info self{};
  const bool located = dladdr(reinterpret_cast<void*>(&refuse_other_mpi), &self) != 0;
  // The first line names the MPI ("MPICH Version:<tab>4.0.2"), tabs as spaces.
  int first_line = 0;
  for (; version[first_line] != '\0' && version[first_line] != '\n'; ++first_line) {
    if (version[first_line] == '\t') version[first_line] = ' ';
  }
  std::fprintf(stderr,
               "flexmpi: this libflexmpi (%s) is built for %s, but the program runs another MPI "
               "(%.*s): stopping before MPI_Init; preload the libflexmpi built with "
               "-DFLEXMPI_MPI=%s (flexrun --preload chooses it)\n",
               located && self.dli_fname != nullptr ? self.dli_fname : "libflexmpi", kBuiltFor,
               first_line, version, kOtherBuildOption);
  std::fflush(stderr);
  _exit(EXIT_FAILURE);
}

}  // namespace
