// The registry of the application's data structures (data_registry.hpp):
// registration, the workload it describes, the replicated rows, and the
// checks one process makes before a redistribution. The redistribution
// itself is in redistribution_engine.cpp.
#include "redistribution/data_registry.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "flexmpi/error.hpp"
#include "redistribution/buffers.hpp"
#include "redistribution/structure_checks.hpp"
#include "redistribution/transfer_plan.hpp"

namespace flexmpi {

using detail::Kind;
using detail::Structure;
using namespace redistribution;  // NOLINT(google-build-using-namespace)

// ---- registration -------------------------------------------------------------------

void DataRegistry::add(Structure structure, const std::string& call) {
  const void* addresses[] = {structure.data, structure.ptr, structure.idx};
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    const Structure& other = structures_[i];
    for (const void* mine : addresses) {
      if (mine == nullptr) continue;
      if (mine == other.data || mine == other.ptr || mine == other.idx) {
        invalid("register: this address is already registered, by " + describe(other, i));
      }
    }
  }
  if (rows_ >= 0 && structure.size != rows_) {
    invalid("register: size " + std::to_string(structure.size) + " differs from the size " +
            std::to_string(rows_) +
            " of the structures already registered (they share one decomposition, thesis 4.5.2)");
  }
  if (structure.nonzeros_in_window()) {
    // Reserved now, so that a registration fails rather than a redistribution;
    // the first redistribution places the block (it needs the others' counts).
    structure.window =
        std::make_unique<AddressWindow>(structure.nnz * structure.extent, call + " (values)");
    structure.index_window = std::make_unique<AddressWindow>(
        structure.nnz * sizeof(int), call + " (" + indices_name(structure) + ")");
  } else if (structure.scheme == Scheme::distributed_in_place) {
    move_into_window(structure, call);
  }
  rows_ = structure.size;
  structures_.push_back(std::move(structure));
}

void DataRegistry::move_into_window(Structure& structure, const std::string& call) const {
  if (!local_block_) {
    invalid(call +
            ": an in-place structure is placed at its block's global rows: ask for the block "
            "(XMPI_Get_wsize) before registering it");
  }
  const RowBlock block = *local_block_;
  if (block.count > structure.size - block.displ) {
    invalid(call + ": this process's block {count " + std::to_string(block.count) + ", displ " +
            std::to_string(block.displ) + "} is not within the " + std::to_string(structure.size) +
            " rows");
  }
  if (block.count > 0 && *structure.data == nullptr) {
    invalid(call + ": the buffer is null but this process holds " + std::to_string(block.count) +
            " rows");
  }
  const std::uint64_t row_bytes = row_elements(structure) * structure.extent;
  structure.window = std::make_unique<AddressWindow>(structure.size * row_bytes, call);
  if (block.count > 0) {
    std::memcpy(structure.window->at(block.displ * row_bytes), *structure.data,
                block.count * row_bytes);
  }
  std::free(*structure.data);
  *structure.data = structure.window->at(block.displ * row_bytes);
}

void DataRegistry::hand_back(Structure& structure) const {
  if (structure.sparse()) {
    hand_back_nonzeros(structure);
    return;
  }
  const std::uint64_t row_bytes = row_elements(structure) * structure.extent;
  const RowBlock block = local_block_.value_or(RowBlock{});
  void* copy = std::malloc(std::max<std::uint64_t>(block.count * row_bytes, 1));
  if (copy == nullptr) {
    throw Error(Errc::out_of_memory, "unregister: no memory for a copy of the block (" +
                                         std::to_string(block.count) + " rows)");
  }
  std::memcpy(copy, structure.window->at(block.displ * row_bytes), block.count * row_bytes);
  *structure.data = copy;
  structure.window.reset();
}

