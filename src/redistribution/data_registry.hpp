// Data redistribution (thesis 4.5, Algorithm 4): the registry of the
// structures that follow the application's one-dimensional block
// decomposition, and the collective that moves all of them when the
// decomposition changes (load balancing, spawning, removing processes).
//
// Storage of a block of `count` rows starting at global row `displ`
// (docs/reference/behaviour.md, Data storage):
//   vector, distributed   count elements
//   vector, replicated    all `size` elements on every process
//   dense,  distributed   count x row_length elements, row-major, after
//                         ghost_rows ghost rows and before as many
//                         (register_dense: row_length = size, no ghosts)
//   dense,  replicated    size x row_length elements on every process
//   vector, dense, in place   as distributed, but in flexmpi's memory: the
//                         block sits at its global offset in an address
//                         window of the whole structure (AddressWindow)
//   CSR,    distributed   ia[0..count] starting at 0, ja (global column
//                         indices) and values of the ia[count] local nonzeros
//   CSR,    replicated    the whole matrix: ia[0..size], ja, values (nnz)
//   CSR,    in place      ia as distributed (malloc'ed, local offsets, the
//                         block's rows kept where they are in it); ja
//                         and values in two windows of all nnz nonzeros, at
//                         the global offset of the block's first nonzero.
//                         Registration keeps the user's ja and values: that
//                         offset needs the other blocks' nonzero counts, so
//                         the first redistribution places them
//   CSC                   as CSR with columns in place of rows: column
//                         blocks, column pointers, global row indices
// Every structure registered here shares one decomposition (thesis 4.5.2),
// so all have the same `size`.
//
// What redistribute() guarantees:
//   - distributed structures: afterwards each process holds exactly its new
//     block (between its ghost rows, whose contents are not kept), in a
//     buffer from malloc/realloc, and the user's pointer is updated. A
//     buffer smaller than its registration says (malloc_usable_size) is bad
//     input. The two buffers of a pair both move, whichever pointer points
//     at which (in place, the windows follow the pointers). A process
//     that only gains rows grows its buffer with realloc, one that only
//     loses rows compacts it in place (and gives memory back
//     with realloc only below half of it, as rows often come back), one that
//     does both builds a new buffer and frees the old one;
//   - replicated structures: the buffer stays where it is. Every process
//     holds all rows, but only the rows it owns are current (it computes
//     them). Afterwards every process holds, for every row of its NEW block,
//     the value the row's OLD owner held; rows it owned before and still owns
//     are untouched, and so are all rows outside its new block (they are as
//     current, or as stale, as before). Thesis Alg. 4 uses MPI_Allgatherv,
//     which also refreshes the rows a process does not own; the programs
//     that need them (x of Jacobi and CG) gather them every iteration anyway,
//     so moving only what changes owner is enough (Allgatherv would send
//     every row to every process). A
//     replicated sparse matrix has the same sparsity pattern (ia, ja) on
//     every process, so only its values move.
//   - in-place structures: rows a process keeps stay where they are, rows
//     that arrive are received into their global place in the window, the
//     user's pointer moves to the new block's first row, and whole pages of
//     rows that left are given back (nothing is allocated, nothing copied).
//     A sparse matrix's ja and values pointers move to the new block's first
//     nonzero the same way; its ia stays the user's malloc'ed array and
//     follows the block in it: the kept rows' ends move (one pass, where
//     the block's first row moves) and are renumbered from 0, arriving rows'
//     ends are received in place already renumbered; the array is enlarged
//     with realloc when the block (or a copy of the leaving rows' ends, where
//     the kept ones move over them while they travel) needs more, never made
//     smaller: where the block lost more than half of its rows, the pages
//     past it are given back with MADV_FREE, as in a window.
// Only rows that change owner move, each once, directly from the old owner
// to the new one (no root); rows a process keeps do not leave it.
//
// Errors: every failure is a flexmpi::Error. Bad input to redistribute() is
// detected before anything changes, the processes agree on it collectively,
// and every process throws the same Errc::invalid_argument with every
// structure untouched, bit for bit. Memory is allocated after that, and
// agreed on too: if a process cannot get it, every process throws
// Errc::out_of_memory with all contents intact (a buffer that realloc could
// grow stays grown, and possibly moved, with the user's pointer updated).
// An MPI failure while rows travel (Errc::mpi_failure) cannot be undone.
#pragma once

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/element_type.hpp"
#include "base/row_block.hpp"
#include "flexmpi/flexmpi.hpp"  // Scheme (XMPI_Scheme), RowShape
#include "redistribution/address_window.hpp"

