// A contiguous block of global rows [displ, displ + count): the unit of the
// one-dimensional decompositions flexmpi balances and redistributes
// (thesis 4.5.2). 64-bit so that global sizes and nonzero counts fit.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

namespace flexmpi {

struct RowBlock {
  std::int64_t count = 0;
  std::int64_t displ = 0;

  friend bool operator==(const RowBlock&, const RowBlock&) = default;
};

/// "{count, displ}", for messages and test output.
inline std::ostream& operator<<(std::ostream& out, const RowBlock& block) {
  return out << '{' << block.count << ", " << block.displ << '}';
}

/// One block per process, in rank order.
using Decomposition = std::vector<RowBlock>;

/// The block decomposition of `size` rows over `nprocs` processes; the first
/// size % nprocs processes get one row more.
Decomposition block_decomposition(std::int64_t size, int nprocs);

}  // namespace flexmpi
