// Decompositions for redistribution tests: who owns a row, and random ones: contiguous blocks of
// random sizes (empty ones included) covering `rows`, in rank order or, every
// other time, shuffled (any rank order is a decomposition).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "base/row_block.hpp"

namespace flexmpi::test {

inline Decomposition random_decomposition(std::int64_t rows, int nprocs, std::mt19937_64& random) {
  std::vector<std::int64_t> cuts = {0, rows};
  for (int p = 1; p < nprocs; ++p) {
    cuts.push_back(static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(rows + 1)));
  }
  std::sort(cuts.begin(), cuts.end());
  Decomposition blocks;
  for (int p = 0; p < nprocs; ++p) blocks.push_back({cuts[p + 1] - cuts[p], cuts[p]});
  if (random() % 2 == 0) std::shuffle(blocks.begin(), blocks.end(), random);
  return blocks;
}

/// The rank whose block holds global row `row`, -1 if none does.
inline int owner(const Decomposition& blocks, std::int64_t row) {
  for (std::size_t p = 0; p < blocks.size(); ++p) {
    if (row >= blocks[p].displ && row < blocks[p].displ + blocks[p].count)
      return static_cast<int>(p);
  }
  return -1;
}

}  // namespace flexmpi::test
