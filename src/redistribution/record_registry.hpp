// The application's records (XMPI_Register_record): small pieces of its own
// state that are not rows (simulated time, a residual history), the same on
// every process. One list serves both ways state outlives a process set: a
// checkpoint saves rank 0's copy (checkpoint/) and a spawn hands it to the
// newcomers with their rows (process/, XMPI_Send_data / XMPI_Get_data).
// Every process registers the same records (names, counts, element types,
// in the same order); each side checks that with shape_difference.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/element_type.hpp"

namespace flexmpi {

/// A registered record: `count` elements of `extent` bytes at `buffer`.
struct Record {
  std::string name;
  void* buffer = nullptr;
  std::int64_t count = 0;
  ElementType element = ElementType::opaque;
  std::size_t extent = 0;  ///< bytes per element
};

/// What must match for a record to be the same on both sides: its name,
/// count and element type (a checkpoint's metadata holds these).
struct RecordShape {
  std::string name;
  std::int64_t count = 0;
  std::string element;  ///< element_type_name
  std::uint64_t element_bytes = 0;
};

[[nodiscard]] RecordShape shape_of(const Record& record);

/// "" if `registered` has the shapes of `expected`, in order, else the
/// first difference, e.g. "record 0 is 'time' of 1 float64 (8 bytes each)
/// <where>, <who> registered 'dt' of 1 float64 (8 bytes each)" (`where`:
/// "in the file", `who`: "this program").
[[nodiscard]] std::string shape_difference(std::span<const RecordShape> expected,
                                           std::span<const Record> registered,
                                           std::string_view where, std::string_view who);

class RecordRegistry {
 public:
  /// XMPI_Register_record: name of 1-64 characters of [A-Za-z0-9_.-], not
  /// registered before; a buffer not registered before; a committed type
  /// with lower bound 0. Throws Error(invalid_argument) naming what is wrong.
  void add(const std::string& name, void* buffer, std::int64_t count, MPI_Datatype type);
  /// Forgets the record at `buffer`; false if none is there.
  bool remove(const void* buffer);
  [[nodiscard]] std::span<const Record> all() const { return records_; }

  /// Gives rank 0's copy of every record to the processes of `comm` that
  /// pass `receive` (the newcomers of a spawn), after checking that every
  /// process registered the same records: else every process throws
  /// Error(invalid_argument) with the first difference and no record is
  /// touched. The others keep their copy: a running process's record may hold
  /// state of its own (a partial sum of its rows) that a spawn must not
  /// overwrite. Collective.
  void share(MPI_Comm comm, bool receive) const;

 private:
  std::vector<Record> records_;
};

}  // namespace flexmpi
