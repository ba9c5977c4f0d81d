// The memory of a redistribution: how a process's arrays change (grow,
// shrink, fresh), the new arrays of one structure until they are installed,
// and the allocation helpers that keep page faults and copies down.
#pragma once

#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "base/row_block.hpp"
#include "redistribution/transfer_plan.hpp"

namespace flexmpi::redistribution {

// How this process's blocks change. It is the same for every distributed
// structure (they share one decomposition), and decides where the rows go.
enum class Mode {
  unchanged,  // no row leaves or arrives
  shrink,     // rows only leave: compact the old arrays in place once they are sent
  grow,       // rows only arrive: enlarge the old arrays (realloc) and receive into them
  fresh,      // rows leave and arrive: new arrays beside the old ones, which are still sent from
};

Mode mode_of(const TransferPlan& plan);

// One structure's part of a redistribution on this process.
struct Move {
  // Mode::fresh: the new arrays, freed if the call fails before they are installed.
  char* data = nullptr;  // vector/dense data or sparse values
  int* ptr = nullptr;    // sparse pointers (new count + 1)
  int* idx = nullptr;    // sparse indices
  // Distributed sparse only, in nonzeros:
  std::int64_t old_nnz = 0;             // local nonzeros before
  std::int64_t new_nnz = 0;             // local nonzeros after
  std::int64_t kept_nnz = 0;            // of the rows kept
  std::int64_t kept_offset = 0;         // where the kept rows start in the new arrays
  std::vector<std::int64_t> piece_nnz;  // of each plan.receives entry
  std::vector<std::int64_t> piece_offset;
  // In-place sparse, per plan.sends entry: its first nonzero (old local
  // offset) and nonzero count, what turns its row ends into the receiver's
  // numbering, and where in the pointers array the row ends so renumbered
  // are sent from (where they were, or copied past both blocks when the
  // kept rows move over them while they travel).
  std::vector<std::int64_t> sent_begin;
  std::vector<std::int64_t> sent_nnz;
  std::vector<std::int64_t> send_shift;
  std::vector<std::int64_t> sent_pointers;
  // In-place sparse only: global offsets of the old and the new block's
  // first nonzero, where they are in the windows.
  std::int64_t first_before = 0;
  std::int64_t first_after = 0;

  void release() noexcept {
    std::free(data);
    std::free(ptr);
    std::free(idx);
    data = nullptr;
    ptr = nullptr;
    idx = nullptr;
  }
};

void release_all(std::vector<Move>& moves) noexcept;

// Rows that arrive land in memory never touched before, and each 4 KiB page
// costs a fault (~2.5 us on the reference VM: a whole 32 MiB block moving
// took 3.5x a bare MPI_Alltoallv into warm buffers). Where transparent huge
// pages are on request (Debian's default "madvise"), asking for them for a
// large block makes that one fault per 2 MiB. The block stays the user's
// malloc'ed memory; the advice only covers its 2 MiB-aligned interior.
void advise_huge_pages(void* block, std::uint64_t bytes) noexcept;

// malloc that never asks for 0 bytes (malloc(0) may return nullptr).
template <class T>
bool allocate(T** pointer, std::uint64_t bytes) {
  *pointer = static_cast<T*>(std::malloc(std::max<std::uint64_t>(bytes, 1)));
  advise_huge_pages(*pointer, bytes);
  return *pointer != nullptr;
}

// Enlarges the user's array with realloc: no copy, and no page touched, for
// the rows it already holds (glibc keeps the block, extends it, or remaps
// its pages). On failure the array is left as it was.
template <class T>
bool grow(T** pointer, std::uint64_t bytes) {
  void* larger = std::realloc(*pointer, std::max<std::uint64_t>(bytes, 1));
  if (larger == nullptr) return false;
  *pointer = static_cast<T*>(larger);
  advise_huge_pages(larger, bytes);
  return true;
}

// Makes room for `bytes` in the user's array, with realloc only where
// malloc gave it fewer (malloc_usable_size): a realloc to fewer bytes than
// it holds would give back the pages that the rows of a later call return to.
template <class T>
bool reserve(T** pointer, std::uint64_t bytes) {
  if (*pointer != nullptr && malloc_usable_size(*pointer) >= bytes) return true;
  return grow(pointer, bytes);
}

// A block that lost rows keeps its memory while it still fills half of it:
// load balancing moves rows back and forth (thesis 5.2), and memory given
// back to the system costs a page fault per page when rows return. Below
// half, realloc gives the rest back (so at most 2x is ever held).
template <class T>
void shrink(T** pointer, std::uint64_t bytes, std::uint64_t old_bytes) {
  if (*pointer == nullptr || bytes >= old_bytes / 2) return;
  if (void* smaller = std::realloc(*pointer, std::max<std::uint64_t>(bytes, 1))) {
    *pointer = static_cast<T*>(smaller);
  }
}

// Gives the whole pages of `array` between `used` and `capacity` bytes back
// to the system with MADV_FREE, as an address window does for rows that
// left: the array keeps its size, and the pages cost nothing to touch again
// where they were not reclaimed yet (rows come back). Nothing below a page.
void release_unused(void* array, std::uint64_t used, std::uint64_t capacity) noexcept;

// Whether some process receives rows, i.e. may allocate (all processes
// know both decompositions, so they all answer the same).
bool anyone_receives(std::span<const RowBlock> from, std::span<const RowBlock> to);

// Received row pointers hold the ends of the sender's rows in the sender's
// numbering (no packing on the sender). A piece whose rows occupy new local
// rows [first, first + rows) and whose nonzeros end at `end` in the new
// arrays is renumbered by one shift.
void rebase(int* ptr, std::int64_t first, std::int64_t rows, std::int64_t end);

// `rows` row ends moved from `from` to `to` (the ranges may overlap) and
// renumbered by `delta` in the same pass: the rows a process keeps, when its
// block's first row or the nonzeros before them change.
void move_pointers(int* to, const int* from, std::int64_t rows, std::int64_t delta);

}  // namespace flexmpi::redistribution
