#include "base/row_block.hpp"

#include "flexmpi/error.hpp"

namespace flexmpi {

Decomposition block_decomposition(std::int64_t size, int nprocs) {
  if (nprocs < 1 || size < 0)
    throw Error(Errc::invalid_argument, "block_decomposition: bad size or nprocs");
  Decomposition blocks(static_cast<std::size_t>(nprocs));
  const std::int64_t base = size / nprocs;
  const std::int64_t extra = size % nprocs;
  std::int64_t displ = 0;
  for (int p = 0; p < nprocs; ++p) {
    blocks[p] = {base + (p < extra ? 1 : 0), displ};
    displ += blocks[p].count;
  }
  return blocks;
}

}  // namespace flexmpi