void DataRegistry::hand_back_nonzeros(Structure& structure) const {
  if (structure.first_nonzero) {
    const std::int64_t rows = local_block_.value_or(RowBlock{}).count;
    const std::int64_t nnz = rows > 0 ? (*structure.ptr)[rows] : 0;
    int* indices = nullptr;
    char* values = nullptr;
    if (!allocate(&indices, nnz * sizeof(int)) || !allocate(&values, nnz * structure.extent)) {
      std::free(indices);
      throw Error(Errc::out_of_memory, "unregister: no memory for a copy of the block's " +
                                           std::to_string(nnz) + " nonzeros");
    }
    const std::int64_t first = *structure.first_nonzero;
    std::memcpy(indices, structure.index_window->at(first * sizeof(int)), nnz * sizeof(int));
    std::memcpy(values, structure.window->at(first * structure.extent), nnz * structure.extent);
    *structure.idx = indices;
    *structure.data = values;
  }
  // Not placed yet: ja and values are still the application's buffers.
  structure.window.reset();
  structure.index_window.reset();
  structure.first_nonzero.reset();
}

void DataRegistry::register_rows(Kind kind, const char* call, void** data_address,
                                 std::int64_t size, std::int64_t row_length, MPI_Datatype type,
                                 Scheme scheme) {
  const std::string name = call;
  if (data_address == nullptr) invalid(name + ": the address of the pointer is null");
  if (size < 0) invalid(name + ": negative size " + std::to_string(size));
  if (scheme != Scheme::distributed && scheme != Scheme::replicated &&
      scheme != Scheme::distributed_in_place) {
    invalid(name + ": unknown scheme");
  }
  const std::size_t extent = element_extent(type, call);
  if (!fits(size, row_length, static_cast<std::int64_t>(extent))) {
    invalid(name + ": size " + std::to_string(size) + " overflows 64-bit byte counts");
  }
  add({kind,
       scheme,
       data_address,
       nullptr,
       nullptr,
       size,
       size * row_length,
       extent,
       element_type_of(type),
       {},
       {},
       {}},
      name);
}

void DataRegistry::register_vector(void** data_address, std::int64_t size, MPI_Datatype type,
                                   Scheme scheme) {
  register_rows(Kind::vector, "register_vector", data_address, size, 1, type, scheme);
}

void DataRegistry::register_dense(void** data_address, std::int64_t size, MPI_Datatype type,
                                  Scheme scheme) {
  register_rows(Kind::dense, "register_dense", data_address, size, size, type, scheme);
}

void DataRegistry::register_sparse_impl(Kind kind, int** ptr_address, int** idx_address,
                                        void** values_address, std::int64_t size, std::int64_t nnz,
                                        MPI_Datatype type, Scheme scheme) {
  const std::string what = kind == Kind::csc ? "register_sparse_csc" : "register_sparse";
  if (ptr_address == nullptr || idx_address == nullptr || values_address == nullptr) {
    invalid(what + ": the address of the " +
            (ptr_address == nullptr   ? (kind == Kind::csc ? "column pointer" : "ia")
             : idx_address == nullptr ? (kind == Kind::csc ? "row index" : "ja")
                                      : "values") +
            " pointer is null");
  }
  if (static_cast<void*>(ptr_address) == static_cast<void*>(idx_address) ||
      static_cast<void*>(ptr_address) == static_cast<void*>(values_address) ||
      static_cast<void*>(idx_address) == static_cast<void*>(values_address)) {
    invalid(what + ": the three pointer addresses must be different");
  }
  if (size < 0) invalid(what + ": negative size " + std::to_string(size));
  if (nnz < 0) invalid(what + ": negative nnz " + std::to_string(nnz));
  // Indices and pointers are int: the global dimension must be int, and so
  // must the nonzeros any one process holds (checked when they move).
  if (size > std::numeric_limits<int>::max()) {
    invalid(what + ": size " + std::to_string(size) + " exceeds INT_MAX (indices are int)");
  }
  if (scheme == Scheme::replicated && nnz > std::numeric_limits<int>::max()) {
    invalid(what + ": a replicated matrix with " + std::to_string(nnz) +
            " nonzeros does not fit int pointers");
  }
  if (scheme != Scheme::distributed && scheme != Scheme::replicated &&
      scheme != Scheme::distributed_in_place) {
    invalid(what + ": unknown scheme");
  }
  const std::size_t extent = element_extent(type, what);
  if (!fits(nnz, static_cast<std::int64_t>(std::max(extent, sizeof(int))))) {
    invalid(what + ": nnz " + std::to_string(nnz) + " overflows 64-bit byte counts");
  }
  add({kind,
       scheme,
       values_address,
       ptr_address,
       idx_address,
       size,
       nnz,
       extent,
       element_type_of(type),
       {},
       {},
       {}},
      what);
}

