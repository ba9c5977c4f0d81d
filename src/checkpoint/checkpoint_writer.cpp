// Writing the checkpoint file (checkpoint_file.hpp): every process its block
// of each structure, rank 0 the records and, last, the metadata.
#include <algorithm>
#include <ctime>
#include <optional>

#include "base/mpi_check.hpp"
#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/checkpoint_hdf5.hpp"
#include "checkpoint/checkpoint_layout.hpp"
#include "flexmpi/error.hpp"
#include "util/agreement.hpp"

namespace flexmpi::checkpoint {

namespace {

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

}  // namespace flexmpi::checkpoint
