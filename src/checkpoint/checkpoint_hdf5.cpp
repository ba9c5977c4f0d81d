#include "checkpoint/checkpoint_hdf5.hpp"

#include <algorithm>

#include "checkpoint/checksum.hpp"

namespace flexmpi::checkpoint {

namespace {

// HDF5's own words for the error on its stack, innermost last ("unable to
// open file: truncated file: eof = 1024, stored_eof = 4096").
herr_t collect_message(unsigned depth, const H5E_error2_t* error, void* text) {
  auto& out = *static_cast<std::string*>(text);
  if (depth < 4 && error->desc != nullptr && error->desc[0] != '\0') {
    out += (out.empty() ? "" : ": ") + std::string(error->desc);
  }
  return 0;
}

// The file and memory spaces of rows [first, first + count) of `shape`.
std::pair<Handle, Handle> row_spaces(hid_t file_space, const Shape& shape, std::uint64_t first,
                                     std::uint64_t count) {
  Handle selected(H5Scopy(file_space), H5Sclose, "file space");
  const hsize_t start[2] = {first, 0};
  const hsize_t extent[2] = {count, shape.width};
  const hsize_t memory_extent[1] = {std::max<hsize_t>(count * shape.row_elements(), 1)};
  Handle memory(H5Screate_simple(1, memory_extent, nullptr), H5Sclose, "memory space");
  if (count == 0 || shape.row_elements() == 0) {
    check(H5Sselect_none(selected.get()), "select none");
    check(H5Sselect_none(memory.get()), "select none");
  } else {
    check(H5Sselect_hyperslab(selected.get(), H5S_SELECT_SET, start, nullptr, extent, nullptr),
          "select rows");
  }
  return {std::move(selected), std::move(memory)};
}

}  // namespace

std::string hdf5_message() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_message, &text);
  H5Eclear2(H5E_DEFAULT);
  return text;
}

Handle file_access(MPI_Comm comm) {
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access properties");
  if (comm != MPI_COMM_NULL) check(H5Pset_fapl_mpio(access.get(), comm, MPI_INFO_NULL), "MPI-IO");
  // Superblock and object headers of version 2: their metadata is checksummed.
  check(H5Pset_libver_bounds(access.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST), "format bounds");
  return access;
}

Handle collective_transfer() {
  Handle transfer(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "transfer properties");
  check(H5Pset_dxpl_mpio(transfer.get(), H5FD_MPIO_COLLECTIVE), "collective transfer");
  return transfer;
}

Handle element_type(const std::string& name, std::size_t extent) {
  const std::pair<const char*, hid_t> numbers[] = {
      {"int8", H5T_NATIVE_INT8},     {"uint8", H5T_NATIVE_UINT8},   {"int16", H5T_NATIVE_INT16},
      {"uint16", H5T_NATIVE_UINT16}, {"int32", H5T_NATIVE_INT32},   {"uint32", H5T_NATIVE_UINT32},
      {"int64", H5T_NATIVE_INT64},   {"uint64", H5T_NATIVE_UINT64}, {"float32", H5T_NATIVE_FLOAT},
      {"float64", H5T_NATIVE_DOUBLE}};
  for (const auto& [number, type] : numbers) {
    if (name == number) return Handle(H5Tcopy(type), H5Tclose, "element type");
  }
  Handle opaque(H5Tcreate(H5T_OPAQUE, extent), H5Tclose, "opaque element type");
  check(H5Tset_tag(opaque.get(), "MPI derived datatype"), "opaque tag");
  return opaque;
}

// Writes rows [first, first + count) of a new dataset; returns their checksum part.
std::uint64_t write_rows(hid_t group, const char* name, hid_t type, const Shape& shape,
                         std::uint64_t first, std::uint64_t count, const void* data,
                         std::size_t element_bytes, hid_t transfer) {
  const hsize_t dims[2] = {shape.rows, shape.width};
  Handle space(H5Screate_simple(shape.rank(), dims, nullptr), H5Sclose, "dataset space");
  Handle dataset(H5Dcreate2(group, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose, std::string("create dataset ") + name);
  auto [file_space, memory] = row_spaces(space.get(), shape, first, count);
  check(H5Dwrite(dataset.get(), type, memory.get(), file_space.get(), transfer, data),
        std::string("write ") + name);
  const std::uint64_t row_bytes = shape.row_elements() * element_bytes;
  return count == 0 ? 0 : checksum_part(data, count * row_bytes, first * row_bytes);
}

// Reads rows [first, first + count) into `data`; checks the dataset's shape.
void read_rows(hid_t group, const char* name, hid_t type, const Shape& shape, std::uint64_t first,
               std::uint64_t count, void* data, hid_t transfer) {
  Handle dataset(H5Dopen2(group, name, H5P_DEFAULT), H5Dclose, std::string("open dataset ") + name);
  Handle space(H5Dget_space(dataset.get()), H5Sclose, "dataset space");
  hsize_t dims[2] = {0, 0};
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank != shape.rank() || H5Sget_simple_extent_dims(space.get(), dims, nullptr) != rank ||
      dims[0] != shape.rows || (rank == 2 && dims[1] != shape.width)) {
    throw Hdf5Failure{std::string("dataset ") + name +
                      " does not have the shape its metadata gives"};
  }
  auto [file_space, memory] = row_spaces(space.get(), shape, first, count);
  check(H5Dread(dataset.get(), type, memory.get(), file_space.get(), transfer, data),
        std::string("read ") + name);
}

}  // namespace flexmpi::checkpoint
