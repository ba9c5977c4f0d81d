#include "checkpoint/checkpoint_file.hpp"

#include <hdf5.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <optional>
#include <utility>

#include "checkpoint/checksum.hpp"
#include "flexmpi/error.hpp"
#include "util/agreement.hpp"

namespace flexmpi::checkpoint {

namespace {

constexpr const char* kFormatName = "flexmpi checkpoint";

// ---- HDF5 handles and errors ------------------------------------------------

// An HDF5 failure, before the path is put in front of it.
struct Hdf5Failure {
  std::string what;
};

// HDF5's own words for the error on its stack, innermost last ("unable to
// open file: truncated file: eof = 1024, stored_eof = 4096").
herr_t collect_message(unsigned depth, const H5E_error2_t* error, void* text) {
  auto& out = *static_cast<std::string*>(text);
  if (depth < 4 && error->desc != nullptr && error->desc[0] != '\0') {
    out += (out.empty() ? "" : ": ") + std::string(error->desc);
  }
  return 0;
}

std::string hdf5_message() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_message, &text);
  H5Eclear2(H5E_DEFAULT);
  return text;
}

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

// The HDF5 type of an element (an opaque type of its extent for derived ones).
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

// ---- rows of a dataset ----------------------------------------------------------

// A 1-D or 2-D dataset of `rows` rows of `width` elements (width 0: 1-D).
struct Shape {
  std::uint64_t rows = 0;
  std::uint64_t width = 0;
  [[nodiscard]] std::uint64_t row_elements() const { return width == 0 ? 1 : width; }
  [[nodiscard]] int rank() const { return width == 0 ? 1 : 2; }
};

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

// ---- what each structure is --------------------------------------------------

std::string kind_name(detail::Kind kind) {
  switch (kind) {
    case detail::Kind::vector:
      return "vector";
    case detail::Kind::dense:
      return "dense";
    case detail::Kind::csr:
      return "csr";
    case detail::Kind::csc:
      return "csc";
  }
  return "unknown";
}

std::string scheme_name(Scheme scheme) {
  switch (scheme) {
    case Scheme::distributed:
      return "distributed";
    case Scheme::replicated:
      return "replicated";
    case Scheme::distributed_in_place:
      return "distributed_in_place";
  }
  return "unknown";
}

// Vectors and dense matrices: rows of row_length elements.
Shape row_shape(const detail::Structure& s) {
  return {static_cast<std::uint64_t>(s.size),
          s.kind == detail::Kind::dense ? static_cast<std::uint64_t>(s.row_length) : 0};
}

// Where this process's rows of a structure are, and which of them it writes
// (its block: replicated structures are current only there).
struct LocalRows {
  std::uint64_t first = 0;  ///< global row of the block
  std::uint64_t count = 0;
  const unsigned char* data = nullptr;  ///< the block's first row
};

LocalRows local_rows(const detail::Structure& s, const RowBlock& own) {
  const auto* base = reinterpret_cast<const unsigned char*>(s.first_row());  // past ghost rows
  const std::uint64_t row_bytes = row_shape(s).row_elements() * s.extent;
  const std::uint64_t first = static_cast<std::uint64_t>(own.displ);
  return {first, static_cast<std::uint64_t>(own.count),
          s.scheme == Scheme::replicated ? base + first * row_bytes : base};
}

// A sparse structure's block: local pointers (ptr[0] need not be 0 where
// replicated), the block's nonzeros, and where they start globally.
struct LocalNonzeros {
  const int* pointers = nullptr;  ///< count + 1 entries
  std::int64_t first_local = 0;   ///< index of the block's first nonzero in *idx / *data
  std::int64_t count = 0;         ///< the block's nonzeros
};

