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

#include "flexmpi/error.hpp"
#include "redistribution/buffers.hpp"
#include "redistribution/data_registry.hpp"
#include "redistribution/exchange.hpp"
#include "redistribution/structure_checks.hpp"
#include "redistribution/transfer_plan.hpp"
#include "util/clock.hpp"

namespace flexmpi {
namespace {

using namespace redistribution;  // NOLINT(google-build-using-namespace)

constexpr int kCountTag = 32000;  // nonzero counts of outgoing sparse rows (phase 2)

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
  void agree_on_arguments(const std::string& local_error) {
    failure_ = {Errc::invalid_argument, local_error};
    if (!failure_) plan_ = plan_transfers(from_, to_, rank_);
    mode_ = mode_of(plan_);
    agree(comm_, failure_, arguments_signature(), {});
  }

  // ---- step 2: distributed sparse structures: nonzero counts; agreement B ----
  void agree_on_nonzeros() {
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

  // ---- step 3: memory for the rows that arrive; agreement C ----
  void agree_on_memory() {
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
  RedistributionStats move_rows(std::uint64_t max_message_bytes) {
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

  [[nodiscard]] const RowBlock& new_block() const { return plan_.new_block; }

 private:
  [[nodiscard]] std::int64_t arguments_signature() const {
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
      // Replicated sparse values move in place, sized by the local pattern:
      // it must be the same on every process, or messages would not match.
      if (!failure_ && s.sparse() && s.scheme == Scheme::replicated && *s.ptr != nullptr) {
        for (std::int64_t k = 0; k <= s.size; ++k) signature.add((*s.ptr)[k]);
      }
    }
    return signature.value();
  }

  // The new owner of a piece learns its nonzero count from the old owner:
  // incoming[t * n + k] is piece t's count of sparse structure k.
  std::vector<std::int64_t> exchange_nonzero_counts() {
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
      check_mpi(PMPI_Irecv(&incoming[t * n], static_cast<int>(n), MPI_INT64_T,
                           plan_.receives[t].peer, kCountTag, comm_, &requests.back()),
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
  std::int64_t place_sparse_pieces(std::size_t k, const std::vector<std::int64_t>& incoming) {
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
  void locate_window_nonzeros() {
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

  void allocate_block(std::size_t i) {
    const Structure& s = structures_[i];
    Move& move = moves_[i];
    const std::int64_t rows = plan_.new_block.count;
    bool ok = true;
    if (!s.sparse()) {
      const std::uint64_t bytes =
          static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(row_elements(s)) * s.extent;
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
      failure_ = {Errc::out_of_memory, "out of memory for the new block of " + describe(s, i) +
                                           " (" + std::to_string(rows) + " " + rows_name(s) + ")"};
    }
  }

  // Growing in place: the rows held so far move to where they belong in
  // the new block, before anything arrives around them.
  void make_room_for_growth() {
    const std::int64_t shift = plan_.old_block.displ - plan_.new_block.displ;  // >= 0: old ⊆ new
    const std::int64_t rows = plan_.old_block.count;
    for (std::size_t i = 0; i < structures_.size(); ++i) {
      const Structure& s = structures_[i];
      const Move& move = moves_[i];
      // In place, arrange_pointers_in_place() does the pointers' part.
      if (!s.resized_by_malloc() || s.window) continue;
      if (!s.sparse()) {
        const std::uint64_t row_bytes = static_cast<std::uint64_t>(row_elements(s)) * s.extent;
        char* data = static_cast<char*>(*s.data);
        if (shift > 0) std::memmove(data + shift * row_bytes, data, rows * row_bytes);
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

  void post_rows(Exchange& exchange, std::size_t i) {
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

  void post_dense_rows(Exchange& exchange, const Structure& s, const Move& move) {
    const std::uint64_t row_bytes = static_cast<std::uint64_t>(row_elements(s)) * s.extent;
    // Replicated and in place: every row at its global offset (all rows held,
    // or a window of all of them); distributed: the block from the start.
    const bool global = s.scheme != Scheme::distributed;
    char* old_data = s.window ? s.window->at(0) : static_cast<char*>(*s.data);
    const std::int64_t old_first = global ? 0 : plan_.old_block.displ;
    const std::int64_t new_first = global ? 0 : plan_.new_block.displ;
    char* new_data = global || mode_ != Mode::fresh ? old_data : move.data;
    for (const Transfer& t : plan_.receives) {
      exchange.receive(t.peer, new_data + (t.first - new_first) * row_bytes, t.rows * row_bytes);
    }
    for (const Transfer& t : plan_.sends) {
      exchange.send(t.peer, old_data + (t.first - old_first) * row_bytes, t.rows * row_bytes);
    }
  }

  // Distributed sparse: per piece its row ends (the sender's own ia
  // entries, renumbered by rebase() on arrival), indices and values.
  // In place, the nonzeros arrive at their global offset in the windows and
  // the row ends at their place in the user's array (arranged for them).
  void post_sparse_pieces(Exchange& exchange, const Structure& s, const Move& move) {
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

  [[nodiscard]] std::int64_t kept_old_first() const {
    return plan_.kept.displ - plan_.old_block.displ;
  }
  [[nodiscard]] std::int64_t kept_new_first() const {
    return plan_.kept.displ - plan_.new_block.displ;
  }

  void copy_kept_rows() {
    for (std::size_t i = 0; i < structures_.size(); ++i) {
      const Structure& s = structures_[i];
      const Move& move = moves_[i];
      if (!s.resized_by_malloc()) continue;
      if (!s.sparse()) {
        const std::uint64_t row_bytes = static_cast<std::uint64_t>(row_elements(s)) * s.extent;
        std::memcpy(move.data + kept_new_first() * row_bytes,
                    static_cast<const char*>(*s.data) + kept_old_first() * row_bytes,
                    plan_.kept.count * row_bytes);
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

  // The received pieces' row ends, in the sender's numbering, renumbered
  // (the kept rows' were when they were moved or copied).
  void rebase_received(int* ptr, const Move& move) const {
    ptr[0] = 0;
    for (std::size_t t = 0; t < plan_.receives.size(); ++t) {
      rebase(ptr, plan_.receives[t].first - plan_.new_block.displ, plan_.receives[t].rows,
             move.piece_offset[t] + move.piece_nnz[t]);
    }
  }

  // Mode::fresh and Mode::grow of a distributed structure: the received
  // pieces' row ends are renumbered; fresh arrays replace the old ones.
  void install_block(std::size_t i) {
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

  // In-place sparse: whether the row ends that leave are sent from a copy
  // past both blocks, because the kept rows' move over them while they
  // travel (rows arrive too, or the block's first row moves).
  [[nodiscard]] bool sends_from_copies() const {
    return mode_ == Mode::fresh ||
           (mode_ == Mode::shrink && plan_.kept.count > 0 && kept_old_first() > 0);
  }

  // In-place sparse, step 3: ia stays the user's array and grows where the
  // new block, or the copies of the row ends that leave, need more than
  // malloc gave it (reserve(): never smaller, so memory that rows come back
  // to stays).
  void reserve_pointers_in_place(std::size_t i) {
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
                                           " of " + describe(s, i) + " (" +
                                           std::to_string(entries) + " entries)"};
    }
  }

  // In-place sparse, before anything is posted: the row ends that leave,
  // renumbered for their receivers (who then store them as they arrive),
  // where they are or, if the kept rows' move over them, copied past both
  // blocks. Their nonzeros' place is noted first (pieces share an end).
  void stage_sent_pointers(std::size_t i) {
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
  void arrange_pointers_in_place(std::size_t i) {
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
  void settle_pointers_in_place(const Structure& s) const {
    (*s.ptr)[0] = 0;
    const std::int64_t entries = plan_.new_block.count + 1;
    if (2 * entries < plan_.old_block.count + 1) {
      release_unused(*s.ptr, entries * sizeof(int), malloc_usable_size(*s.ptr));
    }
  }

  // In place: the kept rows stay; the pointer follows the block's first row,
  // and whole pages of the rows that left go back to the system.
  void settle_in_window(const Structure& s) const {
    const std::uint64_t row_bytes = static_cast<std::uint64_t>(row_elements(s)) * s.extent;
    s.window->release_departed(row_bytes, plan_.old_block, plan_.new_block);
    *s.data = s.window->at(plan_.new_block.displ * row_bytes);
  }

  // In-place sparse, at the first redistribution: the block's nonzeros go to
  // their global offset, known now, and the application's buffers are freed.
  static void place_nonzeros(Structure& s, const Move& move) {
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
  static void settle_nonzeros_in_windows(Structure& s, const Move& move) {
    const RowBlock before{move.old_nnz, move.first_before}, after{move.new_nnz, move.first_after};
    s.index_window->release_departed(sizeof(int), before, after);
    s.window->release_departed(s.extent, before, after);
    *s.idx = reinterpret_cast<int*>(s.index_window->at(move.first_after * sizeof(int)));
    *s.data = s.window->at(move.first_after * s.extent);
    s.first_nonzero = move.first_after;
  }

  // Mode::shrink: the new block is the kept rows (or nothing); they move
  // to the front, now that the rows around them are sent.
  void compact_kept_rows(std::size_t i) {
    const Structure& s = structures_[i];
    const Move& move = moves_[i];
    const std::int64_t kept = plan_.kept.count, first = kept_old_first();
    const std::int64_t old_rows = plan_.old_block.count, new_rows = plan_.new_block.count;
    if (!s.sparse()) {
      const std::uint64_t row_bytes = static_cast<std::uint64_t>(row_elements(s)) * s.extent;
      char* data = static_cast<char*>(*s.data);
      if (kept > 0 && first > 0) std::memmove(data, data + first * row_bytes, kept * row_bytes);
      shrink(s.data, new_rows * row_bytes, old_rows * row_bytes);
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

}  // namespace

RedistributionStats DataRegistry::redistribute(std::span<const RowBlock> from,
                                               std::span<const RowBlock> to, MPI_Comm comm) {
  const double start = wall_seconds();
  if (comm == MPI_COMM_NULL) invalid("redistribute: the communicator is MPI_COMM_NULL");
  int inter = 0, rank = 0, nprocs = 0;
  check_mpi(PMPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  if (inter != 0) invalid("redistribute: the communicator must be an intracommunicator");
  check_mpi(PMPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(PMPI_Comm_size(comm, &nprocs), "MPI_Comm_size");

  Redistribution redistribution(structures_, from, to, comm, rank, nprocs);
  redistribution.agree_on_arguments(check_local(from, to, rank, nprocs));
  redistribution.agree_on_nonzeros();
  redistribution.agree_on_memory();
  RedistributionStats stats = redistribution.move_rows(max_message_bytes_);
  local_block_ = redistribution.new_block();
  stats.seconds = wall_seconds() - start;
  return stats;
}

}  // namespace flexmpi
