// Data redistribution (thesis 4.5, Algorithm 4); the guarantees are stated
// in data_registry.hpp.
//
// One call runs in four phases, so that bad input changes nothing and no
// process is left waiting for one that gave up:
//   1. each process checks the decompositions and its own structures; one
//      allreduce agrees on the outcome and on a signature of the arguments
//      and of the registry (which catches processes that disagree);
//   2. only with distributed sparse structures: the old owners tell the new
//      ones how many nonzeros the rows they send hold; a second allreduce
//      agrees, and checks the global nnz. In-place ones also gather every
//      block's nonzero count, old and new: a block's nonzeros sit in their
//      windows at the global offset of its first nonzero;
//   3. processes that receive rows allocate (or grow their arrays); a third
//      allreduce agrees that everyone got the memory (skipped when nobody
//      receives rows, or only in-place structures, which have their window);
//   4. the rows that change owner move, every structure at once (an in-place
//      sparse matrix not placed yet is first copied into its windows).
//
// Point-to-point rather than Algorithm 4's MPI_Alltoallv/MPI_Allgatherv:
//   - blocks are contiguous and in rank order, so a process exchanges rows
//     with the few processes whose blocks overlap its old or new block.
//     Alltoallv needs 4p int counts on every process and the Open MPI and
//     MPICH algorithms visit all p peers even for zero counts; here a
//     process posts O(peers) requests (the plan is found by binary search);
//   - Alltoallv counts and displacements are int, so a block beyond INT_MAX
//     elements cannot even be addressed (MPI 4's MPI_Alltoallv_c is not in
//     Open MPI 4.1); here every transfer is split at max_message_bytes;
//   - all arrays of all structures are in flight together and complete in
//     one Waitall, instead of one collective (one synchronisation) per array;
//   - rows go from the user's old buffer straight into the new one: nothing
//     is packed, and rows a process keeps never go through MPI;
//   - Allgatherv would send every row of a replicated structure to every
//     process, p times what changes owner.
// On 2 processes both move the same single message; what is left to pay is
// the agreements (a few microseconds), the rows a process keeps (copied, or
// shifted in place; neither for an in-place structure, but a sparse one's
// row pointers hold local offsets: where its first row or the nonzeros
// before the kept rows change, their ends are moved and renumbered in one
// pass, in the user's array) and first-touch page faults of memory a block
// grows into. In place, a sparse piece's row ends travel already in the
// receiver's numbering (the sender knows every block's first nonzero) and
// land in their final place. bench/redistribution_bench.cpp measures it against a
// bare MPI_Alltoallv of the same bytes between warm preallocated buffers.
//
// The library's own messages use PMPI_* so that they do not count in the
// application's communication profile (thesis 4.2.2).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"
#include "redistribution/redistribution.hpp"
#include "redistribution/structure_checks.hpp"
#include "util/clock.hpp"

