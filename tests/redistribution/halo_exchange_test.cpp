// The halo exchange on real processes: every ghost row that is a row of the
// decomposition holds its owner's values afterwards, the others keep what
// they held, on even, uneven (blocks shorter than the ghost rows), empty and
// rank-shuffled decompositions, blocking and started/finished.
#include "redistribution/halo_exchange.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "../support/random_decomposition.hpp"

namespace flexmpi {
namespace {

using test::random_decomposition;

constexpr double kUntouched = -1.0;

double value(std::int64_t row, std::int64_t column) {
  return static_cast<double>(row) * 1000.0 + static_cast<double>(column) + 0.5;
}

struct Comm {
  Comm() { MPI_Comm_dup(MPI_COMM_WORLD, &comm); }
  ~Comm() { MPI_Comm_free(&comm); }
  MPI_Comm comm = MPI_COMM_NULL;
};

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

// A buffer of `h` ghost rows, the block, `h` ghost rows, of `width` doubles:
// the block holds its rows' values, the ghost rows kUntouched.
std::vector<double> make_buffer(const RowBlock& block, std::int64_t h, std::int64_t width) {
  std::vector<double> buffer(static_cast<std::size_t>((block.count + 2 * h) * width), kUntouched);
  for (std::int64_t r = 0; r < block.count; ++r) {
    for (std::int64_t c = 0; c < width; ++c)
      buffer[static_cast<std::size_t>((h + r) * width + c)] = value(block.displ + r, c);
  }
  return buffer;
}

// Checks every row of the buffer; returns how many ghost rows were filled
// (summed over the processes by the caller, against the expected count).
std::int64_t check_buffer(const std::vector<double>& buffer, const RowBlock& block,
                          std::int64_t rows, std::int64_t h, std::int64_t width) {
  std::int64_t filled = 0;
  for (std::int64_t i = 0; i < block.count + 2 * h; ++i) {
    const std::int64_t row = block.displ - h + i;
    const bool ghost = i < h || i >= h + block.count;
    const bool exists = row >= 0 && row < rows && block.count > 0;
    if (ghost && exists) ++filled;
    for (std::int64_t c = 0; c < width; ++c) {
      const double expected = exists ? value(row, c) : kUntouched;
      const double actual = buffer[static_cast<std::size_t>(i * width + c)];
      if (actual != expected) {
        ADD_FAILURE() << "buffer row " << i << " (global " << row << ") column " << c << ": "
                      << actual << ", expected " << expected << " (block " << block << ", h " << h
                      << ")";
        return filled;
      }
    }
  }
  return filled;
}

// The ghost rows that exist, over all processes (non-empty blocks only).
std::int64_t expected_filled(const Decomposition& blocks, std::int64_t rows, std::int64_t h) {
  std::int64_t total = 0;
  for (const RowBlock& block : blocks) {
    if (block.count == 0) continue;
    total += std::min(h, block.displ) + std::min(h, rows - block.displ - block.count);
  }
  return total;
}

void run_exchange(const Decomposition& blocks, std::int64_t rows, std::int64_t h,
                  std::int64_t width, bool started, MPI_Comm comm) {
  const int rank = comm_rank(comm);
  const RowBlock& block = blocks[static_cast<std::size_t>(rank)];
  std::vector<double> buffer = make_buffer(block, h, width);
  HaloExchange exchange(plan_halo(blocks, rank, h),
                        static_cast<std::size_t>(width) * sizeof(double), comm);
  exchange.start(buffer.data());
  if (started) {
    // The application reads its block meanwhile (what it computes from).
    double sum = 0.0;
    for (std::int64_t k = h * width; k < (h + block.count) * width; ++k)
      sum += buffer[static_cast<std::size_t>(k)];
    EXPECT_GE(sum, 0.0);
  }
  exchange.finish();
  std::int64_t filled = check_buffer(buffer, block, rows, h, width);
  MPI_Allreduce(MPI_IN_PLACE, &filled, 1, MPI_INT64_T, MPI_SUM, comm);
  EXPECT_EQ(filled, expected_filled(blocks, rows, h)) << "h " << h << " width " << width;
}

TEST(HaloExchangeMpi, BlockPartitionBlockingAndStarted) {
  const Comm world;
  int nprocs = 0;
  MPI_Comm_size(world.comm, &nprocs);
  for (const std::int64_t h : {1, 2}) {
    for (const std::int64_t width : {1, 7, 600}) {
      run_exchange(block_decomposition(40, nprocs), 40, h, width, false, world.comm);
      run_exchange(block_decomposition(40, nprocs), 40, h, width, true, world.comm);
    }
  }
}

TEST(HaloExchangeMpi, ShortEmptyAndShuffledBlocks) {
  const Comm world;
  int nprocs = 0;
  MPI_Comm_size(world.comm, &nprocs);
  // The same seed everywhere: every process draws the same decompositions.
  std::mt19937_64 random(4521);
  for (int trial = 0; trial < 40; ++trial) {
    const std::int64_t rows = static_cast<std::int64_t>(random() % 12);
    const std::int64_t h = 1 + static_cast<std::int64_t>(random() % 4);
    Decomposition blocks = random_decomposition(rows, nprocs, random);
    if (trial % 2 == 1) std::shuffle(blocks.begin(), blocks.end(), random);
    run_exchange(blocks, rows, h, 3, trial % 3 == 0, world.comm);
  }
}

}  // namespace
}  // namespace flexmpi