LocalNonzeros local_nonzeros(const detail::Structure& s, const RowBlock& own) {
  const int* pointers = *s.ptr;
  if (s.scheme == Scheme::replicated) pointers += own.displ;
  const std::int64_t first = own.count > 0 || s.scheme == Scheme::replicated ? pointers[0] : 0;
  const std::int64_t last =
      own.count > 0 || s.scheme == Scheme::replicated ? pointers[own.count] : 0;
  // In place, *idx and *data point at the block's first nonzero already.
  const bool at_block = s.scheme != Scheme::replicated;
  return {pointers, at_block ? 0 : first, last - first};
}

// The global offset of this process's first nonzero: the nonzeros of the
// blocks before its own (blocks may be in any rank order). Collective.
std::int64_t nonzeros_before(std::int64_t mine, const Decomposition& blocks, int rank,
                             MPI_Comm comm) {
  std::vector<std::int64_t> all(blocks.size());
  check_mpi(PMPI_Allgather(&mine, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm),
            "MPI_Allgather (checkpoint nonzeros)");
  std::int64_t before = 0;
  for (std::size_t p = 0; p < blocks.size(); ++p) {
    if (blocks[p].displ < blocks[static_cast<std::size_t>(rank)].displ) before += all[p];
  }
  return before;
}

// Whether this process's block holds the last row, whose end it writes
// (rank 0 without rows at all).
bool owns_end(const RowBlock& own, std::int64_t rows, int rank) {
  return own.count > 0 ? own.displ + own.count == rows : rows == 0 && rank == 0;
}

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return rank;
}

// ---- writing --------------------------------------------------------------------

// Writes one structure's datasets; returns the checksum parts in dataset order.
nlohmann::json write_structure(hid_t group, const detail::Structure& s, const RowBlock& own,
                               const Decomposition& blocks, MPI_Comm comm, hid_t transfer,
                               std::uint64_t& bytes) {
  Handle type = element_type(std::string(element_type_name(s.element)), s.extent);
  nlohmann::json parts = nlohmann::json::object();
  if (!s.sparse()) {
    const LocalRows rows = local_rows(s, own);
    parts["data"] = write_rows(group, "data", type.get(), row_shape(s), rows.first, rows.count,
                               rows.data, s.extent, transfer);
    bytes += rows.count * row_shape(s).row_elements() * s.extent;
    return parts;
  }
  const int rank = comm_rank(comm);
  const LocalNonzeros nz = local_nonzeros(s, own);
  const std::int64_t global_first = nonzeros_before(nz.count, blocks, rank, comm);
  const bool end = owns_end(own, s.size, rank);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(own.count) + (end ? 1 : 0));
  if (own.count > 0) {
    for (std::size_t r = 0; r < offsets.size(); ++r) {
      offsets[r] = global_first + (nz.pointers[r] - nz.pointers[0]);
    }
  }
  parts["row_offsets"] =
      write_rows(group, "row_offsets", H5T_NATIVE_INT64,
                 {static_cast<std::uint64_t>(s.size) + 1, 0}, static_cast<std::uint64_t>(own.displ),
                 offsets.size(), offsets.data(), sizeof(std::int64_t), transfer);
  const Shape nonzeros{static_cast<std::uint64_t>(s.nnz), 0};
  const auto first = static_cast<std::uint64_t>(global_first);
  const auto count = static_cast<std::uint64_t>(nz.count);
  parts["indices"] = write_rows(group, "indices", H5T_NATIVE_INT32, nonzeros, first, count,
                                *s.idx + nz.first_local, sizeof(int), transfer);
  parts["values"] = write_rows(
      group, "values", type.get(), nonzeros, first, count,
      static_cast<const unsigned char*>(*s.data) + nz.first_local * s.extent, s.extent, transfer);
  bytes += offsets.size() * sizeof(std::int64_t) + count * (sizeof(int) + s.extent);
  return parts;
}

