// The memory of a structure registered with Scheme::distributed_in_place:
// one reserved range of virtual addresses as large as the WHOLE structure,
// in which each process keeps its block at the block's global offset. Rows a
// process keeps never move when the decomposition changes; arriving rows are
// received straight into their global place, and the pages of rows that
// left are given back. Physical memory is only what the block touches.
#pragma once

#include <cstdint>
#include <string>

#include "base/row_block.hpp"

namespace flexmpi::redistribution {

class AddressWindow {
 public:
  /// Reserves `bytes` of address space (no memory until touched). Throws
  /// Error(out_of_memory), naming `what`, if the system refuses.
  AddressWindow(std::uint64_t bytes, const std::string& what);
  ~AddressWindow();
  AddressWindow(const AddressWindow&) = delete;
  AddressWindow& operator=(const AddressWindow&) = delete;

  [[nodiscard]] char* at(std::uint64_t offset) const { return base_ + offset; }
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }

  /// Gives the whole pages inside [begin, end) (byte offsets) back to the
  /// system: MADV_FREE, so that pages not yet reclaimed cost nothing when
  /// rows come back (load balancing moves rows back and forth).
  void release(std::uint64_t begin, std::uint64_t end) const noexcept;
  /// When a block of elements of `element_bytes` moves from `before` to
  /// `after` (element ranges: rows, or a sparse block's nonzeros), releases
  /// the whole pages of the elements that left.
  void release_departed(std::uint64_t element_bytes, const RowBlock& before,
                        const RowBlock& after) const noexcept;

 private:
  char* base_ = nullptr;
  std::uint64_t bytes_ = 0;
};

}  // namespace flexmpi::redistribution
