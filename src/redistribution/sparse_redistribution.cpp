// The sparse matrices' part of a redistribution (redistribution.hpp): the
// nonzero counts the old owners send the new ones (step 2), the pieces of
// row pointers, indices and values, and, in place, the windows of the
// nonzeros with the row pointers renumbered in the user's array. The order
// of the steps and why they are point to point: redistribution_engine.cpp.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"
#include "redistribution/redistribution.hpp"
#include "redistribution/structure_checks.hpp"

namespace flexmpi::redistribution {
namespace {

constexpr int kCountTag = 32000;  // nonzero counts of outgoing sparse rows (step 2)

}  // namespace

// ---- step 2: distributed sparse structures: nonzero counts; agreement B ----
void Redistribution::agree_on_nonzeros() {
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    if (structures_[i].sparse() && structures_[i].distributed()) sparse_ids_.push_back(i);
  }
  if (sparse_ids_.empty()) return;
  const std::vector<std::int64_t> incoming = exchange_nonzero_counts();
  std::vector<std::int64_t> held(sparse_ids_.size());  // summed: the global nnz
  for (std::size_t k = 0; k < sparse_ids_.size(); ++k) {
    held[k] = place_sparse_pieces(k, incoming);
  }
  locate_window_nonzeros();
  agree(comm_, failure_, 0, held);
  for (std::size_t k = 0; k < sparse_ids_.size(); ++k) {
    const Structure& s = structures_[sparse_ids_[k]];
    if (held[k] != s.nnz) {
      invalid("redistribute: " + describe(s, sparse_ids_[k]) + ": the processes hold " +
              std::to_string(held[k]) + " nonzeros in all, but it was registered with nnz " +
              std::to_string(s.nnz));
    }
  }
}

// The new owner of a piece learns its nonzero count from the old owner:
// incoming[t * n + k] is piece t's count of sparse structure k.
std::vector<std::int64_t> Redistribution::exchange_nonzero_counts() {
  const std::size_t n = sparse_ids_.size();
  std::vector<std::int64_t> outgoing(plan_.sends.size() * n), incoming(plan_.receives.size() * n);
  for (std::size_t k = 0; k < n; ++k) {
    const int* ptr = *structures_[sparse_ids_[k]].ptr;
    for (std::size_t t = 0; t < plan_.sends.size(); ++t) {
      const std::int64_t first = plan_.sends[t].first - plan_.old_block.displ;
      outgoing[t * n + k] = ptr[first + plan_.sends[t].rows] - ptr[first];
    }
  }
  std::vector<MPI_Request> requests;
  for (std::size_t t = 0; t < plan_.receives.size(); ++t) {
    requests.emplace_back();
    check_mpi(PMPI_Irecv(&incoming[t * n], static_cast<int>(n), MPI_INT64_T, plan_.receives[t].peer,
                         kCountTag, comm_, &requests.back()),
              "MPI_Irecv (redistribution nonzero counts)");
  }
  for (std::size_t t = 0; t < plan_.sends.size(); ++t) {
    requests.emplace_back();
    check_mpi(PMPI_Isend(&outgoing[t * n], static_cast<int>(n), MPI_INT64_T, plan_.sends[t].peer,
                         kCountTag, comm_, &requests.back()),
              "MPI_Isend (redistribution nonzero counts)");
  }
  check_mpi(PMPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall (redistribution nonzero counts)");
  return incoming;
}

// Sparse structure k's nonzero offsets of the pieces in the new arrays
// (they follow row order); returns the nonzeros this process held.
std::int64_t Redistribution::place_sparse_pieces(std::size_t k,
                                                 const std::vector<std::int64_t>& incoming) {
  const std::size_t n = sparse_ids_.size(), i = sparse_ids_[k];
  const Structure& s = structures_[i];
  Move& move = moves_[i];
  const int* ptr = *s.ptr;
  move.old_nnz = ptr == nullptr ? 0 : ptr[plan_.old_block.count];
  if (plan_.kept.count > 0) {
    const std::int64_t first = plan_.kept.displ - plan_.old_block.displ;
    move.kept_nnz = ptr[first + plan_.kept.count] - ptr[first];
  }
  std::int64_t offset = 0;
  bool kept_placed = plan_.kept.count == 0;
  for (std::size_t t = 0; t < plan_.receives.size(); ++t) {
    if (!kept_placed && plan_.kept.displ < plan_.receives[t].first) {
      move.kept_offset = offset;
      offset += move.kept_nnz;
      kept_placed = true;
    }
    move.piece_nnz.push_back(incoming[t * n + k]);
    move.piece_offset.push_back(offset);
    offset += incoming[t * n + k];
  }
  if (!kept_placed) {
    move.kept_offset = offset;
    offset += move.kept_nnz;
  }
  move.new_nnz = offset;
  if (!failure_ && move.new_nnz > std::numeric_limits<int>::max()) {
    failure_ = {Errc::invalid_argument,
                describe(s, i) + ": the new block would hold " + std::to_string(move.new_nnz) +
                    " nonzeros, more than its int " + pointers_name(s) + " can index"};
  }
  return move.old_nnz;
}

// In-place sparse: where the old and the new block's first nonzero are in
// the windows, from every process's count of nonzeros (blocks tile the rows
// in any rank order: the nonzeros before a block are those of the blocks
// that start before it).
void Redistribution::locate_window_nonzeros() {
  std::vector<std::size_t> ids;
  for (const std::size_t i : sparse_ids_) {
    if (structures_[i].nonzeros_in_window()) ids.push_back(i);
  }
  if (ids.empty()) return;
  const std::size_t n = 2 * ids.size();
  std::vector<std::int64_t> mine, all(n * static_cast<std::size_t>(nprocs_));
  for (const std::size_t i : ids) {
    mine.push_back(moves_[i].old_nnz);
    mine.push_back(moves_[i].new_nnz);
  }
  check_mpi(PMPI_Allgather(mine.data(), static_cast<int>(n), MPI_INT64_T, all.data(),
                           static_cast<int>(n), MPI_INT64_T, comm_),
            "MPI_Allgather (nonzeros of the in-place blocks)");
  const auto nonzeros_before = [&](std::span<const RowBlock> blocks, std::size_t column,
                                   int owner) {
    const std::int64_t first_row = blocks[static_cast<std::size_t>(owner)].displ;
    std::int64_t sum = 0;
    for (std::size_t p = 0; p < blocks.size(); ++p) {
      if (blocks[p].displ < first_row) sum += all[p * n + column];
    }
    return sum;
  };
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const Structure& s = structures_[ids[k]];
    Move& move = moves_[ids[k]];
    move.first_before = nonzeros_before(from_, 2 * k, rank_);
    move.first_after = nonzeros_before(to_, 2 * k + 1, rank_);
    // A row end leaving for process q, global first_before + end, is
    // end + first_before - (q's first nonzero) in q's numbering.
    for (const Transfer& t : plan_.sends) {
      move.send_shift.push_back(move.first_before - nonzeros_before(to_, 2 * k + 1, t.peer));
    }
    if (!failure_ && s.first_nonzero && *s.first_nonzero != move.first_before) {
      failure_ = {Errc::invalid_argument,
                  describe(s, ids[k]) + ": the blocks before this process's hold " +
                      std::to_string(move.first_before) + " nonzeros, not " +
                      std::to_string(*s.first_nonzero) +
                      " as when flexmpi placed them (in place, the blocks' nonzero counts "
                      "must not change between redistributions)"};
    }
  }
}