// The checksum parts of every process summed, in the same nested order.
void sum_checksums(nlohmann::json& parts, MPI_Comm comm) {
  std::vector<std::uint64_t*> slots;
  std::function<void(nlohmann::json&)> collect = [&](nlohmann::json& node) {
    if (node.is_structured()) {
      for (auto& child : node) collect(child);
    } else {
      slots.push_back(node.get_ptr<nlohmann::json::number_unsigned_t*>());
    }
  };
  collect(parts);
  std::vector<std::uint64_t> values;
  for (const std::uint64_t* slot : slots) values.push_back(*slot);
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()),
                           MPI_UINT64_T, MPI_SUM, comm),
            "MPI_Allreduce (checkpoint checksums)");
  for (std::size_t k = 0; k < slots.size(); ++k) *slots[k] = values[k];
}

nlohmann::json header_json(const Snapshot& snapshot, const nlohmann::json& checksums) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const RowBlock& block : snapshot.blocks) blocks.push_back({block.count, block.displ});
  nlohmann::json structures = nlohmann::json::array();
  for (std::size_t k = 0; k < snapshot.structures.size(); ++k) {
    const detail::Structure& s = snapshot.structures[k];
    structures.push_back({{"kind", kind_name(s.kind)},
                          {"scheme", scheme_name(s.scheme)},
                          {"size", s.size},
                          {"nnz", s.nnz},
                          {"element", element_type_name(s.element)},
                          {"element_bytes", s.extent},
                          {"checksums", checksums["structures"][k]}});
  }
  nlohmann::json records = nlohmann::json::array();
  for (const Record& r : snapshot.records) {
    records.push_back({{"name", r.name},
                       {"count", r.count},
                       {"element", element_type_name(r.element)},
                       {"element_bytes", r.extent},
                       {"checksum", checksums["records"][r.name]}});
  }
  return {{"format", kFormatName},
          {"format_version", kFormatVersion},
          {"program", snapshot.program},
          {"next_iteration", snapshot.next_iteration},
          {"rows", snapshot.rows},
          {"processes", snapshot.blocks.size()},
          {"blocks", blocks},
          {"speeds", snapshot.speeds},
          {"hosts", snapshot.hosts},
          {"structures", structures},
          {"records", records},
          {"unix_time", static_cast<double>(std::time(nullptr))}};
}

// The metadata: one fixed-length string, written by rank 0.
void write_metadata(hid_t file, const std::string& text, bool writer, hid_t transfer) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check(H5Tset_size(type.get(), std::max<std::size_t>(text.size(), 1)), "string size");
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "scalar space");
  Handle dataset(
      H5Dcreate2(file, "metadata", type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose, "create metadata");
  Handle selected(H5Scopy(space.get()), H5Sclose, "metadata space");
  if (!writer) check(H5Sselect_none(selected.get()), "select none");
  check(H5Dwrite(dataset.get(), type.get(), selected.get(), selected.get(), transfer, text.data()),
        "write metadata");
}

std::uint64_t write_everything(const std::string& path, const Snapshot& snapshot, MPI_Comm comm) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become messages, not prints
  const int rank = comm_rank(comm);
  const RowBlock own =
      snapshot.blocks.empty() ? RowBlock{} : snapshot.blocks[static_cast<std::size_t>(rank)];
  Handle access = file_access(comm);
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), H5Fclose,
              "create the file");
  Handle transfer = collective_transfer();
  std::uint64_t bytes = 0;
  {  // every group and dataset closed before the file (H5F_CLOSE_SEMI)
    nlohmann::json checksums = {{"structures", nlohmann::json::array()},
                                {"records", nlohmann::json::object()}};
    Handle structures(H5Gcreate2(file.get(), "structures", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                      H5Gclose, "create /structures");
    for (std::size_t k = 0; k < snapshot.structures.size(); ++k) {
      Handle group(H5Gcreate2(structures.get(), std::to_string(k).c_str(), H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT),
                   H5Gclose, "create a structure's group");
      checksums["structures"].push_back(write_structure(
          group.get(), snapshot.structures[k], own, snapshot.blocks, comm, transfer.get(), bytes));
    }
    Handle records(H5Gcreate2(file.get(), "records", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   H5Gclose, "create /records");
    for (const Record& r : snapshot.records) {
      Handle type = element_type(std::string(element_type_name(r.element)), r.extent);
      const auto count = static_cast<std::uint64_t>(r.count);
      checksums["records"][r.name] =
          write_rows(records.get(), r.name.c_str(), type.get(), {count, 0}, 0,
                     rank == 0 ? count : 0, r.buffer, r.extent, transfer.get());
      if (rank == 0) bytes += count * r.extent;
    }
    sum_checksums(checksums, comm);
    // Rank 0's text on every process: the dataset's size must be the same everywhere.
    std::string text = header_json(snapshot, checksums).dump();
    auto length = static_cast<std::uint64_t>(text.size());
    check_mpi(PMPI_Bcast(&length, 1, MPI_UINT64_T, 0, comm), "MPI_Bcast (checkpoint metadata)");
    text.resize(length);
    check_mpi(PMPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, comm),
              "MPI_Bcast (checkpoint metadata)");
    write_metadata(file.get(), text, rank == 0, transfer.get());
  }
  file.close("finish the file");
  return bytes;
}

