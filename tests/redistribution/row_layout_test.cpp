// Rows of any width, ghost rows and swapped pairs (DataRegistry::register_rows,
// register_pair) on 1-4 processes, in every scheme: random decompositions
// (seeded, the same on every process) one after the other, every element of
// every block checked after each move and a global checksum against the
// serial one; ghost rows stay around the block in a buffer that holds
// exactly them (AddressSanitizer sees every write past it); buffers that
// disagree with their registration are refused before anything is written.
#include <gtest/gtest.h>
#include <malloc.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../support/random_decomposition.hpp"
#include "../support/world_test.hpp"
#include "flexmpi/error.hpp"
#include "redistribution/data_registry.hpp"

namespace flexmpi {
namespace {

using test::random_decomposition;

// The value of element (row, column) at `epoch` in buffer `which` (0, 1 of a pair).
double value(std::int64_t row, std::int64_t column, int epoch, int which) {
  return 1000.0 * row + column + 0.25 * epoch + 0.125 + 1e7 * which;
}
constexpr double kGhost = -7.5;  // what ghost rows are filled with

// One registered buffer of `rows` x `width` doubles with `ghosts` ghost rows
// around a distributed block (all rows when replicated).
struct Grid {
  Scheme scheme;
  std::int64_t rows, width, ghosts;
  double* data = nullptr;

  Grid(Scheme s, std::int64_t n, std::int64_t m, std::int64_t h)
      : scheme(s), rows(n), width(m), ghosts(h) {}
  ~Grid() { std::free(data); }
  Grid(const Grid&) = delete;
  Grid& operator=(const Grid&) = delete;

  [[nodiscard]] bool replicated() const { return scheme == Scheme::replicated; }
  // Rows the buffer holds around its first row held (row 0 when replicated).
  [[nodiscard]] std::int64_t held(const RowBlock& block) const {
    return replicated() ? rows : block.count;
  }
  void create(const RowBlock& block) {
    const std::int64_t elements = (held(block) + 2 * ghosts) * width;
    data = static_cast<double*>(std::malloc(elements * sizeof(double)));
    for (std::int64_t k = 0; k < elements; ++k) data[k] = kGhost;
  }
  // Element (row, column) of the block (row global).
  [[nodiscard]] double& at(const RowBlock& block, std::int64_t row, std::int64_t column) const {
    const std::int64_t local = replicated() ? row : row - block.displ;
    return data[(ghosts + local) * width + column];
  }
  void fill(const RowBlock& block, int epoch, int which) const {
    for (std::int64_t r = block.displ; r < block.displ + block.count; ++r) {
      for (std::int64_t c = 0; c < width; ++c) at(block, r, c) = value(r, c, epoch, which);
    }
  }
  // Elements of the block that differ from `epoch`'s; adds the block's sum to *sum.
  std::int64_t mismatches(const RowBlock& block, int epoch, int which, double* sum) const {
    std::int64_t wrong = 0;
    for (std::int64_t r = block.displ; r < block.displ + block.count; ++r) {
      for (std::int64_t c = 0; c < width; ++c) {
        wrong += at(block, r, c) != value(r, c, epoch, which);
        *sum += at(block, r, c);
      }
    }
    return wrong;
  }
  // Writes every ghost element (distributed): a buffer one row short is an
  // ASan error here; the block must not change.
  void write_ghosts(const RowBlock& block) const {
    if (replicated()) return;
    for (std::int64_t k = 0; k < ghosts * width; ++k) {
      data[k] = kGhost;
      data[(ghosts + block.count) * width + k] = kGhost;
    }
  }
};

double expected_sum(std::int64_t rows, std::int64_t width, int epoch, int which) {
  double sum = 0.0;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < width; ++c) sum += value(r, c, epoch, which);
  }
  return sum;
}

class RowLayout : public test::WorldTest {
 protected:
  // Registers `grids` (one pair if two), moves them through `rounds` random
  // decompositions, checks every element and the checksums after each.
  void run(std::vector<Grid*> grids, int rounds, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    const std::int64_t rows = grids[0]->rows, width = grids[0]->width;
    Decomposition blocks = random_decomposition(rows, nprocs_, random);
    DataRegistry registry;
    registry.set_local_block(blocks[rank_]);
    for (Grid* grid : grids) grid->create(blocks[rank_]);
    if (grids.size() == 2) {
      registry.register_pair(reinterpret_cast<void**>(&grids[0]->data),
                             reinterpret_cast<void**>(&grids[1]->data),
                             {rows, width, grids[0]->ghosts}, MPI_DOUBLE, grids[0]->scheme);
    } else {
      registry.register_rows(reinterpret_cast<void**>(&grids[0]->data),
                             {rows, width, grids[0]->ghosts}, MPI_DOUBLE, grids[0]->scheme);
    }
    for (int epoch = 0; epoch < rounds; ++epoch) {
      for (std::size_t k = 0; k < grids.size(); ++k) {
        grids[k]->fill(blocks[rank_], epoch, static_cast<int>(k));
      }
      // A time step's swap: the pointers exchange buffers.
      if (grids.size() == 2) std::swap(grids[0]->data, grids[1]->data);
      const Decomposition next = random_decomposition(rows, nprocs_, random);
      registry.redistribute(blocks, next, comm_);
      blocks = next;
      for (std::size_t k = 0; k < grids.size(); ++k) {
        // After the swap, grids[k] points at what grids[1 - k] was filled with.
        const int which = grids.size() == 2 ? 1 - static_cast<int>(k) : 0;
        double sum = 0.0;
        EXPECT_EQ(grids[k]->mismatches(blocks[rank_], epoch, which, &sum), 0)
            << "buffer " << k << ", epoch " << epoch << ", rank " << rank_;
        grids[k]->write_ghosts(blocks[rank_]);
        if (grids[k]->replicated()) continue;  // every process holds every row
        double total = 0.0;
        MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, comm_);
        EXPECT_DOUBLE_EQ(total, expected_sum(rows, width, epoch, which));
      }
      if (grids.size() == 2) std::swap(grids[0]->data, grids[1]->data);
    }
    registry.clear();  // in place: hands back malloc'ed copies, with their ghost rows
    for (std::size_t k = 0; k < grids.size(); ++k) {
      const Grid& grid = *grids[k];
      EXPECT_GE(malloc_usable_size(grid.data),
                (grid.held(blocks[rank_]) + 2 * grid.ghosts) * width * sizeof(double));
      double sum = 0.0;
      EXPECT_EQ(grid.mismatches(blocks[rank_], rounds - 1, static_cast<int>(k), &sum), 0);
    }
  }
};

