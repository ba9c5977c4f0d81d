// Reading the checkpoint file's data (checkpoint_file.hpp): each process the
// rows of its block (all rows where replicated) and every record, each
// dataset's checksum verified.
#include <algorithm>
#include <cstdlib>
#include <optional>

#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/checkpoint_hdf5.hpp"
#include "checkpoint/checkpoint_layout.hpp"
#include "checkpoint/checksum.hpp"
#include "flexmpi/error.hpp"
#include "util/agreement.hpp"

namespace flexmpi::checkpoint {

namespace {

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
