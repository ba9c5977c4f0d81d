#include "redistribution/structure_checks.hpp"

#include <malloc.h>

#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi::redistribution {
namespace {

// MPI cannot tell whether a datatype is committed, but using an uncommitted
// one is an error that Open MPI reports in MPI_Irecv and MPICH in
// MPI_Pack_size. Probe both, on a private MPI_COMM_SELF duplicate that
// returns errors instead of aborting.
bool is_committed(MPI_Datatype type) {
  MPI_Comm self = MPI_COMM_NULL;
  check_mpi(PMPI_Comm_dup(MPI_COMM_SELF, &self), "MPI_Comm_dup");
  PMPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
  int bytes = 0;
  bool committed = PMPI_Pack_size(1, type, self, &bytes) == MPI_SUCCESS;
  if (committed) {
    MPI_Request request = MPI_REQUEST_NULL;
    committed = PMPI_Irecv(nullptr, 0, type, MPI_PROC_NULL, 0, self, &request) == MPI_SUCCESS;
    if (committed && request != MPI_REQUEST_NULL) PMPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  PMPI_Comm_free(&self);
  return committed;
}

constexpr std::int64_t kChunk = 1024;

// Whether ends[0..kChunk] decrease anywhere: the sign bit of the OR of the
// differences (exact in 64 bits), without a branch, which the compiler
// vectorises (a loop that stops at the first decrease is not).
bool chunk_decreases(const int* ends) {
  std::int64_t differences = 0;
  for (std::int64_t k = 0; k < kChunk; ++k) {
    differences |= static_cast<std::int64_t>(ends[k + 1]) - ends[k];
  }
  return differences < 0;
}

}  // namespace

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Errc::invalid_argument, message);
}

std::string describe(const Structure& s, std::size_t index) {
  static constexpr const char* kKinds[] = {"vector", "dense matrix", "CSR matrix", "CSC matrix"};
  static constexpr const char* kSchemes[] = {"distributed", "replicated", "in-place distributed"};
  return "structure #" + std::to_string(index) + " (" + kSchemes[static_cast<int>(s.scheme)] + " " +
         kKinds[static_cast<int>(s.kind)] + ")";
}

std::size_t element_extent(MPI_Datatype type, const std::string& what) {
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (initialized == 0 || finalized != 0) {
    throw Error(Errc::bad_state, what + ": MPI is not initialised");
  }
  if (type == MPI_DATATYPE_NULL) invalid(what + ": the datatype is MPI_DATATYPE_NULL");
  int integers = 0, addresses = 0, datatypes = 0, combiner = 0;
  check_mpi(PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner),
            "MPI_Type_get_envelope");
  if (combiner != MPI_COMBINER_NAMED && !is_committed(type)) {
    invalid(what + ": the datatype is not committed (call MPI_Type_commit first)");
  }
  int size = 0;
  check_mpi(PMPI_Type_size(type, &size), "MPI_Type_size");
  MPI_Aint lower_bound = 0, extent = 0, true_lb = 0, true_extent = 0;
  check_mpi(PMPI_Type_get_extent(type, &lower_bound, &extent), "MPI_Type_get_extent");
  check_mpi(PMPI_Type_get_true_extent(type, &true_lb, &true_extent), "MPI_Type_get_true_extent");
  if (size <= 0 || extent <= 0) invalid(what + ": the datatype has no data (size 0)");
  if (lower_bound != 0 || true_lb < 0 || true_lb + true_extent > extent) {
    invalid(what + ": unsupported datatype (lower bound " + std::to_string(lower_bound) +
            ", extent " + std::to_string(extent) + ", data in [" + std::to_string(true_lb) + ", " +
            std::to_string(true_lb + true_extent) +
            ")): array elements must lie in [0, extent) of their slot");
  }
  return static_cast<std::size_t>(extent);
}

bool fits(std::int64_t a, std::int64_t b, std::int64_t c) {
  std::int64_t ab = 0, abc = 0;
  return !__builtin_mul_overflow(a, b, &ab) && !__builtin_mul_overflow(ab, c, &abc);
}

std::string check_buffer_size(const Structure& s, std::int64_t rows_held, const std::string& name) {
  if (rows_held == 0 || *s.data == nullptr) return {};  // a null one is named elsewhere
  const std::uint64_t needed = (rows_held + 2 * s.ghost_rows) * s.row_bytes();
  const std::uint64_t usable = malloc_usable_size(*s.data);
  if (usable >= needed) return {};
  std::string rows = std::to_string(rows_held) + " rows";
  if (s.ghost_rows > 0) rows += " and 2 x " + std::to_string(s.ghost_rows) + " ghost rows";
  return name + ": the buffer holds " + std::to_string(usable) +
         " bytes (malloc_usable_size) but " + rows + " of " + std::to_string(s.row_length) +
         " elements of " + std::to_string(s.extent) + " bytes need " + std::to_string(needed) +
         " (check the registered size, row length and ghost rows against the allocation)";
}

std::string check_pointers_array(const int* ptr, std::int64_t rows, const std::string& what) {
  if (ptr[0] != 0) return what + "[0] is " + std::to_string(ptr[0]) + ", expected 0";
  // Every call reads the whole array: chunk by chunk, and row by row only
  // from the chunk that has a decrease.
  std::int64_t start = 0;
  while (start + kChunk <= rows && !chunk_decreases(ptr + start)) start += kChunk;
  for (std::int64_t k = start; k < rows; ++k) {
    if (ptr[k + 1] < ptr[k]) {
      return what + " decrease at local index " + std::to_string(k) + " (" +
             std::to_string(ptr[k]) + " then " + std::to_string(ptr[k + 1]) + ")";
    }
  }
  return {};
}

}  // namespace flexmpi::redistribution
