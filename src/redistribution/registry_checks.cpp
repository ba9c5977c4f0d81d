// The checks one process makes before a redistribution
// (DataRegistry::check_local): the decompositions, and every registered
// structure's pointers and buffers against its registration, so that bad
// input is refused on every process before anything is written.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flexmpi/error.hpp"
#include "redistribution/data_registry.hpp"
#include "redistribution/structure_checks.hpp"
#include "redistribution/transfer_plan.hpp"

namespace flexmpi {

using detail::Structure;
using namespace redistribution;  // NOLINT(google-build-using-namespace)

namespace {

// An in-place structure's pointer is the old block's first row in its window
// (sparse: its ja and values pointers the block's first nonzero, once placed).
std::string check_window_pointer(const Structure& s, const RowBlock& old_block,
                                 const std::string& name) {
  if (!s.window || old_block.count == 0) return {};
  const char* const advice =
      " (an in-place buffer must not be reallocated or replaced; or the old block is not the "
      "one this process holds)";
  if (s.sparse()) {
    const std::optional<std::int64_t> first = s.first_nonzero;
    if (!first || (*s.idx == reinterpret_cast<int*>(s.index_window->at(*first * sizeof(int))) &&
                   *s.data == s.window->at(*first * s.extent))) {
      return {};
    }
    return name + ": the " + indices_name(s) + " or values pointer is not where flexmpi put " +
           "nonzero " + std::to_string(*first) + advice;
  }
  if (*s.data == s.window->at(old_block.displ * s.row_bytes())) return {};
  return name + ": the pointer is not where flexmpi put row " + std::to_string(old_block.displ) +
         advice;
}

}  // namespace

namespace {

// A vector or dense structure's pointer and buffer, on a process that holds
// `old_block` of a distributed one (every row of a replicated one).
std::string check_rows_buffer(const Structure& s, const RowBlock& old_block,
                              const std::string& name) {
  const std::int64_t rows_held = s.distributed() ? old_block.count : s.size;
  if (rows_held > 0 && *s.data == nullptr) {
    return name + ": the data pointer is null on a process that holds " +
           std::to_string(rows_held) + " rows";
  }
  std::string error = check_window_pointer(s, old_block, name);
  if (error.empty() && !s.window) error = check_buffer_size(s, rows_held, name);
  return error;
}

// A sparse structure's three arrays on a process that holds `old_block`.
std::string check_sparse_arrays(const Structure& s, const RowBlock& old_block,
                                const std::string& name) {
  const int* ptr = *s.ptr;
  const std::int64_t rows_held = s.distributed() ? old_block.count : s.size;
  if (ptr == nullptr) {
    if (rows_held > 0) {
      return name + ": the " + pointers_name(s) + " pointer is null on a process that holds " +
             std::to_string(rows_held) + " " + rows_name(s);
    }
  } else {
    std::string error = check_pointers_array(ptr, rows_held, name + ": the " + pointers_name(s));
    if (!error.empty()) return error;
  }
  const std::int64_t held_nnz = ptr == nullptr ? 0 : ptr[rows_held];
  if (!s.distributed() && held_nnz != s.nnz) {
    return name + ": the " + pointers_name(s) + " end at " + std::to_string(held_nnz) +
           " but the matrix was registered with nnz " + std::to_string(s.nnz);
  }
  if (held_nnz > s.nnz) {
    return name + ": this process holds " + std::to_string(held_nnz) +
           " nonzeros, more than the registered nnz " + std::to_string(s.nnz);
  }
  if (held_nnz > 0 && (*s.idx == nullptr || *s.data == nullptr)) {
    return name + ": the " + (*s.idx == nullptr ? indices_name(s) : "values") +
           " pointer is null on a process that holds " + std::to_string(held_nnz) + " nonzeros";
  }
  return check_window_pointer(s, old_block, name);
}

// Two structures on one buffer would be moved (and freed) twice.
std::string check_distinct_buffers(std::span<const Structure> structures) {
  std::vector<std::pair<const void*, std::size_t>> buffers;
  for (std::size_t i = 0; i < structures.size(); ++i) {
    const Structure& s = structures[i];
    for (const void* buffer : {s.ptr == nullptr ? nullptr : static_cast<const void*>(*s.ptr),
                               s.idx == nullptr ? nullptr : static_cast<const void*>(*s.idx),
                               static_cast<const void*>(*s.data)}) {
      if (buffer != nullptr) buffers.emplace_back(buffer, i);
    }
  }
  std::sort(buffers.begin(), buffers.end());
  for (std::size_t k = 1; k < buffers.size(); ++k) {
    if (buffers[k].first == buffers[k - 1].first) {
      const std::size_t a = buffers[k - 1].second, b = buffers[k].second;
      return describe(structures[a], a) +
             (a == b ? " uses one buffer for two of its arrays"
                     : " and " + describe(structures[b], b) + " share a buffer");
    }
  }
  return {};
}

}  // namespace

std::string DataRegistry::check_local(std::span<const RowBlock> from, std::span<const RowBlock> to,
                                      int rank, int nprocs) const {
  // With nothing registered, the decompositions must still agree with each
  // other: the rows are those the old blocks reach, in whatever rank order.
  std::int64_t rows = rows_;
  if (rows < 0) {
    rows = 0;
    constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max();
    for (const RowBlock& block : from) {
      if (block.count <= 0 || block.displ < 0) continue;  // check_decomposition names them
      rows = std::max(rows, block.count > most - block.displ ? most : block.displ + block.count);
    }
  }
  std::string error = check_decomposition(from, rows, nprocs, "from (the old decomposition)");
  if (error.empty()) error = check_decomposition(to, rows, nprocs, "to (the new decomposition)");
  if (!error.empty()) return error;
  const RowBlock& old_block = from[static_cast<std::size_t>(rank)];
  for (std::size_t i = 0; i < structures_.size() && error.empty(); ++i) {
    const Structure& s = structures_[i];
    error = s.sparse() ? check_sparse_arrays(s, old_block, describe(s, i))
                       : check_rows_buffer(s, old_block, describe(s, i));
  }
  return error.empty() ? check_distinct_buffers(structures_) : error;
}

}  // namespace flexmpi
