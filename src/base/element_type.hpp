// What one element of a registered structure is, as far as a file format
// needs to know: MPI's named basic types map to a fixed-size number, any
// other datatype (a derived row type, a struct) is stored as opaque bytes of
// its extent. The checkpoint file (checkpoint/) stores each dataset with this
// type, so that h5dump and h5py show numbers, and a restart can refuse a
// structure whose type changed.
#pragma once

#include <mpi.h>

#include <string_view>

namespace flexmpi {

enum class ElementType {
  opaque,
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  float32,
  float64
};

/// The element type of an MPI datatype (MPI_DOUBLE -> float64, MPI_INT ->
/// int32, ...); opaque for every derived or unlisted type.
[[nodiscard]] ElementType element_type_of(MPI_Datatype type);

/// Its name in files and messages ("float64", "opaque").
[[nodiscard]] std::string_view element_type_name(ElementType type);

}  // namespace flexmpi