namespace flexmpi {
namespace redistribution {

// ---- step 1: what each process can check alone; agreement A ----
void Redistribution::agree_on_arguments(const std::string& local_error) {
  failure_ = {Errc::invalid_argument, local_error};
  if (!failure_) plan_ = plan_transfers(from_, to_, rank_);
  mode_ = mode_of(plan_);
  agree(comm_, failure_, arguments_signature(), {});
}

// ---- step 3: memory for the rows that arrive; agreement C ----
void Redistribution::agree_on_memory() {
  bool allocating = false;
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    if (!structures_[i].resized_by_malloc()) continue;
    allocating = true;
    if (structures_[i].nonzeros_in_window()) {
      reserve_pointers_in_place(i);
    } else if (mode_ == Mode::fresh || mode_ == Mode::grow) {
      allocate_block(i);
    }
  }
  if (!allocating || !anyone_receives(from_, to_)) return;
  try {
    agree(comm_, failure_, 0, {});
  } catch (...) {
    // Grown arrays stay grown (realloc kept their contents, and their
    // pointers are updated); new ones are given back.
    release_all(moves_);
    throw;
  }
}

// ---- step 4: move the rows ----
RedistributionStats Redistribution::move_rows(std::uint64_t max_message_bytes) {
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    if (structures_[i].nonzeros_in_window()) place_nonzeros(structures_[i], moves_[i]);
  }
  if (mode_ == Mode::grow && plan_.old_block.count > 0) make_room_for_growth();
  // In-place sparse: the row ends that leave are renumbered for their
  // receivers; the kept rows' move before rows arrive over them, or,
  // with rows only leaving, while those travel.
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    if (!structures_[i].nonzeros_in_window()) continue;
    stage_sent_pointers(i);
    if (mode_ == Mode::grow || mode_ == Mode::fresh) arrange_pointers_in_place(i);
  }
  RedistributionStats stats;
  Exchange exchange(comm_, max_message_bytes);
  for (std::size_t i = 0; i < structures_.size(); ++i) post_rows(exchange, i);
  exchange.start(stats);
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    if (structures_[i].nonzeros_in_window() && mode_ == Mode::shrink) {
      arrange_pointers_in_place(i);
    }
  }
  // New arrays: the kept rows are copied while the messages travel.
  if (mode_ == Mode::fresh && plan_.kept.count > 0) copy_kept_rows();
  exchange.finish();
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    Structure& s = structures_[i];
    if (s.nonzeros_in_window()) {
      settle_nonzeros_in_windows(s, moves_[i]);
      if (mode_ != Mode::unchanged) settle_pointers_in_place(s);
      continue;
    }
    if (s.window) settle_in_window(s);
    if (!s.resized_by_malloc() || mode_ == Mode::unchanged) continue;
    if (mode_ == Mode::shrink) {
      compact_kept_rows(i);
    } else {
      install_block(i);
    }
  }
  return stats;
}

std::int64_t Redistribution::arguments_signature() const {
  Signature signature;
  signature.add(nprocs_);
  for (const auto blocks : {from_, to_}) {
    signature.add(static_cast<std::int64_t>(blocks.size()));
    for (const RowBlock& block : blocks) {
      signature.add(block.count);
      signature.add(block.displ);
    }
  }
  for (const Structure& s : structures_) {
    signature.add(static_cast<std::int64_t>(s.kind));
    signature.add(static_cast<std::int64_t>(s.scheme));
    signature.add(s.size);
    signature.add(s.nnz);
    signature.add(static_cast<std::int64_t>(s.extent));
    signature.add(s.ghost_rows);
    // Replicated sparse values move in place, sized by the local pattern:
    // it must be the same on every process, or messages would not match.
    if (!failure_ && s.sparse() && s.scheme == Scheme::replicated && *s.ptr != nullptr) {
      for (std::int64_t k = 0; k <= s.size; ++k) signature.add((*s.ptr)[k]);
    }
  }
  return signature.value();
}

void Redistribution::allocate_block(std::size_t i) {
  const Structure& s = structures_[i];
  Move& move = moves_[i];
  const std::int64_t rows = plan_.new_block.count;
  bool ok = true;
  if (!s.sparse()) {
    const std::uint64_t bytes = static_cast<std::uint64_t>(rows + 2 * s.ghost_rows) * s.row_bytes();
    ok = mode_ == Mode::fresh ? allocate(&move.data, bytes) : grow(s.data, bytes);
  } else {
    const std::uint64_t ptr_bytes = (rows + 1) * sizeof(int);
    const std::uint64_t idx_bytes = move.new_nnz * sizeof(int);
    const std::uint64_t value_bytes = move.new_nnz * s.extent;
    const bool fresh = mode_ == Mode::fresh;
    ok = fresh ? allocate(&move.ptr, ptr_bytes) : grow(s.ptr, ptr_bytes);
    if (ok) {
      ok = fresh ? allocate(&move.idx, idx_bytes) && allocate(&move.data, value_bytes)
                 : grow(s.idx, idx_bytes) && grow(s.data, value_bytes);
    }
  }
  if (!ok && !failure_) {
    failure_ = {Errc::out_of_memory, "out of memory for the new block of " + describe(s, i) + " (" +
                                         std::to_string(rows) + " " + rows_name(s) + ")"};
  }
}

