// Who sends which rows to whom when a one-dimensional block decomposition
// changes (thesis 4.5.2-4.5.3, Algorithm 4 line 2, "calculatePartitions").
//
// Pure arithmetic on RowBlocks, no MPI: the data registry turns a plan into
// messages, and the serial tests check it against a row-by-row brute force.
// Only rows that change owner appear in a plan, each exactly once: the rows
// a process owns before and after stay where they are (`kept`).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/row_block.hpp"

namespace flexmpi {

/// Rows [first, first + rows) that go to (or come from) process `peer`.
struct Transfer {
  int peer = 0;
  std::int64_t first = 0;
  std::int64_t rows = 0;

  friend bool operator==(const Transfer&, const Transfer&) = default;
};

/// What one process does when the decomposition changes from `from` to `to`.
struct TransferPlan {
  RowBlock old_block;              ///< from[rank]
  RowBlock new_block;              ///< to[rank]
  RowBlock kept;                   ///< old_block ∩ new_block (count 0 if disjoint)
  std::vector<Transfer> sends;     ///< old_block \ kept, by increasing row
  std::vector<Transfer> receives;  ///< new_block \ kept, by increasing row
};

/// Empty if `blocks` is a decomposition of [0, size) over nprocs processes:
/// exactly nprocs blocks, non-negative counts, tiling the rows in any rank
/// order (rank 1 may own the rows before rank 0's). Otherwise a message that
/// names `what`, the offending block and the rows at fault (a gap, an
/// overlap, rows beyond `size`).
std::string check_decomposition(std::span<const RowBlock> blocks, std::int64_t size, int nprocs,
                                std::string_view what);

/// The plan of process `rank`; `from` and `to` must be valid decompositions
/// of the same rows (check_decomposition). O(p + peers) when the blocks are
/// in rank order (O(p log p) otherwise): the peers of a block are found by
/// binary search in start order.
TransferPlan plan_transfers(std::span<const RowBlock> from, std::span<const RowBlock> to, int rank);

/// Number of messages that carry `bytes` bytes when none may exceed
/// `max_message_bytes` (> 0); 0 bytes need no message.
std::uint64_t message_count(std::uint64_t bytes, std::uint64_t max_message_bytes);

}  // namespace flexmpi