// ---- reading --------------------------------------------------------------------

template <typename T>
T required(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key)) {
    throw Hdf5Failure{std::string("its metadata has no '") + key + "'"};
  }
  try {
    return object.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Hdf5Failure{std::string("its metadata's '") + key + "' is not what it should be"};
  }
}

Header parse_header(const nlohmann::json& json) {
  if (!json.is_object() || json.value("format", "") != kFormatName) {
    throw Hdf5Failure{"it is an HDF5 file but not a flexmpi checkpoint"};
  }
  Header h;
  h.format_version = required<int>(json, "format_version");
  if (h.format_version > kFormatVersion || h.format_version < 1) {
    throw Hdf5Failure{"it has format version " + std::to_string(h.format_version) +
                      "; this flexmpi reads versions 1 to " + std::to_string(kFormatVersion)};
  }
  h.program = required<std::string>(json, "program");
  h.next_iteration = required<std::int64_t>(json, "next_iteration");
  h.rows = required<std::int64_t>(json, "rows");
  for (const auto& block : required<std::vector<std::vector<std::int64_t>>>(json, "blocks")) {
    if (block.size() != 2) throw Hdf5Failure{"its metadata's 'blocks' are not [count, displ]"};
    h.blocks.push_back({block[0], block[1]});
  }
  h.speeds = required<std::vector<double>>(json, "speeds");
  h.hosts = required<std::vector<std::string>>(json, "hosts");
  h.checksums = {{"structures", nlohmann::json::array()}, {"records", nlohmann::json::object()}};
  for (const nlohmann::json& s : required<nlohmann::json>(json, "structures")) {
    h.structures.push_back({required<std::string>(s, "kind"), required<std::string>(s, "scheme"),
                            required<std::int64_t>(s, "size"), required<std::int64_t>(s, "nnz"),
                            required<std::string>(s, "element"),
                            required<std::uint64_t>(s, "element_bytes")});
    h.checksums["structures"].push_back(required<nlohmann::json>(s, "checksums"));
  }
  for (const nlohmann::json& r : required<nlohmann::json>(json, "records")) {
    h.records.push_back({required<std::string>(r, "name"), required<std::int64_t>(r, "count"),
                         required<std::string>(r, "element"),
                         required<std::uint64_t>(r, "element_bytes")});
    h.checksums["records"][h.records.back().name] = required<std::uint64_t>(r, "checksum");
  }
  h.unix_time = json.value("unix_time", 0.0);
  if (h.next_iteration < 0 || h.blocks.empty() != (h.rows < 0)) {
    throw Hdf5Failure{"its metadata is inconsistent (iteration, rows and blocks)"};
  }
  return h;
}