namespace flexmpi {

/// What one call of DataRegistry::redistribute did on the calling process.
/// Bytes and messages count the data of the structures only (rows that
/// change owner), not the few control words the processes exchange to agree.
struct RedistributionStats {
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t messages = 0;  ///< data messages this process sent
  double seconds = 0.0;        ///< wall time of the call on this process
};

/// Largest message redistribute() sends by default: MPI counts are int, and
/// data moves as MPI_BYTE, so one message carries at most INT_MAX bytes;
/// larger transfers are split into several messages.
inline constexpr std::uint64_t kMaxMessageBytes = INT_MAX;

/// Both decompositions, one block per process, built from the blocks each
/// process knows of itself (XMPI_Redistribute_data's arguments). Collective.
struct DecompositionChange {
  Decomposition from;
  Decomposition to;
};
DecompositionChange gather_decomposition_change(const RowBlock& old_block,
                                                const RowBlock& new_block, MPI_Comm comm);

namespace detail {

enum class Kind { vector, dense, csr, csc };

/// One registered structure: the addresses of the user's pointers and what
/// the registry needs of the datatype (only its extent: data moves as bytes).
struct Structure {
  Kind kind = Kind::vector;
  Scheme scheme = Scheme::distributed;
  void** data = nullptr;  ///< vector/dense: the buffer; sparse: the values
  int** ptr = nullptr;    ///< sparse: row (CSR) or column (CSC) pointers
  int** idx = nullptr;    ///< sparse: column (CSR) or row (CSC) indices
  std::int64_t size = 0;
  std::int64_t nnz = 0;                       ///< sparse only
  std::size_t extent = 0;                     ///< bytes per element
  ElementType element = ElementType::opaque;  ///< what an element is, for files
  /// Vector/dense: elements per row (1 for a vector, any width for dense).
  std::int64_t row_length = 1;
  /// Vector/dense, distributed (in place or not): rows the buffer holds
  /// before and after the block (stencil halos). *data points at the first
  /// of them, so the block starts at ghost_rows * row_bytes(); in place the
  /// window holds ghost_rows rows before row 0 and after the last row.
  std::int64_t ghost_rows = 0;
  /// A swapped pair (register_pair): the address of the other buffer's
  /// pointer. Both move together; the application may exchange the two
  /// pointers between calls (in place, the windows follow the swap).
  void** partner = nullptr;
  /// Scheme::distributed_in_place: the whole structure's address range;
  /// *data points at the block's first row in it (sparse: the values of all
  /// nnz nonzeros, *data at the block's first nonzero once placed).
  std::unique_ptr<redistribution::AddressWindow> window;
  /// In-place sparse: the indices of all nnz nonzeros, as `window` the values.
  std::unique_ptr<redistribution::AddressWindow> index_window;
  /// In-place sparse: the global offset of the block's first nonzero, where
  /// *idx and *data point in the windows; none until the first redistribution
  /// places the block (registration cannot know it alone).
  std::optional<std::int64_t> first_nonzero;
  [[nodiscard]] bool sparse() const { return kind == Kind::csr || kind == Kind::csc; }
  /// Vector/dense: bytes of one row.
  [[nodiscard]] std::uint64_t row_bytes() const {
    return static_cast<std::uint64_t>(row_length) * extent;
  }
  /// Vector/dense: the first row of the block (distributed) or row 0
  /// (replicated), past the leading ghost rows.
  [[nodiscard]] char* first_row() const {
    return static_cast<char*>(*data) + static_cast<std::uint64_t>(ghost_rows) * row_bytes();
  }
  /// Whether a process holds only its block (distributed, in place or not).
  [[nodiscard]] bool distributed() const { return scheme != Scheme::replicated; }
  /// In-place sparse: the nonzeros live in windows, the pointers per block.
  [[nodiscard]] bool nonzeros_in_window() const {
    return sparse() && scheme == Scheme::distributed_in_place;
  }
  /// Whether a redistribution resizes this process's malloc'ed arrays: all
  /// of a distributed structure's, the pointers of an in-place sparse one.
  [[nodiscard]] bool resized_by_malloc() const {
    return scheme == Scheme::distributed || nonzeros_in_window();
  }
};

}  // namespace detail

class DataRegistry {
 public:
  DataRegistry() = default;
  /// Hands in-place structures back to the application (see unregister).
  ~DataRegistry() { clear(); }
  DataRegistry(const DataRegistry&) = delete;
  DataRegistry& operator=(const DataRegistry&) = delete;

