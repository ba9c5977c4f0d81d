// The halo exchange of a block of rows with ghost rows (thesis 4.5.2: the
// one-dimensional block decomposition; a stencil's neighbours are the rows
// just before and after a block). A process's buffer holds, in order, h ghost
// rows before its block, the block's rows, and h ghost rows after it; buffer
// row i is global row displ - h + i. An exchange fills every ghost row that
// is a row of the decomposition from the process that owns it: a neighbour's
// block shorter than h rows leaves the rest to the blocks beyond it, so the
// ghost rows may come from several processes. Ghost rows outside the rows
// (before the first block, after the last) are left untouched, and a process
// with an empty block neither sends nor receives.
//
// The messages are computed once per decomposition (HaloPlan) and posted
// as non-blocking receives, then sends, completed by one Waitall: the same
// messages a hand-written MPI_Sendrecv pair sends, without ordering them.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/row_block.hpp"

namespace flexmpi {

/// Tags of the halo messages on the library's communicator, apart from the
/// redistribution's (32000-32001): rows for the receiver's ghost rows
/// before its block, and for those after it.
inline constexpr int kHaloBeforeTag = 32002;
inline constexpr int kHaloAfterTag = 32003;

/// One message of a halo exchange: `rows` rows starting at buffer row
/// `first_row` (row 0 is the first ghost row before the block), to or from
/// `peer`, with `tag` saying which of the receiver's ghost regions it fills.
struct HaloMessage {
  int peer = 0;
  std::int64_t first_row = 0;
  std::int64_t rows = 0;
  int tag = kHaloBeforeTag;

  friend bool operator==(const HaloMessage&, const HaloMessage&) = default;
};

/// Every message of one process's halo exchange, in rank order of the peers.
struct HaloPlan {
  std::vector<HaloMessage> receives;
  std::vector<HaloMessage> sends;
};

/// The messages of `rank` in the decomposition `blocks` (one block per
/// process, tiling the rows in any rank order) with `ghost_rows` ghost rows
/// on each side of every block. Throws Error(invalid_argument) for a
/// negative ghost_rows or a rank outside blocks.
HaloPlan plan_halo(std::span<const RowBlock> blocks, int rank, std::int64_t ghost_rows);

/// The exchange of one plan on rows of `row_bytes` bytes over `comm` (an
/// intracommunicator whose ranks are the plan's). start() posts the
/// messages on a buffer laid out as at the top of this file and returns;
/// finish() waits for them. Until finish() the buffer's block and ghost rows
/// belong to the exchange.
class HaloExchange {
 public:
  /// Throws Error(invalid_argument) if a message exceeds INT_MAX bytes.
  HaloExchange(HaloPlan plan, std::size_t row_bytes, MPI_Comm comm);
  /// Completes an exchange still started (a process that ends with one).
  ~HaloExchange();
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  /// Posts the receives, then the sends. Error(bad_state) if started.
  void start(void* buffer);
  /// Waits for every message of start(). Error(bad_state) if not started.
  void finish();
  [[nodiscard]] bool started() const { return started_; }
  [[nodiscard]] const HaloPlan& plan() const { return plan_; }
  [[nodiscard]] std::size_t row_bytes() const { return row_bytes_; }
  [[nodiscard]] MPI_Comm comm() const { return comm_; }

 private:
  HaloPlan plan_;
  std::size_t row_bytes_;
  MPI_Comm comm_;
  std::vector<MPI_Request> requests_;
  bool started_ = false;
};

/// The halo exchanges of the registered structures, one per registered
/// address: each is built at its first use and rebuilt when the
/// decomposition, the process set or the structure's rows change.
class HaloExchanges {
 public:
  /// What an exchange depends on besides the structure.
  struct Layout {
    std::int64_t ghost_rows = 0;
    std::size_t row_bytes = 0;
    MPI_Comm comm = MPI_COMM_NULL;
    int rank = 0;
    /// The process set's (Context::generation): a freed communicator's
    /// handle may come back as the next one's.
    unsigned long generation = 0;
    friend bool operator==(const Layout&, const Layout&) = default;
  };

  /// The exchange of the structure registered at `address` for `blocks`
  /// and `layout`, rebuilt if either changed. Error(bad_state) if it must be
  /// rebuilt while started.
  HaloExchange& prepare(const void* address, std::span<const RowBlock> blocks,
                        const Layout& layout);
  /// The exchange of `address` if it was prepared, else nullptr.
  [[nodiscard]] HaloExchange* find(const void* address);
  /// Whether any exchange is started (the rows may not move meanwhile).
  [[nodiscard]] bool any_started() const;
  /// Forgets `address`'s exchange (completing it if started).
  void forget(const void* address);
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    const void* address = nullptr;
    Decomposition blocks;
    Layout layout;
    std::unique_ptr<HaloExchange> exchange;
  };
  std::vector<Entry> entries_;
};

}  // namespace flexmpi
