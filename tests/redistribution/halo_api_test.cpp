// XMPI_Halo_exchange / _start / _finish on registered rows with ghost rows:
// the ghost rows hold their owners' values after an exchange, again after
// the blocks changed (the messages rebuilt, ghost rows from several short
// blocks), on the current buffer of a swapped pair; and the errors.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "flexmpi.h"

namespace {

constexpr double kUntouched = -1.0;
constexpr long long kRows = 30;
constexpr long long kWidth = 5;

double value(long long row, long long column) {
  return static_cast<double>(row) * 1000.0 + static_cast<double>(column) + 0.5;
}

struct Block {
  int count = 0;
  int displ = 0;
};

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 0;
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  return size;
}

Block own_block() {
  Block block;
  EXPECT_EQ(XMPI_Get_wsize(world_rank(), world_size(), static_cast<int>(kRows), &block.count,
                           &block.displ),
            XMPI_SUCCESS);
  return block;
}

// A malloc'ed buffer of h ghost rows, the block's rows (their values plus
// `offset`), h ghost rows (kUntouched).
double* make_buffer(const Block& block, int h, double offset) {
  const long long n = (block.count + 2LL * h) * kWidth;
  auto* buffer = static_cast<double*>(std::malloc(static_cast<std::size_t>(n) * sizeof(double)));
  for (long long k = 0; k < n; ++k) buffer[k] = kUntouched;
  for (long long r = 0; r < block.count; ++r) {
    for (long long c = 0; c < kWidth; ++c)
      buffer[(h + r) * kWidth + c] = value(block.displ + r, c) + offset;
  }
  return buffer;
}

// Every ghost row that is a row of the structure holds its value (+ offset),
// the others kUntouched (unless `outside_kept` is false: in place they are
// the window's spare rows); returns the ghost rows filled, summed over the processes.
long long check_ghost_rows(const double* buffer, const Block& block, int h, double offset,
                           bool outside_kept = true) {
  long long filled = 0;
  for (long long i = 0; i < block.count + 2LL * h; ++i) {
    if (i >= h && i < h + block.count) continue;
    const long long row = block.displ - h + i;
    const bool exists = row >= 0 && row < kRows && block.count > 0;
    filled += exists ? 1 : 0;
    if (!exists && !outside_kept) continue;
    for (long long c = 0; c < kWidth; ++c) {
      const double expected = exists ? value(row, c) + offset : kUntouched;
      EXPECT_EQ(buffer[i * kWidth + c], expected)
          << "buffer row " << i << " (global " << row << ") column " << c;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &filled, 1, MPI_LONG_LONG, MPI_SUM, XMPI_COMM_WORLD);
  return filled;
}

// The ghost rows that exist over all processes of blocks of `counts`.
long long expected_filled(int h) {
  std::vector<int> counts(static_cast<std::size_t>(world_size())),
      displs(static_cast<std::size_t>(world_size()));
  EXPECT_EQ(
      XMPI_Get_decomposition(world_size(), static_cast<int>(kRows), counts.data(), displs.data()),
      XMPI_SUCCESS);
  long long total = 0;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    if (counts[p] == 0) continue;
    total +=
        std::min<long long>(h, displs[p]) + std::min<long long>(h, kRows - displs[p] - counts[p]);
  }
  return total;
}

// All ranks but 0 get one row at the end; rank 0 the rest: ghost rows of 2
// then come from several processes.
Block short_block(int rank, int nprocs) {
  if (rank == 0) return {static_cast<int>(kRows) - (nprocs - 1), 0};
  return {1, static_cast<int>(kRows) - (nprocs - rank)};
}