  /// Registers a vector of `size` elements (thesis Fig. 4.23). data_address
  /// is the address of the user's pointer, whose buffer must come from
  /// malloc (a distributed one is reallocated; an in-place one is copied into
  /// its window at local_block() and freed, Error(out_of_memory) if the
  /// window cannot be reserved). Throws Error(invalid_argument)
  /// for a null or already registered address, a negative size, a size
  /// different from the structures already registered, a null, uncommitted
  /// or unsupported (lower bound not 0) datatype.
  void register_vector(void** data_address, std::int64_t size, MPI_Datatype type, Scheme scheme);
  /// Registers a dense size x size matrix decomposed in row blocks (Fig. 4.24).
  void register_dense(void** data_address, std::int64_t size, MPI_Datatype type, Scheme scheme);
  /// Registers `shape.rows` rows of `shape.row_length` elements, with
  /// `shape.ghost_rows` ghost rows before and after the block in the buffer
  /// (see detail::Structure; none when replicated, Error(invalid_argument)).
  /// A buffer smaller than the rows this process holds (malloc_usable_size)
  /// is Error(invalid_argument) naming both byte counts.
  void register_rows(void** data_address, const RowShape& shape, MPI_Datatype type, Scheme scheme);
  /// Two buffers of one shape that the application swaps (current/next):
  /// both move, contents and all, and either pointer may point at either
  /// buffer when rows move. Unregistering either address forgets both.
  void register_pair(void** current_address, void** next_address, const RowShape& shape,
                     MPI_Datatype type, Scheme scheme);
  /// Registers a CSR matrix of `size` rows and `nnz` nonzeros (global),
  /// decomposed in row blocks (Fig. 4.25). Indices are int (at most INT_MAX
  /// columns, and INT_MAX nonzeros per process); nnz is 64-bit. In place,
  /// the windows of the nonzeros are reserved here (Error(out_of_memory) if
  /// they cannot be) and the block is placed in them by the first
  /// redistribution (see the top of this file).
  void register_sparse(int** ia_address, int** ja_address, void** values_address, std::int64_t size,
                       std::int64_t nnz, MPI_Datatype type, Scheme scheme);
  /// Registers a CSC matrix decomposed in column blocks: col_ptr[0..count]
  /// starting at 0, global row indices and values (thesis 4.5.1).
  void register_sparse_csc(int** col_ptr_address, int** row_idx_address, void** values_address,
                           std::int64_t size, std::int64_t nnz, MPI_Datatype type, Scheme scheme);

  /// Forgets the structure one of whose registered addresses is `address`;
  /// its buffers stay as they are, except that an in-place structure's block
  /// is copied into a malloc'ed buffer (Error(out_of_memory), and nothing
  /// changes, if there is no memory for it). Error(invalid_argument) for
  /// another address.
  void unregister(const void* address);
  /// Forgets every structure, handing in-place blocks back as unregister
  /// does (one that finds no memory for its copy keeps its window mapped).
  void clear() noexcept;
  [[nodiscard]] std::size_t structure_count() const noexcept { return structures_.size(); }
  [[nodiscard]] bool empty() const noexcept { return structures_.empty(); }
  /// Rows (columns for CSC) of the shared decomposition; -1 while nothing is registered.
  [[nodiscard]] std::int64_t rows() const noexcept { return rows_; }
  /// The registered structures, in registration order: what a checkpoint
  /// saves and a restart fills (checkpoint/). Their buffers are the
  /// application's; a restart may reallocate those a redistribution may.
  [[nodiscard]] std::span<detail::Structure> structures() noexcept { return structures_; }
  [[nodiscard]] std::span<const detail::Structure> structures() const noexcept {
    return structures_;
  }

