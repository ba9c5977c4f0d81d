// Validation of registered structures and their arrays (data_registry.hpp):
// the names errors give them, the datatypes they may have, the byte counts
// that must fit, the pointer arrays of sparse matrices.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "redistribution/data_registry.hpp"

namespace flexmpi::redistribution {

using detail::Kind;
using detail::Structure;

[[noreturn]] void invalid(const std::string& message);

// "structure #<index> (<scheme> <kind>)", for error messages.
std::string describe(const Structure& s, std::size_t index);

inline const char* pointers_name(const Structure& s) {
  return s.kind == Kind::csc ? "column pointers" : "row pointers (ia)";
}
inline const char* indices_name(const Structure& s) {
  return s.kind == Kind::csc ? "row indices" : "column indices (ja)";
}
inline const char* rows_name(const Structure& s) {
  return s.kind == Kind::csc ? "columns" : "rows";
}

// Elements in one row (one column for CSC) of a vector or dense structure.
inline std::int64_t row_elements(const Structure& s) { return s.row_length; }

// "" if the malloc'ed buffer of a vector or dense structure holds the
// `rows_held` rows (with their ghost rows) its registration says, else what
// is wrong, naming both byte counts. glibc's malloc_usable_size is at least
// the size asked of malloc (exactly that size under AddressSanitizer).
std::string check_buffer_size(const Structure& s, std::int64_t rows_held, const std::string& name);

// Bytes per element of a registered array: the extent of `type`. Data moves
// as MPI_BYTE, so any datatype whose elements lie within [0, extent) works,
// including structs with padding; a type with another lower bound does not
// describe consecutive array elements.
std::size_t element_extent(MPI_Datatype type, const std::string& what);

// a * b * c fits in int64 (and so in size_t), all non-negative.
bool fits(std::int64_t a, std::int64_t b, std::int64_t c = 1);

// "" if ptr[0..rows] starts at 0 and never decreases, else what is wrong.
std::string check_pointers_array(const int* ptr, std::int64_t rows, const std::string& what);

}  // namespace flexmpi::redistribution
