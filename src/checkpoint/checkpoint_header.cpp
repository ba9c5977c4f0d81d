// Reading and checking the checkpoint file's metadata (checkpoint_file.hpp):
// that the file is a finished flexmpi checkpoint of a version this flexmpi
// reads, and that it holds what the program registered.
#include <hdf5.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/checkpoint_hdf5.hpp"
#include "checkpoint/checkpoint_layout.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi::checkpoint {

namespace {

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

}  // namespace

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

}  // namespace flexmpi::checkpoint