  /// Moves every registered structure from decomposition `from` to `to` (one
  /// block per process of comm, in rank order, the same on every process).
  /// Collective over comm, an intracommunicator the library owns (it uses
  /// tags 32000-32001 and must not be used for anything else meanwhile).
  /// Throws Error as described at the top of this file.
  RedistributionStats redistribute(std::span<const RowBlock> from, std::span<const RowBlock> to,
                                   MPI_Comm comm);

  /// A process that joins (a spawn, thesis Fig. 5.14) must hold every row of
  /// a replicated structure, not only its own block's (a replicated
  /// vector holds all `size` elements): each owner broadcasts its rows of
  /// `blocks`; a sparse structure's pattern comes from rank 0 (every process
  /// of the old set holds all of it). Collective over comm.
  void share_replicated(std::span<const RowBlock> blocks, MPI_Comm comm);

  /// Work of each row of `local` for the nonzeros workload model
  /// (XMPI_LB_NNZ): the sum over the registered structures of the
  /// row's nonzeros (a vector row counts 1, a dense row `size`, as thesis
  /// 4.5.3 defines nnz for them; a sparse row its ia difference).
  [[nodiscard]] std::vector<double> local_row_nonzeros(const RowBlock& local) const;
  /// Average bytes one row of the decomposition carries over every
  /// distributed structure (replicated ones do not move): what the
  /// prediction model prices a redistribution by. A sparse row counts its
  /// average nonzeros (global nnz / rows), values and indices, plus its pointer.
  [[nodiscard]] double bytes_per_row() const;
  /// The same for the block this process owns now (local_block()); throws
  /// Error(bad_state) if it is unknown.
  [[nodiscard]] std::vector<double> local_row_nonzeros() const;
  /// This process's block: the last one redistribute() moved the data to, or
  /// the one given to set_local_block() (before the first redistribution).
  [[nodiscard]] std::optional<RowBlock> local_block() const { return local_block_; }
  void set_local_block(const RowBlock& block);

  /// Largest message redistribute() sends (bytes, > 0); tests lower it to
  /// exercise the splitting of transfers larger than INT_MAX bytes.
  void set_max_message_bytes(std::uint64_t bytes);
  [[nodiscard]] std::uint64_t max_message_bytes() const noexcept { return max_message_bytes_; }

 private:
  void add(detail::Structure structure, const std::string& call);
  std::vector<detail::Structure>::iterator find(const void* address);
  // Drops one structure, handing an in-place one back (see unregister).
  void forget(std::vector<detail::Structure>::iterator it);
  // In-place pairs whose pointers the application exchanged: each window
  // goes with the pointer now pointing into it (at local_block_).
  void follow_swaps();
  // Scheme::distributed_in_place: moves this process's block of a new
  // structure into a window of the whole structure and frees the user's buffer.
  void move_into_window(detail::Structure& structure, const std::string& call) const;
  // The reverse: a malloc'ed copy of the block, and the window unmapped.
  void hand_back(detail::Structure& structure) const;
  // The same for an in-place sparse matrix's nonzeros (its ia is malloc'ed).
  void hand_back_nonzeros(detail::Structure& structure) const;
  // Vectors and dense matrices; `partner`: the other buffer of a pair.
  void register_rows(detail::Kind kind, const char* call, void** data_address, void** partner,
                     const RowShape& shape, MPI_Datatype type, Scheme scheme);
  void register_sparse_impl(detail::Kind kind, int** ptr_address, int** idx_address,
                            void** values_address, std::int64_t size, std::int64_t nnz,
                            MPI_Datatype type, Scheme scheme);
  // Empty if this process sees nothing wrong with the call, else what is wrong.
  [[nodiscard]] std::string check_local(std::span<const RowBlock> from,
                                        std::span<const RowBlock> to, int rank, int nprocs) const;

  std::vector<detail::Structure> structures_;
  std::int64_t rows_ = -1;
  std::optional<RowBlock> local_block_;
  std::uint64_t max_message_bytes_ = kMaxMessageBytes;
};

}  // namespace flexmpi