// Growing in place: the rows held so far move to where they belong in
// the new block, before anything arrives around them.
void Redistribution::make_room_for_growth() {
  const std::int64_t shift = plan_.old_block.displ - plan_.new_block.displ;  // >= 0: old ⊆ new
  const std::int64_t rows = plan_.old_block.count;
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    const Structure& s = structures_[i];
    const Move& move = moves_[i];
    // In place, arrange_pointers_in_place() does the pointers' part.
    if (!s.resized_by_malloc() || s.window) continue;
    if (!s.sparse()) {
      char* data = s.first_row();
      if (shift > 0) std::memmove(data + shift * s.row_bytes(), data, rows * s.row_bytes());
      continue;
    }
    // The kept rows' ends, already renumbered (the old block starts at 0).
    move_pointers(*s.ptr + shift + 1, *s.ptr + 1, rows, move.kept_offset);
    if (move.kept_offset > 0 && move.kept_nnz > 0) {
      std::memmove(*s.idx + move.kept_offset, *s.idx, move.kept_nnz * sizeof(int));
      char* values = static_cast<char*>(*s.data);
      std::memmove(values + move.kept_offset * s.extent, values, move.kept_nnz * s.extent);
    }
  }
}

void Redistribution::post_rows(Exchange& exchange, std::size_t i) {
  const Structure& s = structures_[i];
  if (!s.sparse()) {
    post_dense_rows(exchange, s, moves_[i]);
  } else if (s.scheme == Scheme::replicated) {
    // The pattern is the same everywhere: only the values of the rows move.
    const int* ptr = *s.ptr;
    char* values = static_cast<char*>(*s.data);
    for (const Transfer& t : plan_.receives) {
      exchange.receive(t.peer, values + ptr[t.first] * s.extent,
                       (ptr[t.first + t.rows] - ptr[t.first]) * s.extent);
    }
    for (const Transfer& t : plan_.sends) {
      exchange.send(t.peer, values + ptr[t.first] * s.extent,
                    (ptr[t.first + t.rows] - ptr[t.first]) * s.extent);
    }
  } else {
    post_sparse_pieces(exchange, s, moves_[i]);
  }
}

void Redistribution::post_dense_rows(Exchange& exchange, const Structure& s, const Move& move) {
  const std::uint64_t row_bytes = s.row_bytes();
  const std::uint64_t ghost_bytes = s.ghost_rows * row_bytes;
  // Replicated and in place: every row at its global offset (all rows held,
  // or a window of all of them, past its leading ghost rows); distributed:
  // the block after its ghost rows.
  const bool global = s.scheme != Scheme::distributed;
  char* old_data = s.window ? s.window->at(ghost_bytes) : s.first_row();
  const std::int64_t old_first = global ? 0 : plan_.old_block.displ;
  const std::int64_t new_first = global ? 0 : plan_.new_block.displ;
  char* new_data = global || mode_ != Mode::fresh ? old_data : move.data + ghost_bytes;
  for (const Transfer& t : plan_.receives) {
    exchange.receive(t.peer, new_data + (t.first - new_first) * row_bytes, t.rows * row_bytes);
  }
  for (const Transfer& t : plan_.sends) {
    exchange.send(t.peer, old_data + (t.first - old_first) * row_bytes, t.rows * row_bytes);
  }
}

void Redistribution::copy_kept_rows() {
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    const Structure& s = structures_[i];
    const Move& move = moves_[i];
    if (!s.resized_by_malloc()) continue;
    if (!s.sparse()) {
      const std::uint64_t row_bytes = s.row_bytes();
      std::memcpy(move.data + (s.ghost_rows + kept_new_first()) * row_bytes,
                  s.first_row() + kept_old_first() * row_bytes, plan_.kept.count * row_bytes);
      continue;
    }
    // In place, arrange_pointers_in_place() did it before anything was posted.
    if (s.window) continue;
    const int* ptr = *s.ptr;
    const std::int64_t begin = ptr[kept_old_first()];
    move_pointers(move.ptr + kept_new_first() + 1, ptr + kept_old_first() + 1, plan_.kept.count,
                  move.kept_offset - begin);
    if (move.kept_nnz > 0) {
      std::memcpy(move.idx + move.kept_offset, *s.idx + begin, move.kept_nnz * sizeof(int));
      std::memcpy(move.data + move.kept_offset * s.extent,
                  static_cast<const char*>(*s.data) + begin * s.extent, move.kept_nnz * s.extent);
    }
  }
}