Header read_header_of(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) throw Hdf5Failure{std::strerror(errno)};
  if (!S_ISREG(status.st_mode)) throw Hdf5Failure{"not a regular file"};
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    throw Hdf5Failure{"not an HDF5 file (unreadable, truncated or overwritten)"};
  }
  Handle access = file_access(MPI_COMM_NULL);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()), H5Fclose, "open");
  if (H5Lexists(file.get(), "metadata", H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw Hdf5Failure{"it has no metadata: its writing was not finished"};
  }
  Handle dataset(H5Dopen2(file.get(), "metadata", H5P_DEFAULT), H5Dclose, "open metadata");
  Handle type(H5Dget_type(dataset.get()), H5Tclose, "metadata type");
  const std::size_t size = H5Tget_size(type.get());
  if (H5Tget_class(type.get()) != H5T_STRING || size == 0 || size > (std::size_t{1} << 30)) {
    throw Hdf5Failure{"its metadata is not a string"};
  }
  std::string text(size, '\0');
  check(H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()),
        "read metadata");
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) throw Hdf5Failure{"its metadata is not JSON"};
  return parse_header(json);
}

// Reallocates a malloc'ed array of the user's to `bytes` (at least 1).
void* resized(void* buffer, std::size_t bytes) {
  void* grown = std::realloc(buffer, std::max<std::size_t>(bytes, 1));
  if (grown == nullptr) throw Error(Errc::out_of_memory, "restoring a checkpoint: out of memory");
  return grown;
}

// Reads one sparse structure's block (all of it where replicated).
nlohmann::json read_sparse(hid_t group, detail::Structure& s, hid_t type, const RowBlock& own,
                           int rank, hid_t transfer) {
  const bool replicated = s.scheme == Scheme::replicated;
  const std::uint64_t first_row = replicated ? 0 : static_cast<std::uint64_t>(own.displ);
  const std::uint64_t rows =
      replicated ? static_cast<std::uint64_t>(s.size) : static_cast<std::uint64_t>(own.count);
  std::vector<std::int64_t> offsets(rows + 1);
  read_rows(group, "row_offsets", H5T_NATIVE_INT64, {static_cast<std::uint64_t>(s.size) + 1, 0},
            first_row, rows + 1, offsets.data(), transfer);
  const std::int64_t first = offsets.front();
  const std::int64_t count = offsets.back() - first;
  if (count < 0 || offsets.back() > s.nnz || first < 0 ||
      !std::is_sorted(offsets.begin(), offsets.end())) {
    throw Hdf5Failure{"its row offsets are damaged"};
  }
  if (s.nonzeros_in_window() && s.first_nonzero) {
    throw Error(Errc::bad_state,
                "XMPI_Resume: a sparse matrix in place was redistributed "
                "before; call XMPI_Resume right after registering");
  }
  if (!replicated) {
    *s.ptr = static_cast<int*>(resized(*s.ptr, (rows + 1) * sizeof(int)));
    *s.idx = static_cast<int*>(resized(*s.idx, static_cast<std::size_t>(count) * sizeof(int)));
    *s.data = resized(*s.data, static_cast<std::size_t>(count) * s.extent);
  }
  for (std::size_t r = 0; r <= rows; ++r) (*s.ptr)[r] = static_cast<int>(offsets[r] - first);
  const Shape nonzeros{static_cast<std::uint64_t>(s.nnz), 0};
  read_rows(group, "indices", H5T_NATIVE_INT32, nonzeros, static_cast<std::uint64_t>(first),
            static_cast<std::uint64_t>(count), *s.idx, transfer);
  read_rows(group, "values", type, nonzeros, static_cast<std::uint64_t>(first),
            static_cast<std::uint64_t>(count), *s.data, transfer);
  // The checksum parts of the block (its rows' end only where it holds the last row).
  const std::size_t lead = replicated ? static_cast<std::size_t>(own.displ) : 0;
  const std::size_t own_count = static_cast<std::size_t>(own.count);
  const bool end = owns_end(own, s.size, rank);
  std::vector<std::int64_t> own_offsets(
      offsets.begin() + static_cast<std::ptrdiff_t>(lead),
      offsets.begin() + static_cast<std::ptrdiff_t>(lead + own_count + (end ? 1 : 0)));
  const std::int64_t own_first = offsets[lead];
  const std::int64_t own_count_nz = offsets[lead + own_count] - own_first;
  const std::size_t local = static_cast<std::size_t>(own_first - first);
  return {{"row_offsets", checksum_part(own_offsets.data(), own_offsets.size() * 8,
                                        static_cast<std::uint64_t>(own.displ) * 8)},
          {"indices",
           checksum_part(*s.idx + local, static_cast<std::size_t>(own_count_nz) * sizeof(int),
                         static_cast<std::uint64_t>(own_first) * sizeof(int))},
          {"values", checksum_part(static_cast<unsigned char*>(*s.data) + local * s.extent,
                                   static_cast<std::size_t>(own_count_nz) * s.extent,
                                   static_cast<std::uint64_t>(own_first) * s.extent)}};
}

