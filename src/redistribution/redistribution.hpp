// One call of DataRegistry::redistribute (data_registry.hpp), as a class
// whose steps the engine runs in order: redistribution_engine.cpp holds the
// steps and the rows of vectors and dense matrices, sparse_redistribution.cpp
// what sparse matrices add (nonzero counts, pieces of three arrays, row
// pointers renumbered, in-place nonzero windows).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/row_block.hpp"
#include "redistribution/buffers.hpp"
#include "redistribution/data_registry.hpp"
#include "redistribution/exchange.hpp"
#include "redistribution/transfer_plan.hpp"

namespace flexmpi::redistribution {

using detail::Structure;

// One call of DataRegistry::redistribute, in its steps (thesis 4.5, Alg. 4).
// Steps 1-3 check and prepare, each ending in an agreement; nothing has
// changed until step 3 is agreed, so bad input fails on every process with
// every structure as it was. Step 4 moves the rows and installs the blocks.
class Redistribution {
 public:
  Redistribution(std::vector<Structure>& structures, std::span<const RowBlock> from,
                 std::span<const RowBlock> to, MPI_Comm comm, int rank, int nprocs)
      : structures_(structures),
        from_(from),
        to_(to),
        comm_(comm),
        rank_(rank),
        nprocs_(nprocs),
        moves_(structures.size()) {}
  // ---- step 1: what each process can check alone; agreement A ----
  void agree_on_arguments(const std::string& local_error);
  // ---- step 2: distributed sparse structures: nonzero counts; agreement B ----
  void agree_on_nonzeros();
  // ---- step 3: memory for the rows that arrive; agreement C ----
  void agree_on_memory();
  // ---- step 4: move the rows ----
  RedistributionStats move_rows(std::uint64_t max_message_bytes);
  [[nodiscard]] const RowBlock& new_block() const { return plan_.new_block; }

 private:
  [[nodiscard]] std::int64_t arguments_signature() const;
  // The new owner of a piece learns its nonzero count from the old owner:
  // incoming[t * n + k] is piece t's count of sparse structure k.
  std::vector<std::int64_t> exchange_nonzero_counts();
  // Sparse structure k's nonzero offsets of the pieces in the new arrays
  // (they follow row order); returns the nonzeros this process held.
  std::int64_t place_sparse_pieces(std::size_t k, const std::vector<std::int64_t>& incoming);
  // In-place sparse: where the old and the new block's first nonzero are in
  // the windows, from every process's count of nonzeros (blocks tile the rows
  // in any rank order: the nonzeros before a block are those of the blocks
  // that start before it).
  void locate_window_nonzeros();
  void allocate_block(std::size_t i);
  // Growing in place: the rows held so far move to where they belong in
  // the new block, before anything arrives around them.
  void make_room_for_growth();
  void post_rows(Exchange& exchange, std::size_t i);
  void post_dense_rows(Exchange& exchange, const Structure& s, const Move& move);
  // Distributed sparse: per piece its row ends (the sender's own ia
  // entries, renumbered by rebase() on arrival), indices and values.
  // In place, the nonzeros arrive at their global offset in the windows and
  // the row ends at their place in the user's array (arranged for them).
  void post_sparse_pieces(Exchange& exchange, const Structure& s, const Move& move);
  [[nodiscard]] std::int64_t kept_old_first() const {
    return plan_.kept.displ - plan_.old_block.displ;
  }
  [[nodiscard]] std::int64_t kept_new_first() const {
    return plan_.kept.displ - plan_.new_block.displ;
  }
  void copy_kept_rows();
  // The received pieces' row ends, in the sender's numbering, renumbered
  // (the kept rows' were when they were moved or copied).
  void rebase_received(int* ptr, const Move& move) const;
  // Mode::fresh and Mode::grow of a distributed structure: the received
  // pieces' row ends are renumbered; fresh arrays replace the old ones.
  void install_block(std::size_t i);
  // In-place sparse: whether the row ends that leave are sent from a copy
  // past both blocks, because the kept rows' move over them while they
  // travel (rows arrive too, or the block's first row moves).
  [[nodiscard]] bool sends_from_copies() const;
  // In-place sparse, step 3: ia stays the user's array and grows where the
  // new block, or the copies of the row ends that leave, need more than
  // malloc gave it (reserve(): never smaller, so memory that rows come back
  // to stays).
  void reserve_pointers_in_place(std::size_t i);
  // In-place sparse, before anything is posted: the row ends that leave,
  // renumbered for their receivers (who then store them as they arrive),
  // where they are or, if the kept rows' move over them, copied past both
  // blocks. Their nonzeros' place is noted first (pieces share an end).
  void stage_sent_pointers(std::size_t i);
  // In-place sparse: the kept rows' ends move to their new place in the
  // same array, renumbered in the same pass (one pass, and none where the
  // block's first row and the nonzeros before the kept rows stay).
  void arrange_pointers_in_place(std::size_t i);
  // In-place sparse, once everything arrived (already in this process's
  // numbering): the array keeps its size; where the block lost more than
  // half of its rows, the pages past it go back with MADV_FREE, as a
  // window's, which rows that return (load balancing moves them back and
  // forth) retake without a fault.
  void settle_pointers_in_place(const Structure& s) const;
  // In place: the kept rows stay; the pointer follows the block's first row,
  // and whole pages of the rows that left go back to the system.
  void settle_in_window(const Structure& s) const;
  // In-place sparse, at the first redistribution: the block's nonzeros go to
  // their global offset, known now, and the application's buffers are freed.
  static void place_nonzeros(Structure& s, const Move& move);
  // In-place sparse: the kept nonzeros stay; ja and values follow the new
  // block's first nonzero, and whole pages of the nonzeros that left go back.
  static void settle_nonzeros_in_windows(Structure& s, const Move& move);
  // Mode::shrink: the new block is the kept rows (or nothing); they move
  // to the front, now that the rows around them are sent.
  void compact_kept_rows(std::size_t i);

  std::vector<Structure>& structures_;
  std::span<const RowBlock> from_, to_;
  MPI_Comm comm_;
  int rank_, nprocs_;
  TransferPlan plan_;
  Mode mode_ = Mode::unchanged;
  std::vector<Move> moves_;
  Failure failure_;
  std::vector<std::size_t> sparse_ids_;  // distributed sparse structures, in place or not
};

}  // namespace flexmpi::redistribution
