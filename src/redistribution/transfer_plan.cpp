#include "redistribution/transfer_plan.hpp"

#include <algorithm>
#include <vector>

namespace flexmpi {
namespace {

std::int64_t end_of(const RowBlock& block) { return block.displ + block.count; }

// The end of the rows `block` shares with rows [0, next), without
// overflowing on a huge count.
std::int64_t shared_end(const RowBlock& block, std::int64_t next) {
  return block.count < next - block.displ ? end_of(block) : next;
}

// The ranks of `blocks` by increasing first row (an empty block before the
// block that starts at the same row): a tiling may list its blocks in any
// rank order. O(p) when they are in rank order, as they usually are.
std::vector<int> ranks_by_start(std::span<const RowBlock> blocks) {
  std::vector<int> order(blocks.size());
  for (std::size_t p = 0; p < order.size(); ++p) order[p] = static_cast<int>(p);
  const auto earlier = [&](int a, int b) {
    const RowBlock& x = blocks[static_cast<std::size_t>(a)];
    const RowBlock& y = blocks[static_cast<std::size_t>(b)];
    return x.displ != y.displ ? x.displ < y.displ : x.count < y.count;
  };
  if (!std::is_sorted(order.begin(), order.end(), earlier)) {
    std::stable_sort(order.begin(), order.end(), earlier);
  }
  return order;
}

// Blocks of `blocks` overlapping `range`, as Transfers by increasing row,
// skipping process `self` (its part is the kept block). The blocks tile the
// rows, so in start order the first candidate is found by binary search on
// the block ends.
std::vector<Transfer> overlaps(std::span<const RowBlock> blocks, const RowBlock& range, int self) {
  std::vector<Transfer> result;
  if (range.count == 0) return result;
  const std::vector<int> order = ranks_by_start(blocks);
  const auto block = [&](int rank) -> const RowBlock& {
    return blocks[static_cast<std::size_t>(rank)];
  };
  const auto first =
      std::upper_bound(order.begin(), order.end(), range.displ,
                       [&](std::int64_t row, int rank) { return row < end_of(block(rank)); });
  for (auto it = first; it != order.end() && block(*it).displ < end_of(range); ++it) {
    const std::int64_t begin = std::max(block(*it).displ, range.displ);
    const std::int64_t end = std::min(end_of(block(*it)), end_of(range));
    if (end > begin && *it != self) result.push_back({*it, begin, end - begin});
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
  const auto describe = [&](int rank) {
    const RowBlock& block = blocks[static_cast<std::size_t>(rank)];
    return "the block of rank " + std::to_string(rank) + " {count " + std::to_string(block.count) +
           ", displ " + std::to_string(block.displ) + "}";
  };
  for (int rank = 0; rank < nprocs; ++rank) {
    const RowBlock& block = blocks[static_cast<std::size_t>(rank)];
    if (block.count < 0) return name + ": " + describe(rank) + " has a negative count";
    if (block.displ < 0) return name + ": " + describe(rank) + " starts before row 0";
  }
  // In start order, each block must begin where the ones before it ended.
  std::int64_t next = 0;  // first row not yet covered
  int previous = -1;      // the rank whose block ends at `next`
  for (const int rank : ranks_by_start(blocks)) {
    const RowBlock& block = blocks[static_cast<std::size_t>(rank)];
    if (block.displ < next) {
      return name + ": " + describe(rank) + " overlaps " + describe(previous) + " (rows " +
             std::to_string(block.displ) + ".." + std::to_string(shared_end(block, next) - 1) +
             " are in both)";
    }
    if (block.displ > next) {
      return name + ": rows " + std::to_string(next) + ".." + std::to_string(block.displ - 1) +
             " belong to no process (a gap before " + describe(rank) + ")";
    }
    if (block.count > size - next) {
      return name + ": " + describe(rank) + " ends beyond the " + std::to_string(size) +
             " rows of the structures";
    }
    next += block.count;
    if (block.count > 0) previous = rank;
  }
  if (next != size) {
    return name + ": the blocks cover " + std::to_string(next) + " rows, the structures have " +
           std::to_string(size) + " (rows " + std::to_string(next) + ".." +
           std::to_string(size - 1) + " belong to no process)";
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