TEST(HaloApi, ExchangesAndRebuildsWhenTheBlocksChange) {
  const int h = 2;
  Block block = own_block();
  double* u = make_buffer(block, h, 0.0);
  ASSERT_EQ(XMPI_Register_rows(&u, kRows, kWidth, h, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);
  ASSERT_EQ(XMPI_Halo_exchange(&u), XMPI_SUCCESS);
  EXPECT_EQ(check_ghost_rows(u, block, h, 0.0), expected_filled(h));

  const Block next = short_block(world_rank(), world_size());
  ASSERT_EQ(XMPI_Redistribute_data(block.count, block.displ, next.count, next.displ), XMPI_SUCCESS);
  block = next;
  // The ghost rows' contents are not kept when rows move: mark them.
  for (long long r = 0; r < h; ++r) {
    for (long long c = 0; c < kWidth; ++c) {
      u[r * kWidth + c] = kUntouched;
      u[(h + block.count + r) * kWidth + c] = kUntouched;
    }
  }
  ASSERT_EQ(XMPI_Halo_start(&u), XMPI_SUCCESS);
  double interior = 0.0;  // what the application computes meanwhile
  for (long long k = h * kWidth; k < (h + block.count) * kWidth; ++k) interior += u[k];
  EXPECT_GT(interior, 0.0);
  ASSERT_EQ(XMPI_Halo_finish(&u), XMPI_SUCCESS);
  EXPECT_EQ(check_ghost_rows(u, block, h, 0.0), expected_filled(h));
  ASSERT_EQ(XMPI_Unregister(&u), XMPI_SUCCESS);
  std::free(u);
}

TEST(HaloApi, ExchangesTheCurrentBufferOfASwappedPair) {
  const int h = 1;
  const Block block = own_block();
  double* u = make_buffer(block, h, 0.0);
  double* unew = make_buffer(block, h, 0.25);
  ASSERT_EQ(XMPI_Register_pair(&u, &unew, kRows, kWidth, h, MPI_DOUBLE, XMPI_DISTRIBUTED),
            XMPI_SUCCESS);
  ASSERT_EQ(XMPI_Halo_exchange(&u), XMPI_SUCCESS);
  EXPECT_EQ(check_ghost_rows(u, block, h, 0.0), expected_filled(h));
  std::swap(u, unew);  // u is now the buffer of offset 0.25
  ASSERT_EQ(XMPI_Halo_exchange(&u), XMPI_SUCCESS);
  EXPECT_EQ(check_ghost_rows(u, block, h, 0.25), expected_filled(h));
  ASSERT_EQ(XMPI_Unregister(&u), XMPI_SUCCESS);
  std::free(u);
  std::free(unew);
}

TEST(HaloApi, ExchangesInPlace) {
  const int h = 2;
  const Block block = own_block();
  double* u = make_buffer(block, h, 0.0);
  ASSERT_EQ(XMPI_Register_rows(&u, kRows, kWidth, h, MPI_DOUBLE, XMPI_DISTRIBUTED_IN_PLACE),
            XMPI_SUCCESS);
  ASSERT_EQ(XMPI_Halo_exchange(&u), XMPI_SUCCESS);
  EXPECT_EQ(check_ghost_rows(u, block, h, 0.0, false), expected_filled(h));
  ASSERT_EQ(XMPI_Unregister(&u), XMPI_SUCCESS);
  std::free(u);
}

// A process that waits in the exchange for a slower neighbour waits in MPI,
// as in a hand-written MPI_Sendrecv: were the wait computation, the balancer
// would see every process as slow as the slowest (and never balance).
TEST(HaloApi, WaitingForANeighbourIsMpiTime) {
  if (world_size() < 2) GTEST_SKIP() << "needs a neighbour";
  const int h = 1;
  const Block block = own_block();
  double* u = make_buffer(block, h, 0.0);
  ASSERT_EQ(XMPI_Register_rows(&u, kRows, kWidth, h, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);
  double mpi_before = 0.0, computation_before = 0.0;
  ASSERT_EQ(XMPI_Get_monitor_totals(nullptr, nullptr, nullptr, &mpi_before, &computation_before),
            XMPI_SUCCESS);
  constexpr double kLate = 0.3;  // seconds the last rank computes before the exchange
  ASSERT_EQ(XMPI_Monitor_iter_begin(nullptr), XMPI_SUCCESS);
  if (world_rank() == world_size() - 1) {
    const double until = MPI_Wtime() + kLate;
    while (MPI_Wtime() < until) {
    }
  }
  ASSERT_EQ(XMPI_Halo_exchange(&u), XMPI_SUCCESS);
  ASSERT_EQ(XMPI_Monitor_iter_end(nullptr), XMPI_SUCCESS);
  double mpi = 0.0, computation = 0.0;
  ASSERT_EQ(XMPI_Get_monitor_totals(nullptr, nullptr, nullptr, &mpi, &computation), XMPI_SUCCESS);
  if (world_rank() == world_size() - 2) {  // the late rank's neighbour waits for it
    EXPECT_GT(mpi - mpi_before, 0.5 * kLate);
    EXPECT_LT(computation - computation_before, 0.5 * kLate);
  }
  ASSERT_EQ(XMPI_Unregister(&u), XMPI_SUCCESS);
  std::free(u);
}

TEST(HaloApi, NamesItsErrors) {
  const Block block = own_block();
  double* flat = make_buffer(block, 0, 0.0);
  double* u = make_buffer(block, 1, 0.0);
  EXPECT_EQ(XMPI_Halo_exchange(&u), XMPI_ERR_ARG);  // not registered yet
  EXPECT_EQ(XMPI_Halo_exchange(nullptr), XMPI_ERR_ARG);
  ASSERT_EQ(XMPI_Register_rows(&flat, kRows, kWidth, 0, MPI_DOUBLE, XMPI_DISTRIBUTED),
            XMPI_SUCCESS);
  EXPECT_EQ(XMPI_Halo_exchange(&flat), XMPI_ERR_ARG);  // no ghost rows
  ASSERT_EQ(XMPI_Register_rows(&u, kRows, kWidth, 1, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);
  EXPECT_EQ(XMPI_Halo_finish(&u), XMPI_ERR_STATE);  // nothing started
  ASSERT_EQ(XMPI_Halo_start(&u), XMPI_SUCCESS);
  EXPECT_EQ(XMPI_Halo_start(&u), XMPI_ERR_STATE);
  EXPECT_EQ(XMPI_Halo_exchange(&u), XMPI_ERR_STATE);
  // Rows may not move under a started exchange (every process refuses alike).
  EXPECT_EQ(XMPI_Redistribute_data(block.count, block.displ, block.count, block.displ),
            XMPI_ERR_STATE);
  ASSERT_EQ(XMPI_Halo_finish(&u), XMPI_SUCCESS);
  EXPECT_EQ(check_ghost_rows(u, block, 1, 0.0), expected_filled(1));
  ASSERT_EQ(XMPI_Unregister(&u), XMPI_SUCCESS);
  ASSERT_EQ(XMPI_Unregister(&flat), XMPI_SUCCESS);
  std::free(u);
  std::free(flat);
}

}  // namespace