// Mode::fresh and Mode::grow of a distributed structure: the received
// pieces' row ends are renumbered; fresh arrays replace the old ones.
void Redistribution::install_block(std::size_t i) {
  const Structure& s = structures_[i];
  Move& move = moves_[i];
  if (s.sparse()) rebase_received(mode_ == Mode::fresh ? move.ptr : *s.ptr, move);
  if (mode_ != Mode::fresh) return;
  if (s.sparse()) {
    std::free(*s.ptr);
    *s.ptr = move.ptr;
    std::free(*s.idx);
    *s.idx = move.idx;
  }
  std::free(*s.data);
  *s.data = move.data;
  move = Move{};
}

// In place: the kept rows stay; the pointer follows the block's first row,
// and whole pages of the rows that left go back to the system.
void Redistribution::settle_in_window(const Structure& s) const {
  const std::uint64_t row_bytes = s.row_bytes();
  // Global row r is row r + ghost_rows of the window.
  const auto shifted = [&](const RowBlock& block) {
    return RowBlock{block.count, block.displ + s.ghost_rows};
  };
  s.window->release_departed(row_bytes, shifted(plan_.old_block), shifted(plan_.new_block));
  *s.data = s.window->at(plan_.new_block.displ * row_bytes);
}

// Mode::shrink: the new block is the kept rows (or nothing); they move
// to the front, now that the rows around them are sent.
void Redistribution::compact_kept_rows(std::size_t i) {
  const Structure& s = structures_[i];
  const Move& move = moves_[i];
  const std::int64_t kept = plan_.kept.count, first = kept_old_first();
  const std::int64_t old_rows = plan_.old_block.count, new_rows = plan_.new_block.count;
  if (!s.sparse()) {
    const std::uint64_t row_bytes = s.row_bytes();
    const std::int64_t ghosts = s.ghost_rows;
    char* data = s.first_row();
    if (kept > 0 && first > 0) std::memmove(data, data + first * row_bytes, kept * row_bytes);
    shrink(s.data, (new_rows + 2 * ghosts) * row_bytes, (old_rows + 2 * ghosts) * row_bytes);
    return;
  }
  int* ptr = *s.ptr;
  const std::int64_t begin = kept > 0 ? ptr[first] : 0;
  if (kept > 0 && first > 0) {
    move_pointers(ptr + 1, ptr + first + 1, kept, -begin);
    if (move.kept_nnz > 0 && begin > 0) {
      std::memmove(*s.idx, *s.idx + begin, move.kept_nnz * sizeof(int));
      char* values = static_cast<char*>(*s.data);
      std::memmove(values, values + begin * s.extent, move.kept_nnz * s.extent);
    }
  }
  ptr[0] = 0;
  shrink(s.ptr, (new_rows + 1) * sizeof(int), (old_rows + 1) * sizeof(int));
  shrink(s.idx, move.kept_nnz * sizeof(int), move.old_nnz * sizeof(int));
  shrink(s.data, move.kept_nnz * s.extent, move.old_nnz * s.extent);
}

}  // namespace redistribution

RedistributionStats DataRegistry::redistribute(std::span<const RowBlock> from,
                                               std::span<const RowBlock> to, MPI_Comm comm) {
  const double start = wall_seconds();
  if (comm == MPI_COMM_NULL)
    redistribution::invalid("redistribute: the communicator is MPI_COMM_NULL");
  int inter = 0, rank = 0, nprocs = 0;
  check_mpi(PMPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  if (inter != 0)
    redistribution::invalid("redistribute: the communicator must be an intracommunicator");
  check_mpi(PMPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(PMPI_Comm_size(comm, &nprocs), "MPI_Comm_size");

  follow_swaps();
  redistribution::Redistribution redistribution(structures_, from, to, comm, rank, nprocs);
  redistribution.agree_on_arguments(check_local(from, to, rank, nprocs));
  redistribution.agree_on_nonzeros();
  redistribution.agree_on_memory();
  RedistributionStats stats = redistribution.move_rows(max_message_bytes_);
  local_block_ = redistribution.new_block();
  stats.seconds = wall_seconds() - start;
  return stats;
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
