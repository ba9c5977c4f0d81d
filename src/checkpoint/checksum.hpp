// The checksum of a checkpoint's datasets: computed by each process over the
// bytes it writes or reads, summed over processes, and independent of how
// the rows were split among them, so a file written by 3 processes is
// verified by the 4 that read it.
//
// A dataset is a stream of bytes; word g is its bytes 8g .. 8g+7 (little
// endian, missing bytes zero) and the checksum is sum_g (2g + 1) * word_g
// modulo 2^64. Each byte contributes (2g + 1) * byte * 2^(8k) on its own, so
// the contributions of disjoint byte ranges add up to the whole: a process
// computes its ranges, an MPI_SUM of uint64 gives the dataset's. Every
// weight is odd, so any one flipped bit changes the sum; a moved block
// changes its weights. (HDF5's own Fletcher32 filter would need chunked
// datasets and a pass per chunk that does not compose across processes.)
#pragma once

#include <cstddef>
#include <cstdint>

namespace flexmpi::checkpoint {

/// The checksum contribution of `bytes` bytes at `data`, which sit at byte
/// `offset` of their dataset.
[[nodiscard]] std::uint64_t checksum_part(const void* data, std::size_t bytes,
                                          std::uint64_t offset) noexcept;

}  // namespace flexmpi::checkpoint