void DataRegistry::register_sparse(int** ia_address, int** ja_address, void** values_address,
                                   std::int64_t size, std::int64_t nnz, MPI_Datatype type,
                                   Scheme scheme) {
  register_sparse_impl(Kind::csr, ia_address, ja_address, values_address, size, nnz, type, scheme);
}

void DataRegistry::register_sparse_csc(int** col_ptr_address, int** row_idx_address,
                                       void** values_address, std::int64_t size, std::int64_t nnz,
                                       MPI_Datatype type, Scheme scheme) {
  register_sparse_impl(Kind::csc, col_ptr_address, row_idx_address, values_address, size, nnz, type,
                       scheme);
}

void DataRegistry::unregister(const void* address) {
  const auto it = std::find_if(structures_.begin(), structures_.end(), [&](const Structure& s) {
    return address != nullptr && (address == s.data || address == s.ptr || address == s.idx);
  });
  if (it == structures_.end()) {
    invalid(
        "unregister: this address is not registered (expected the address given at "
        "registration: &x, not x)");
  }
  if (it->window) hand_back(*it);
  structures_.erase(it);
  if (structures_.empty()) rows_ = -1;
}

void DataRegistry::clear() noexcept {
  for (Structure& s : structures_) {
    if (!s.window) continue;
    try {
      hand_back(s);
    } catch (const std::exception&) {
      // No memory for the copy: the block stays where the pointer points.
      (void)s.window.release();        // NOLINT(bugprone-unused-return-value)
      (void)s.index_window.release();  // NOLINT(bugprone-unused-return-value)
    }
  }
  structures_.clear();
  rows_ = -1;
}

void DataRegistry::set_max_message_bytes(std::uint64_t bytes) {
  if (bytes == 0 || bytes > kMaxMessageBytes) {
    invalid("set_max_message_bytes: " + std::to_string(bytes) + " is not in [1, INT_MAX]");
  }
  max_message_bytes_ = bytes;
}

void DataRegistry::set_local_block(const RowBlock& block) {
  if (block.count < 0 || block.displ < 0) {
    invalid("set_local_block: negative count or displacement");
  }
  local_block_ = block;
}

// ---- workload -----------------------------------------------------------------------

std::vector<double> DataRegistry::local_row_nonzeros(const RowBlock& local) const {
  if (local.count < 0 || local.displ < 0 || (rows_ >= 0 && local.count > rows_ - local.displ)) {
    invalid("local_row_nonzeros: block {count " + std::to_string(local.count) + ", displ " +
            std::to_string(local.displ) + "} is not within the " + std::to_string(rows_) +
            " rows of the registered structures");
  }
  std::vector<double> work(static_cast<std::size_t>(local.count), 0.0);
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    const Structure& s = structures_[i];
    if (!s.sparse()) {
      const double per_row = static_cast<double>(row_elements(s));
      for (double& w : work) w += per_row;
      continue;
    }
    const int* ptr = *s.ptr;
    if (local.count > 0 && ptr == nullptr) {
      throw Error(Errc::bad_state, "local_row_nonzeros: the " + std::string(pointers_name(s)) +
                                       " of " + describe(s, i) + " are null");
    }
    // A distributed matrix holds only its block; a replicated one all of it.
    const std::int64_t first = s.distributed() ? 0 : local.displ;
    for (std::int64_t k = 0; k < local.count; ++k) {
      work[static_cast<std::size_t>(k)] += ptr[first + k + 1] - ptr[first + k];
    }
  }
  return work;
}

