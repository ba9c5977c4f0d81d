#include "redistribution/buffers.hpp"

#include <sys/mman.h>
#include <unistd.h>

namespace flexmpi::redistribution {

Mode mode_of(const TransferPlan& plan) {
  if (plan.receives.empty()) return plan.sends.empty() ? Mode::unchanged : Mode::shrink;
  return plan.sends.empty() ? Mode::grow : Mode::fresh;
}

void release_all(std::vector<Move>& moves) noexcept {
  for (Move& move : moves) move.release();
}

void advise_huge_pages(void* block, std::uint64_t bytes) noexcept {
  constexpr std::uint64_t kHugePage = 2u << 20;
  if (block == nullptr || bytes < 2 * kHugePage) return;
  const auto start = reinterpret_cast<std::uintptr_t>(block);
  const std::uintptr_t first = (start + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t last = (start + bytes) & ~(kHugePage - 1);
  if (last > first) {
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice only
  }
}

void release_unused(void* array, std::uint64_t used, std::uint64_t capacity) noexcept {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<std::uintptr_t>(array);
  const std::uintptr_t first = (start + used + page - 1) / page * page;
  const std::uintptr_t last = (start + capacity) / page * page;
  if (array == nullptr || last <= first) return;
  // MADV_FREE needs Linux 4.5; before it, the pages go at once.
  if (madvise(reinterpret_cast<void*>(first), last - first, MADV_FREE) != 0) {
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  }
}

bool anyone_receives(std::span<const RowBlock> from, std::span<const RowBlock> to) {
  for (std::size_t p = 0; p < from.size(); ++p) {
    const std::int64_t kept = std::min(from[p].displ + from[p].count, to[p].displ + to[p].count) -
                              std::max(from[p].displ, to[p].displ);
    if (to[p].count > std::max<std::int64_t>(kept, 0)) return true;
  }
  return false;
}

void rebase(int* ptr, std::int64_t first, std::int64_t rows, std::int64_t end) {
  if (rows == 0) return;
  move_pointers(ptr + first + 1, ptr + first + 1, rows, end - ptr[first + rows]);
}

namespace {

constexpr std::int64_t kChunk = 1024;

// A chunk of row ends moved between ranges that do not overlap, or
// renumbered where they are: fixed-length loops the compiler vectorises.
void move_chunk(int* __restrict to, const int* __restrict from, int shift) {
  for (std::int64_t k = 0; k < kChunk; ++k) to[k] = from[k] + shift;
}
void shift_chunk(int* ends, int shift) {
  for (std::int64_t k = 0; k < kChunk; ++k) ends[k] += shift;
}

}  // namespace

void move_pointers(int* to, const int* from, std::int64_t rows, std::int64_t delta) {
  if (rows <= 0 || (to == from && delta == 0)) return;
  // Every moved end lies in [0, the new block's nonzeros], which fits an int
  // (checked before anything moves), so the shift is done in int.
  const int shift = static_cast<int>(delta);
  std::int64_t k = 0;
  if (to == from) {
    for (; k + kChunk <= rows; k += kChunk) shift_chunk(to + k, shift);
    for (; k < rows; ++k) to[k] += shift;
    return;
  }
  // Chunks of ranges at least a chunk apart do not overlap: front to back
  // when the ends move down, back to front when they move up.
  const bool chunks = (to > from ? to - from : from - to) >= kChunk;
  if (to < from) {
    if (chunks) {
      for (; k + kChunk <= rows; k += kChunk) move_chunk(to + k, from + k, shift);
    }
    for (; k < rows; ++k) to[k] = from[k] + shift;
    return;
  }
  std::int64_t end = rows;
  if (chunks) {
    for (; end >= kChunk; end -= kChunk) move_chunk(to + end - kChunk, from + end - kChunk, shift);
  }
  for (k = end - 1; k >= 0; --k) to[k] = from[k] + shift;
}

}  // namespace flexmpi::redistribution
