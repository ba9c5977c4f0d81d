#include "redistribution/transfer_plan.hpp"

#include <algorithm>

namespace flexmpi {
namespace {

std::int64_t end_of(const RowBlock& block) { return block.displ + block.count; }

// Blocks of `blocks` overlapping `range`, as Transfers, skipping process
// `self` (its part is the kept block). Blocks are contiguous and sorted, so
// the first candidate is found by binary search on the block ends.
std::vector<Transfer> overlaps(std::span<const RowBlock> blocks, const RowBlock& range, int self) {
  std::vector<Transfer> result;
  if (range.count == 0) return result;
  const auto first =
      std::upper_bound(blocks.begin(), blocks.end(), range.displ,
                       [](std::int64_t row, const RowBlock& block) { return row < end_of(block); });
  for (auto it = first; it != blocks.end() && it->displ < end_of(range); ++it) {
    const std::int64_t begin = std::max(it->displ, range.displ);
    const std::int64_t end = std::min(end_of(*it), end_of(range));
    const int peer = static_cast<int>(it - blocks.begin());
    if (end > begin && peer != self) result.push_back({peer, begin, end - begin});
  }
  return result;
}

}  // namespace

std::string check_decomposition(std::span<const RowBlock> blocks, std::int64_t size, int nprocs,
                                std::string_view what) {
  const std::string name(what);
  if (blocks.size() != static_cast<std::size_t>(nprocs)) {
    return name + " has " + std::to_string(blocks.size()) + " blocks for " +
           std::to_string(nprocs) + " processes (one block per process expected)";
  }
  std::int64_t next = 0;  // first row not yet covered
  for (std::size_t p = 0; p < blocks.size(); ++p) {
    const RowBlock& block = blocks[p];
    const std::string which = name + ": block of rank " + std::to_string(p) + " {count " +
                              std::to_string(block.count) + ", displ " +
                              std::to_string(block.displ) + "}";
    if (block.count < 0) return which + " has a negative count";
    if (block.displ < next) {
      return which + " overlaps the previous blocks, which end at row " + std::to_string(next);
    }
    if (block.displ > next) {
      return which + " leaves a gap: rows " + std::to_string(next) + ".." +
             std::to_string(block.displ - 1) + " belong to no process";
    }
    if (block.count > size - next) {
      return which + " ends beyond the " + std::to_string(size) + " rows of the structures";
    }
    next += block.count;
  }
  if (next != size) {
    return name + ": the blocks cover " + std::to_string(next) + " rows, the structures have " +
           std::to_string(size);
  }
  return {};
}

TransferPlan plan_transfers(std::span<const RowBlock> from, std::span<const RowBlock> to,
                            int rank) {
  TransferPlan plan;
  plan.old_block = from[static_cast<std::size_t>(rank)];
  plan.new_block = to[static_cast<std::size_t>(rank)];
  const std::int64_t begin = std::max(plan.old_block.displ, plan.new_block.displ);
  const std::int64_t end = std::min(end_of(plan.old_block), end_of(plan.new_block));
  plan.kept = end > begin ? RowBlock{end - begin, begin} : RowBlock{0, plan.new_block.displ};
  // What we owned goes to its new owners; what we will own comes from its old ones.
  plan.sends = overlaps(to, plan.old_block, rank);
  plan.receives = overlaps(from, plan.new_block, rank);
  return plan;
}

std::uint64_t message_count(std::uint64_t bytes, std::uint64_t max_message_bytes) {
  return bytes / max_message_bytes + (bytes % max_message_bytes != 0 ? 1 : 0);
}

}  // namespace flexmpi