double DataRegistry::bytes_per_row() const {
  double bytes = 0.0;
  for (const Structure& s : structures_) {
    if (!s.distributed()) continue;
    if (s.sparse()) {
      const double nonzeros = s.size > 0 ? static_cast<double>(s.nnz) / s.size : 0.0;
      bytes += nonzeros * static_cast<double>(s.extent + sizeof(int)) + sizeof(int);
    } else {
      bytes += static_cast<double>(row_elements(s)) * static_cast<double>(s.extent);
    }
  }
  return bytes;
}

void DataRegistry::share_replicated(std::span<const RowBlock> blocks, MPI_Comm comm) {
  // MPI_Bcast counts are int: long ranges go in pieces of max_message_bytes_.
  auto broadcast = [&](void* buffer, std::uint64_t bytes, int root) {
    auto* bytes_at = static_cast<char*>(buffer);
    for (std::uint64_t done = 0; done < bytes;) {
      const std::uint64_t piece = std::min(bytes - done, max_message_bytes_);
      check_mpi(PMPI_Bcast(bytes_at + done, static_cast<int>(piece), MPI_BYTE, root, comm),
                "MPI_Bcast (replicated rows)");
      done += piece;
    }
  };
  for (const Structure& s : structures_) {
    if (s.scheme != Scheme::replicated) continue;
    if (s.sparse()) {
      broadcast(*s.ptr, static_cast<std::uint64_t>(s.size + 1) * sizeof(int), 0);
      broadcast(*s.idx, static_cast<std::uint64_t>(s.nnz) * sizeof(int), 0);
    }
    for (std::size_t owner = 0; owner < blocks.size(); ++owner) {
      const RowBlock& block = blocks[owner];
      // Elements before the block and in it: rows (vector, dense) or nonzeros.
      const std::int64_t first = s.sparse() ? (*s.ptr)[block.displ] : block.displ * row_elements(s);
      const std::int64_t count =
          s.sparse() ? (*s.ptr)[block.displ + block.count] - first : block.count * row_elements(s);
      broadcast(static_cast<char*>(*s.data) + static_cast<std::uint64_t>(first) * s.extent,
                static_cast<std::uint64_t>(count) * s.extent, static_cast<int>(owner));
    }
  }
}

std::vector<double> DataRegistry::local_row_nonzeros() const {
  if (!local_block_) {
    throw Error(Errc::bad_state,
                "local_row_nonzeros: this process's block is not known yet (no redistribution "
                "and no set_local_block)");
  }
  return local_row_nonzeros(*local_block_);
}

// ---- redistribution -----------------------------------------------------------------

namespace {

// An in-place structure's pointer is the old block's first row in its window
// (sparse: its ja and values pointers the block's first nonzero, once placed).
std::string check_window_pointer(const Structure& s, const RowBlock& old_block,
                                 const std::string& name) {
  if (!s.window || old_block.count == 0) return {};
  const char* const advice =
      " (an in-place buffer must not be reallocated or replaced; or the old block is not the "
      "one this process holds)";
  if (s.sparse()) {
    const std::optional<std::int64_t> first = s.first_nonzero;
    if (!first || (*s.idx == reinterpret_cast<int*>(s.index_window->at(*first * sizeof(int))) &&
                   *s.data == s.window->at(*first * s.extent))) {
      return {};
    }
    return name + ": the " + indices_name(s) + " or values pointer is not where flexmpi put " +
           "nonzero " + std::to_string(*first) + advice;
  }
  const std::uint64_t row_bytes = row_elements(s) * s.extent;
  if (*s.data == s.window->at(old_block.displ * row_bytes)) return {};
  return name + ": the pointer is not where flexmpi put row " + std::to_string(old_block.displ) +
         advice;
}

}  // namespace