// Distributed sparse: per piece its row ends (the sender's own ia
// entries, renumbered by rebase() on arrival), indices and values.
// In place, the nonzeros arrive at their global offset in the windows and
// the row ends at their place in the user's array (arranged for them).
void Redistribution::post_sparse_pieces(Exchange& exchange, const Structure& s, const Move& move) {
  int* new_ptr = mode_ == Mode::fresh && !s.window ? move.ptr : *s.ptr;
  int* new_idx = mode_ == Mode::fresh ? move.idx : *s.idx;
  char* new_values = mode_ == Mode::fresh ? move.data : static_cast<char*>(*s.data);
  if (s.window) {
    new_idx = reinterpret_cast<int*>(s.index_window->at(move.first_after * sizeof(int)));
    new_values = s.window->at(move.first_after * s.extent);
  }
  for (std::size_t t = 0; t < plan_.receives.size(); ++t) {
    const Transfer& piece = plan_.receives[t];
    const std::int64_t first = piece.first - plan_.new_block.displ;
    const std::int64_t nnz = move.piece_nnz[t], offset = move.piece_offset[t];
    exchange.receive(piece.peer, new_ptr + first + 1, piece.rows * sizeof(int));
    exchange.receive(piece.peer, new_idx + offset, nnz * sizeof(int));
    exchange.receive(piece.peer, new_values + offset * s.extent, nnz * s.extent);
  }
  for (std::size_t t = 0; t < plan_.sends.size(); ++t) {
    const Transfer& piece = plan_.sends[t];
    const int* ptr = *s.ptr + (piece.first - plan_.old_block.displ);
    std::int64_t begin = ptr[0], nnz = ptr[piece.rows] - begin;
    const int* ends = ptr + 1;
    if (s.window) {  // staged by stage_sent_pointers()
      begin = move.sent_begin[t];
      nnz = move.sent_nnz[t];
      ends = *s.ptr + move.sent_pointers[t];
    }
    exchange.send(piece.peer, ends, piece.rows * sizeof(int));
    exchange.send(piece.peer, *s.idx + begin, nnz * sizeof(int));
    exchange.send(piece.peer, static_cast<char*>(*s.data) + begin * s.extent, nnz * s.extent);
  }
}

// The received pieces' row ends, in the sender's numbering, renumbered
// (the kept rows' were when they were moved or copied).
void Redistribution::rebase_received(int* ptr, const Move& move) const {
  ptr[0] = 0;
  for (std::size_t t = 0; t < plan_.receives.size(); ++t) {
    rebase(ptr, plan_.receives[t].first - plan_.new_block.displ, plan_.receives[t].rows,
           move.piece_offset[t] + move.piece_nnz[t]);
  }
}

