#include "redistribution/buffers.hpp"

#include <sys/mman.h>

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
  const std::int64_t delta = end - ptr[first + rows];
  for (std::int64_t k = 1; k <= rows; ++k)
    ptr[first + k] = static_cast<int>(ptr[first + k] + delta);
}

}  // namespace flexmpi::redistribution