std::string DataRegistry::check_local(std::span<const RowBlock> from, std::span<const RowBlock> to,
                                      int rank, int nprocs) const {
  // With nothing registered, the decompositions must still agree with each
  // other: the rows are those the old blocks reach, in whatever rank order.
  std::int64_t rows = rows_;
  if (rows < 0) {
    rows = 0;
    constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max();
    for (const RowBlock& block : from) {
      if (block.count <= 0 || block.displ < 0) continue;  // check_decomposition names them
      rows = std::max(rows, block.count > most - block.displ ? most : block.displ + block.count);
    }
  }
  std::string error = check_decomposition(from, rows, nprocs, "from (the old decomposition)");
  if (error.empty()) error = check_decomposition(to, rows, nprocs, "to (the new decomposition)");
  if (!error.empty()) return error;

  const RowBlock& old_block = from[static_cast<std::size_t>(rank)];
  std::vector<std::pair<const void*, std::size_t>> buffers;  // to catch two structures sharing one
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    const Structure& s = structures_[i];
    const std::string name = describe(s, i);
    const bool distributed = s.distributed();
    if (!s.sparse()) {
      const std::int64_t rows_held = distributed ? old_block.count : s.size;
      if (rows_held > 0 && *s.data == nullptr) {
        return name + ": the data pointer is null on a process that holds " +
               std::to_string(rows_held) + " rows";
      }
      error = check_window_pointer(s, old_block, name);
      if (!error.empty()) return error;
      buffers.emplace_back(*s.data, i);
      continue;
    }
    const int* ptr = *s.ptr;
    const std::int64_t rows_held = distributed ? old_block.count : s.size;
    if (ptr == nullptr) {
      if (rows_held > 0) {
        return name + ": the " + pointers_name(s) + " pointer is null on a process that holds " +
               std::to_string(rows_held) + " " + rows_name(s);
      }
    } else {
      error = check_pointers_array(ptr, rows_held, name + ": the " + pointers_name(s));
      if (!error.empty()) return error;
    }
    const std::int64_t held_nnz = ptr == nullptr ? 0 : ptr[rows_held];
    if (!distributed && held_nnz != s.nnz) {
      return name + ": the " + pointers_name(s) + " end at " + std::to_string(held_nnz) +
             " but the matrix was registered with nnz " + std::to_string(s.nnz);
    }
    if (held_nnz > s.nnz) {
      return name + ": this process holds " + std::to_string(held_nnz) +
             " nonzeros, more than the registered nnz " + std::to_string(s.nnz);
    }
    if (held_nnz > 0 && *s.idx == nullptr) {
      return name + ": the " + indices_name(s) + " pointer is null on a process that holds " +
             std::to_string(held_nnz) + " nonzeros";
    }
    if (held_nnz > 0 && *s.data == nullptr) {
      return name + ": the values pointer is null on a process that holds " +
             std::to_string(held_nnz) + " nonzeros";
    }
    error = check_window_pointer(s, old_block, name);
    if (!error.empty()) return error;
    buffers.emplace_back(ptr, i);
    buffers.emplace_back(*s.idx, i);
    buffers.emplace_back(*s.data, i);
  }
  // Two structures on one buffer would be moved (and freed) twice.
  std::erase_if(buffers, [](const auto& entry) { return entry.first == nullptr; });
  std::sort(buffers.begin(), buffers.end());
  for (std::size_t k = 1; k < buffers.size(); ++k) {
    if (buffers[k].first == buffers[k - 1].first) {
      const std::size_t a = buffers[k - 1].second, b = buffers[k].second;
      return describe(structures_[a], a) +
             (a == b ? " uses one buffer for two of its arrays"
                     : " and " + describe(structures_[b], b) + " share a buffer");
    }
  }
  return {};
}

DecompositionChange gather_decomposition_change(const RowBlock& old_block,
                                                const RowBlock& new_block, MPI_Comm comm) {
  int nprocs = 0;
  check_mpi(PMPI_Comm_size(comm, &nprocs), "MPI_Comm_size");
  const std::int64_t mine[4] = {old_block.count, old_block.displ, new_block.count, new_block.displ};
  std::vector<std::int64_t> all(4 * static_cast<std::size_t>(nprocs));
  check_mpi(PMPI_Allgather(mine, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, comm),
            "MPI_Allgather (decompositions)");
  DecompositionChange change;
  for (std::size_t p = 0; p < static_cast<std::size_t>(nprocs); ++p) {
    change.from.push_back({all[4 * p], all[4 * p + 1]});
    change.to.push_back({all[4 * p + 2], all[4 * p + 3]});
  }
  return change;
}

}  // namespace flexmpi