const Scheme kSchemes[] = {Scheme::distributed, Scheme::distributed_in_place, Scheme::replicated};

TEST_F(RowLayout, NarrowAndWideRowsInEveryScheme) {
  for (const Scheme scheme : kSchemes) {
    for (const std::int64_t width : {7, 31, 1}) {
      Grid grid(scheme, 23, width, 0);
      run({&grid}, 6, 11 + width);
    }
  }
}

TEST_F(RowLayout, GhostRowsStayAroundTheBlock) {
  for (const Scheme scheme : {Scheme::distributed, Scheme::distributed_in_place}) {
    for (const std::int64_t ghosts : {1, 2}) {
      Grid grid(scheme, 19, 5, ghosts);
      run({&grid}, 6, 7 + ghosts);
    }
  }
}

TEST_F(RowLayout, SwappedPairMovesBothBuffersInEveryScheme) {
  for (const Scheme scheme : kSchemes) {
    const std::int64_t ghosts = scheme == Scheme::replicated ? 0 : 1;
    Grid current(scheme, 17, 6, ghosts), next(scheme, 17, 6, ghosts);
    run({&current, &next}, 5, 3);
  }
}

// Registration error message, "" if it was accepted.
std::string refusal(const std::function<void()>& registration) {
  try {
    registration();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    return e.what();
  }
  return {};
}

TEST_F(RowLayout, RegistrationRefusesABufferSmallerThanItsRows) {
  // An N x M grid (M < N) registered as an N x N dense matrix.
  constexpr std::int64_t kRows = 12, kWidth = 5;
  const RowBlock block{kRows, 0};
  DataRegistry registry;
  registry.set_local_block(block);
  Grid grid(Scheme::distributed, kRows, kWidth, 0);
  grid.create(block);
  auto* address = reinterpret_cast<void**>(&grid.data);
  const std::string dense =
      refusal([&] { registry.register_dense(address, kRows, MPI_DOUBLE, Scheme::distributed); });
  EXPECT_NE(dense.find("malloc_usable_size"), std::string::npos) << dense;
  EXPECT_NE(dense.find(std::to_string(kRows * kRows * sizeof(double))), std::string::npos) << dense;
  // Ghost rows the buffer does not have.
  EXPECT_NE(refusal([&] {
              registry.register_rows(address, {kRows, kWidth, 1}, MPI_DOUBLE, Scheme::distributed);
            }),
            "");
  EXPECT_NE(refusal([&] {
              registry.register_rows(address, {kRows, kWidth, 1}, MPI_DOUBLE, Scheme::replicated);
            }).find("ghost_rows must be 0"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              registry.register_rows(address, {kRows, 0, 0}, MPI_DOUBLE, Scheme::distributed);
            }),
            "");
  EXPECT_TRUE(registry.empty());
  EXPECT_EQ(refusal([&] {
              registry.register_rows(address, {kRows, kWidth, 0}, MPI_DOUBLE, Scheme::distributed);
            }),
            "");
}

TEST_F(RowLayout, RedistributionRefusesABufferMadeSmallerEverywhereAndMovesNothing) {
  constexpr std::int64_t kRows = 16, kWidth = 9;
  std::mt19937_64 random(5);
  const Decomposition from = random_decomposition(kRows, nprocs_, random);
  Decomposition to = from;
  std::rotate(to.begin(), to.begin() + 1, to.end());  // a change whenever nprocs > 1
  DataRegistry registry;
  registry.set_local_block(from[rank_]);
  Grid grid(Scheme::distributed, kRows, kWidth, 1);
  grid.create(from[rank_]);
  grid.fill(from[rank_], 0, 0);
  registry.register_rows(reinterpret_cast<void**>(&grid.data), {kRows, kWidth, 1}, MPI_DOUBLE,
                         Scheme::distributed);
  // The process with the most rows replaces its buffer with one without ghost rows.
  const auto largest = std::max_element(from.begin(), from.end(),
                                        [](auto& a, auto& b) { return a.count < b.count; }) -
                       from.begin();
  if (rank_ == largest) {
    double* smaller =
        static_cast<double*>(std::malloc(from[rank_].count * kWidth * sizeof(double)));
    for (std::int64_t k = 0; k < from[rank_].count * kWidth; ++k) {
      smaller[k] = grid.data[kWidth + k];
    }
    std::free(grid.data);
    grid.data = smaller;
    grid.ghosts = 0;  // where this test reads the block
  }
  try {
    registry.redistribute(from, to, comm_);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
  }
  double sum = 0.0;
  EXPECT_EQ(grid.mismatches(from[rank_], 0, 0, &sum), 0);
}

}  // namespace
}  // namespace flexmpi