// In-place sparse: whether the row ends that leave are sent from a copy
// past both blocks, because the kept rows' move over them while they
// travel (rows arrive too, or the block's first row moves).
bool Redistribution::sends_from_copies() const {
  return mode_ == Mode::fresh ||
         (mode_ == Mode::shrink && plan_.kept.count > 0 && kept_old_first() > 0);
}

// In-place sparse, step 3: ia stays the user's array and grows where the
// new block, or the copies of the row ends that leave, need more than
// malloc gave it (reserve(): never smaller, so memory that rows come back
// to stays).
void Redistribution::reserve_pointers_in_place(std::size_t i) {
  const Structure& s = structures_[i];
  std::int64_t entries = plan_.new_block.count + 1;
  if (sends_from_copies()) {
    entries = std::max(plan_.old_block.count, plan_.new_block.count) + 1;
    for (const Transfer& t : plan_.sends) entries += t.rows;
  } else if (mode_ != Mode::grow) {
    return;
  }
  if (!reserve(s.ptr, entries * sizeof(int)) && !failure_) {
    failure_ = {Errc::out_of_memory, std::string("out of memory for the ") + pointers_name(s) +
                                         " of " + describe(s, i) + " (" + std::to_string(entries) +
                                         " entries)"};
  }
}

// In-place sparse, before anything is posted: the row ends that leave,
// renumbered for their receivers (who then store them as they arrive),
// where they are or, if the kept rows' move over them, copied past both
// blocks. Their nonzeros' place is noted first (pieces share an end).
void Redistribution::stage_sent_pointers(std::size_t i) {
  const Structure& s = structures_[i];
  Move& move = moves_[i];
  const int* ptr = *s.ptr;
  for (const Transfer& t : plan_.sends) {
    const std::int64_t first = t.first - plan_.old_block.displ;
    move.sent_begin.push_back(ptr[first]);
    move.sent_nnz.push_back(ptr[first + t.rows] - ptr[first]);
  }
  const bool copies = sends_from_copies();
  std::int64_t at = std::max(plan_.old_block.count, plan_.new_block.count) + 1;
  for (std::size_t t = 0; t < plan_.sends.size(); ++t) {
    const std::int64_t first = plan_.sends[t].first - plan_.old_block.displ + 1;
    const std::int64_t to = copies ? at : first;
    move_pointers(*s.ptr + to, *s.ptr + first, plan_.sends[t].rows, move.send_shift[t]);
    move.sent_pointers.push_back(to);
    at += plan_.sends[t].rows;
  }
}

// In-place sparse: the kept rows' ends move to their new place in the
// same array, renumbered in the same pass (one pass, and none where the
// block's first row and the nonzeros before the kept rows stay).
void Redistribution::arrange_pointers_in_place(std::size_t i) {
  const Structure& s = structures_[i];
  if (plan_.kept.count == 0) return;
  int* ptr = *s.ptr;
  move_pointers(ptr + kept_new_first() + 1, ptr + kept_old_first() + 1, plan_.kept.count,
                moves_[i].kept_offset - ptr[kept_old_first()]);
}

// In-place sparse, once everything arrived (already in this process's
// numbering): the array keeps its size; where the block lost more than
// half of its rows, the pages past it go back with MADV_FREE, as a
// window's, which rows that return (load balancing moves them back and
// forth) retake without a fault.
void Redistribution::settle_pointers_in_place(const Structure& s) const {
  (*s.ptr)[0] = 0;
  const std::int64_t entries = plan_.new_block.count + 1;
  if (2 * entries < plan_.old_block.count + 1) {
    release_unused(*s.ptr, entries * sizeof(int), malloc_usable_size(*s.ptr));
  }
}

// In-place sparse, at the first redistribution: the block's nonzeros go to
// their global offset, known now, and the application's buffers are freed.
void Redistribution::place_nonzeros(Structure& s, const Move& move) {
  if (s.first_nonzero) return;
  int* indices = reinterpret_cast<int*>(s.index_window->at(move.first_before * sizeof(int)));
  char* values = s.window->at(move.first_before * s.extent);
  if (move.old_nnz > 0) {
    std::memcpy(indices, *s.idx, move.old_nnz * sizeof(int));
    std::memcpy(values, *s.data, move.old_nnz * s.extent);
  }
  std::free(*s.idx);
  std::free(*s.data);
  *s.idx = indices;
  *s.data = values;
  s.first_nonzero = move.first_before;
}

// In-place sparse: the kept nonzeros stay; ja and values follow the new
// block's first nonzero, and whole pages of the nonzeros that left go back.
void Redistribution::settle_nonzeros_in_windows(Structure& s, const Move& move) {
  const RowBlock before{move.old_nnz, move.first_before}, after{move.new_nnz, move.first_after};
  s.index_window->release_departed(sizeof(int), before, after);
  s.window->release_departed(s.extent, before, after);
  *s.idx = reinterpret_cast<int*>(s.index_window->at(move.first_after * sizeof(int)));
  *s.data = s.window->at(move.first_after * s.extent);
  s.first_nonzero = move.first_after;
}

}  // namespace flexmpi::redistribution
