// The registry of the application's data structures (data_registry.hpp):
// registration, the workload it describes and the replicated rows. The
// checks before a redistribution are in registry_checks.cpp, the
// redistribution itself in redistribution_engine.cpp.
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

#include "base/mpi_check.hpp"
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
  // The window has ghost_rows rows before row 0 and after the last row, so
  // that every block has its ghost rows around it; the pointer points at
  // the first of the block's (global row displ - ghost_rows).
  const std::uint64_t row_bytes = structure.row_bytes();
  const std::int64_t ghosts = structure.ghost_rows;
  structure.window =
      std::make_unique<AddressWindow>((structure.size + 2 * ghosts) * row_bytes, call);
  if (block.count > 0) {
    std::memcpy(structure.window->at(block.displ * row_bytes), *structure.data,
                (block.count + 2 * ghosts) * row_bytes);
  }
  std::free(*structure.data);
  *structure.data = structure.window->at(block.displ * row_bytes);
}

void DataRegistry::hand_back(Structure& structure) const {
  if (structure.sparse()) {
    hand_back_nonzeros(structure);
    return;
  }
  // The block with its ghost rows around it, as the application lays it out.
  const std::uint64_t row_bytes = structure.row_bytes();
  const RowBlock block = local_block_.value_or(RowBlock{});
  const std::uint64_t bytes = (block.count + 2 * structure.ghost_rows) * row_bytes;
  void* copy = std::malloc(std::max<std::uint64_t>(bytes, 1));
  if (copy == nullptr) {
    throw Error(Errc::out_of_memory, "unregister: no memory for a copy of the block (" +
                                         std::to_string(block.count) + " rows)");
  }
  std::memcpy(copy, structure.window->at(block.displ * row_bytes), bytes);
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

void DataRegistry::register_rows(Kind kind, const char* call, void** data_address, void** partner,
                                 const RowShape& shape, MPI_Datatype type, Scheme scheme) {
  const std::string name = call;
  if (data_address == nullptr) invalid(name + ": the address of the pointer is null");
  if (shape.rows < 0) invalid(name + ": negative size " + std::to_string(shape.rows));
  // A dense matrix of no rows has rows of no elements (register_dense(0)).
  if (shape.row_length < (shape.rows > 0 ? 1 : 0)) {
    invalid(name + ": row_length " + std::to_string(shape.row_length) + " (expected >= 1)");
  }
  if (shape.ghost_rows < 0) {
    invalid(name + ": negative ghost_rows " + std::to_string(shape.ghost_rows));
  }
  if (scheme != Scheme::distributed && scheme != Scheme::replicated &&
      scheme != Scheme::distributed_in_place) {
    invalid(name + ": unknown scheme");
  }
  if (scheme == Scheme::replicated && shape.ghost_rows > 0) {
    invalid(name + ": a replicated structure holds every row: ghost_rows must be 0, not " +
            std::to_string(shape.ghost_rows));
  }
  const std::size_t extent = element_extent(type, call);
  if (shape.ghost_rows > shape.rows || !fits(shape.rows + 2 * shape.ghost_rows, shape.row_length,
                                             static_cast<std::int64_t>(extent))) {
    invalid(name + ": size " + std::to_string(shape.rows) + " x row_length " +
            std::to_string(shape.row_length) + " with " + std::to_string(shape.ghost_rows) +
            " ghost rows overflows 64-bit byte counts or has more ghost rows than rows");
  }
  Structure structure;
  structure.kind = kind;
  structure.scheme = scheme;
  structure.data = data_address;
  structure.size = shape.rows;
  structure.nnz = shape.rows * shape.row_length;
  structure.extent = extent;
  structure.element = element_type_of(type);
  structure.row_length = shape.row_length;
  structure.ghost_rows = shape.ghost_rows;
  structure.partner = partner;
  if (local_block_ || scheme == Scheme::replicated) {
    const std::int64_t held = scheme == Scheme::replicated ? shape.rows : local_block_->count;
    const std::string error = check_buffer_size(structure, held, name);
    if (!error.empty()) invalid(error);
  }
  add(std::move(structure), name);
}

void DataRegistry::register_vector(void** data_address, std::int64_t size, MPI_Datatype type,
                                   Scheme scheme) {
  register_rows(Kind::vector, "register_vector", data_address, nullptr, {size, 1, 0}, type, scheme);
}

void DataRegistry::register_dense(void** data_address, std::int64_t size, MPI_Datatype type,
                                  Scheme scheme) {
  register_rows(Kind::dense, "register_dense", data_address, nullptr, {size, size, 0}, type,
                scheme);
}

void DataRegistry::register_rows(void** data_address, const RowShape& shape, MPI_Datatype type,
                                 Scheme scheme) {
  register_rows(Kind::dense, "register_rows", data_address, nullptr, shape, type, scheme);
}

void DataRegistry::register_pair(void** current_address, void** next_address, const RowShape& shape,
                                 MPI_Datatype type, Scheme scheme) {
  if (current_address == next_address) {
    invalid("register_pair: the two pointer addresses must be different");
  }
  if (next_address == nullptr) invalid("register_pair: the address of the next pointer is null");
  register_rows(Kind::dense, "register_pair (current)", current_address, next_address, shape, type,
                scheme);
  try {
    register_rows(Kind::dense, "register_pair (next)", next_address, current_address, shape, type,
                  scheme);
  } catch (...) {
    forget(find(current_address));  // both or neither
    throw;
  }
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
  Structure structure;
  structure.kind = kind;
  structure.scheme = scheme;
  structure.data = values_address;
  structure.ptr = ptr_address;
  structure.idx = idx_address;
  structure.size = size;
  structure.nnz = nnz;
  structure.extent = extent;
  structure.element = element_type_of(type);
  add(std::move(structure), what);
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
  const auto it = find(address);
  if (it == structures_.end()) {
    invalid(
        "unregister: this address is not registered (expected the address given at "
        "registration: &x, not x)");
  }
  follow_swaps();
  void** const partner = it->partner;
  forget(it);
  // The other buffer of a pair goes with it.
  if (const auto other = find(partner); partner != nullptr && other != structures_.end()) {
    forget(other);
  }
}

std::vector<Structure>::iterator DataRegistry::find(const void* address) {
  return std::find_if(structures_.begin(), structures_.end(), [&](const Structure& s) {
    return address != nullptr && (address == s.data || address == s.ptr || address == s.idx);
  });
}

void DataRegistry::forget(std::vector<Structure>::iterator it) {
  if (it->window) hand_back(*it);
  structures_.erase(it);
  if (structures_.empty()) rows_ = -1;
}

void DataRegistry::follow_swaps() {
  if (!local_block_) return;
  const std::int64_t displ = local_block_->displ;
  for (Structure& s : structures_) {
    if (s.partner == nullptr || !s.window) continue;
    const auto other = find(s.partner);
    if (other == structures_.end()) continue;
    // Each pointer at the other's window: the application swapped them.
    if (*s.data == other->window->at(displ * other->row_bytes()) &&
        *other->data == s.window->at(displ * s.row_bytes())) {
      std::swap(s.window, other->window);
    }
  }
}

void DataRegistry::clear() noexcept {
  follow_swaps();
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

}  // namespace flexmpi