nlohmann::json read_structure(hid_t group, detail::Structure& s, const RowBlock& own, int rank,
                              hid_t transfer) {
  Handle type = element_type(std::string(element_type_name(s.element)), s.extent);
  if (s.sparse()) return read_sparse(group, s, type.get(), own, rank, transfer);
  const Shape shape = row_shape(s);
  const std::uint64_t row_bytes = shape.row_elements() * s.extent;
  const bool replicated = s.scheme == Scheme::replicated;
  const std::uint64_t first = replicated ? 0 : static_cast<std::uint64_t>(own.displ);
  const std::uint64_t rows =
      replicated ? static_cast<std::uint64_t>(s.size) : static_cast<std::uint64_t>(own.count);
  read_rows(group, "data", type.get(), shape, first, rows, s.first_row(), transfer);
  const auto* block = reinterpret_cast<const unsigned char*>(s.first_row()) +
                      (replicated ? static_cast<std::uint64_t>(own.displ) * row_bytes : 0);
  return {{"data", checksum_part(block, static_cast<std::size_t>(own.count) * row_bytes,
                                 static_cast<std::uint64_t>(own.displ) * row_bytes)}};
}

void read_everything(const std::string& path, const Header& header,
                     std::span<detail::Structure> structures, std::span<const Record> records,
                     const Decomposition& blocks, MPI_Comm comm) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const int rank = comm_rank(comm);
  const RowBlock own = blocks.empty() ? RowBlock{} : blocks[static_cast<std::size_t>(rank)];
  Handle access = file_access(comm);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()), H5Fclose, "open");
  Handle transfer = collective_transfer();
  nlohmann::json sums = {{"structures", nlohmann::json::array()},
                         {"records", nlohmann::json::object()}};
  for (std::size_t k = 0; k < structures.size(); ++k) {
    Handle group(H5Gopen2(file.get(), ("structures/" + std::to_string(k)).c_str(), H5P_DEFAULT),
                 H5Gclose, "open a structure's group");
    sums["structures"].push_back(
        read_structure(group.get(), structures[k], own, rank, transfer.get()));
  }
  for (const Record& r : records) {
    Handle type = element_type(std::string(element_type_name(r.element)), r.extent);
    const auto count = static_cast<std::uint64_t>(r.count);
    Handle group(H5Gopen2(file.get(), "records", H5P_DEFAULT), H5Gclose, "open /records");
    read_rows(group.get(), r.name.c_str(), type.get(), {count, 0}, 0, count, r.buffer,
              transfer.get());
    // Every process holds the whole record: rank 0's sum stands for all.
    sums["records"][r.name] = rank == 0 ? checksum_part(r.buffer, count * r.extent, 0) : 0;
  }
  sum_checksums(sums, comm);
  for (std::size_t k = 0; k < structures.size(); ++k) {
    for (const auto& [dataset, sum] : sums["structures"][k].items()) {
      if (header.checksums["structures"][k].value(dataset, std::uint64_t{0}) !=
          sum.get<std::uint64_t>()) {
        throw Hdf5Failure{"structure " + std::to_string(k) + "'s " + dataset +
                          " does not match its checksum: the file is damaged"};
      }
    }
  }
  for (const Record& r : records) {
    if (header.checksums["records"].value(r.name, std::uint64_t{0}) !=
        sums["records"][r.name].get<std::uint64_t>()) {
      throw Hdf5Failure{"record '" + r.name + "' does not match its checksum: the file is damaged"};
    }
  }
}

}  // namespace

