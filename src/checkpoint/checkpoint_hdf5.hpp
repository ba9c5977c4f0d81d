// HDF5 as the checkpoint file uses it (checkpoint_file.hpp): handles that
// close themselves, HDF5's errors as messages, and rows of a dataset written
// or read collectively. Private to the checkpoint file's sources.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace flexmpi::checkpoint {

// An HDF5 failure, before the path is put in front of it.
struct Hdf5Failure {
  std::string what;
};

// HDF5's own words for the error on its stack, which it clears.
std::string hdf5_message();

template <typename Id>
Id check(Id id, const std::string& what) {
  if (id < 0) {
    const std::string detail = hdf5_message();
    throw Hdf5Failure{what + (detail.empty() ? "" : ": " + detail)};
  }
  return id;
}

// One open HDF5 object, closed with its kind's close function.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what)
      : id_(check(id, what)), close_(close) {}
  Handle(Handle&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), close_(other.close_) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  [[nodiscard]] hid_t get() const { return id_; }
  // A close whose failure matters (the file: its last writes happen there).
  void close(const std::string& what) { check(close_(std::exchange(id_, H5I_INVALID_HID)), what); }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// File access over MPI-IO on `comm` (MPI_COMM_NULL: one process, no MPI-IO).
Handle file_access(MPI_Comm comm);

Handle collective_transfer();

// The HDF5 type of an element (an opaque type of its extent for derived ones).
Handle element_type(const std::string& name, std::size_t extent);

// A 1-D or 2-D dataset of `rows` rows of `width` elements (width 0: 1-D).
struct Shape {
  std::uint64_t rows = 0;
  std::uint64_t width = 0;
  [[nodiscard]] std::uint64_t row_elements() const { return width == 0 ? 1 : width; }
  [[nodiscard]] int rank() const { return width == 0 ? 1 : 2; }
};

// Writes rows [first, first + count) of a new dataset; returns their checksum part.
std::uint64_t write_rows(hid_t group, const char* name, hid_t type, const Shape& shape,
                         std::uint64_t first, std::uint64_t count, const void* data,
                         std::size_t element_bytes, hid_t transfer);

// Reads rows [first, first + count) into `data`; checks the dataset's shape.
void read_rows(hid_t group, const char* name, hid_t type, const Shape& shape, std::uint64_t first,
               std::uint64_t count, void* data, hid_t transfer);

}  // namespace flexmpi::checkpoint