std::uint64_t file_bytes(const Snapshot& snapshot) {
  constexpr std::uint64_t kPerDataset = 4096;  // object header, its group's entry
  std::uint64_t bytes = 65536;                 // superblock, root group, metadata string
  for (const detail::Structure& s : snapshot.structures) {
    const auto size = static_cast<std::uint64_t>(s.size);
    const auto nnz = static_cast<std::uint64_t>(s.nnz);
    bytes += s.sparse() ? (size + 1) * sizeof(std::int64_t) + nnz * (sizeof(int) + s.extent) +
                              3 * kPerDataset
                        : nnz * s.extent + kPerDataset;
  }
  for (const Record& r : snapshot.records) {
    bytes += static_cast<std::uint64_t>(r.count) * r.extent + kPerDataset;
  }
  return bytes;
}

std::uint64_t write_file(const std::string& path, const Snapshot& snapshot, MPI_Comm comm) {
  std::optional<Error> failure;
  std::uint64_t bytes = 0;
  try {
    bytes = write_everything(path, snapshot, comm);
  } catch (const Hdf5Failure& e) {
    failure = Error(Errc::io_failure, "cannot write the checkpoint " + path + ": " + e.what);
  } catch (const Error& e) {
    failure = e;
  }
  agree_on_failure(failure, comm);
  return bytes;
}

Header read_header(const std::string& path) {
  try {
    return read_header_of(path);
  } catch (const Hdf5Failure& e) {
    throw Error(Errc::io_failure, "checkpoint " + path + ": " + e.what);
  }
}

std::string compare_with_registered(const Header& header,
                                    std::span<const detail::Structure> structures,
                                    std::span<const Record> records) {
  if (header.structures.size() != structures.size()) {
    return "it holds " + std::to_string(header.structures.size()) +
           " registered structures, this program registered " + std::to_string(structures.size());
  }
  for (std::size_t k = 0; k < structures.size(); ++k) {
    const SavedStructure& saved = header.structures[k];
    const detail::Structure& s = structures[k];
    const std::string mine = kind_name(s.kind) + " of size " + std::to_string(s.size) +
                             (s.sparse() ? " with " + std::to_string(s.nnz) + " nonzeros" : "") +
                             " of " + std::string(element_type_name(s.element)) + " (" +
                             std::to_string(s.extent) + " bytes)";
    const std::string theirs = saved.kind + " of size " + std::to_string(saved.size) +
                               (saved.kind == "csr" || saved.kind == "csc"
                                    ? " with " + std::to_string(saved.nnz) + " nonzeros"
                                    : "") +
                               " of " + saved.element + " (" + std::to_string(saved.element_bytes) +
                               " bytes)";
    if (mine != theirs) {
      return "structure " + std::to_string(k) + " (in registration order) is a " + theirs +
             " in the file, this program registered a " + mine;
    }
  }
  return shape_difference(header.records, records, "in the file", "this program");
}

void read_data(const std::string& path, const Header& header,
               std::span<detail::Structure> structures, std::span<const Record> records,
               const Decomposition& blocks, MPI_Comm comm) {
  std::optional<Error> failure;
  try {
    read_everything(path, header, structures, records, blocks, comm);
  } catch (const Hdf5Failure& e) {
    failure = Error(Errc::io_failure, "checkpoint " + path + ": " + e.what);
  } catch (const Error& e) {
    failure = e;
  }
  agree_on_failure(failure, comm);
}

}  // namespace flexmpi::checkpoint
