// Scheme::distributed_in_place (XMPI_DISTRIBUTED_IN_PLACE) on 1-4 processes:
// vectors and dense matrices live in a window of the whole structure, at
// their global rows. Random decompositions back and forth, next to ordinary
// distributed and replicated structures, with every element and a global
// checksum checked; kept rows never move; blocks that empty and grow again;
// unregistering and the registry's end hand back malloc'ed copies; bad input
// fails everywhere and changes nothing; sparse matrices are refused.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../support/random_decomposition.hpp"
#include "../support/world_test.hpp"
#include "flexmpi/error.hpp"
#include "redistribution/data_registry.hpp"

namespace flexmpi {
namespace {

using test::random_decomposition;

double value(std::int64_t element, int epoch) { return 2.0 * element + 0.25 * epoch + 0.5; }

// One array of doubles with `width` elements per row (1: vector; rows: dense),
// registered with `scheme`; it knows what its block must hold.
struct Array {
  Scheme scheme;
  std::int64_t rows;
  std::int64_t width;
  double* data = nullptr;

  Array(Scheme scheme_, std::int64_t rows_, bool dense)
      : scheme(scheme_), rows(rows_), width(dense ? rows_ : 1) {}
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  ~Array() { std::free(data); }

  [[nodiscard]] bool replicated() const { return scheme == Scheme::replicated; }
  // First local element of `block`'s rows (a replicated array holds every row).
  [[nodiscard]] std::int64_t local_first(const RowBlock& block) const {
    return replicated() ? block.displ * width : 0;
  }
  void create(const RowBlock& block) {
    const std::int64_t held = (replicated() ? rows : block.count) * width;
    data = static_cast<double*>(std::malloc(std::max<std::int64_t>(held, 1) * sizeof(double)));
    fill(block, 0);
  }
  void register_in(DataRegistry& registry) {
    if (width == 1) {
      registry.register_vector(reinterpret_cast<void**>(&data), rows, MPI_DOUBLE, scheme);
    } else {
      registry.register_dense(reinterpret_cast<void**>(&data), rows, MPI_DOUBLE, scheme);
    }
  }
  void fill(const RowBlock& block, int epoch) {
    const std::int64_t first = local_first(block);
    for (std::int64_t k = 0; k < block.count * width; ++k) {
      data[first + k] = value(block.displ * width + k, epoch);
    }
  }
  // Elements of `block` that differ from `epoch`'s values; adds their sum to *checksum.
  [[nodiscard]] std::int64_t mismatches(const RowBlock& block, int epoch, double* checksum) const {
    std::int64_t wrong = 0;
    const std::int64_t first = local_first(block);
    for (std::int64_t k = 0; k < block.count * width; ++k) {
      wrong += data[first + k] != value(block.displ * width + k, epoch) ? 1 : 0;
      *checksum += data[first + k];
    }
    return wrong;
  }
  [[nodiscard]] double expected_checksum(int epoch) const {
    double sum = 0.0;
    for (std::int64_t k = 0; k < rows * width; ++k) sum += value(k, epoch);
    return sum;
  }
};

class InPlace : public test::WorldTest {
 protected:
  // Creates the arrays on `initial`, registers them (in place ones at this
  // process's block), and checks every element after each change to `targets`.
  void follow(std::vector<Array*> arrays, DataRegistry& registry, const Decomposition& initial,
              const std::vector<Decomposition>& targets) {
    registry.set_local_block(initial[rank_]);
    for (Array* a : arrays) {
      a->create(initial[rank_]);
      a->register_in(registry);
    }
    Decomposition current = initial;
    for (std::size_t step = 0; step < targets.size(); ++step) {
      const int epoch = static_cast<int>(step) + 1;
      const Decomposition& target = targets[step];
      std::vector<const double*> kept_rows;  // where each in-place array's kept first row is
      for (Array* a : arrays) {
        a->fill(current[rank_], epoch);
        const std::int64_t kept = std::max(current[rank_].displ, target[rank_].displ);
        kept_rows.push_back(a->data + (kept - current[rank_].displ) * a->width);
      }
      registry.redistribute(current, target, comm_);
      for (std::size_t i = 0; i < arrays.size(); ++i) {
        const Array& a = *arrays[i];
        double sum = 0.0;
        EXPECT_EQ(a.mismatches(target[rank_], epoch, &sum), 0)
            << "array " << i << ", step " << step << ", rank " << rank_;
        MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm_);
        EXPECT_DOUBLE_EQ(sum, a.expected_checksum(epoch)) << "array " << i << ", step " << step;
        const std::int64_t overlap = std::min(current[rank_].displ + current[rank_].count,
                                              target[rank_].displ + target[rank_].count) -
                                     std::max(current[rank_].displ, target[rank_].displ);
        if (a.scheme == Scheme::distributed_in_place && overlap > 0) {
          const std::int64_t kept = std::max(current[rank_].displ, target[rank_].displ);
          EXPECT_EQ(a.data + (kept - target[rank_].displ) * a.width, kept_rows[i])
              << "kept rows moved, step " << step;
        }
      }
      current = target;
    }
  }
};

TEST_F(InPlace, RandomDecompositionsBackAndForthBesideOtherSchemes) {
  constexpr std::int64_t kRows = 37;
  Array vector(Scheme::distributed_in_place, kRows, false),
      dense(Scheme::distributed_in_place, kRows, true);
  Array ordinary(Scheme::distributed, kRows, false), replicated(Scheme::replicated, kRows, true);
  const Decomposition initial = block_decomposition(kRows, nprocs_);
  std::mt19937_64 random(7);
  std::vector<Decomposition> targets;
  for (int round = 0; round < 12; ++round) {
    targets.push_back(random_decomposition(kRows, nprocs_, random));
    targets.push_back(initial);
  }
  DataRegistry registry;
  follow({&vector, &dense, &ordinary, &replicated}, registry, initial, targets);
}

TEST_F(InPlace, LargeBlocksSpanningManyPages) {
  constexpr std::int64_t kRows = 300000;  // 2.3 MiB of doubles: page-sized releases
  Array vector(Scheme::distributed_in_place, kRows, false);
  const Decomposition initial = block_decomposition(kRows, nprocs_);
  std::mt19937_64 random(11);
  std::vector<Decomposition> targets;
  for (int step = 0; step < 6; ++step)
    targets.push_back(random_decomposition(kRows, nprocs_, random));
  targets.push_back(initial);
  DataRegistry registry;
  follow({&vector}, registry, initial, targets);
}

TEST_F(InPlace, BlockThatEmptiesGrowsAgain) {
  constexpr std::int64_t kRows = 20;
  Array vector(Scheme::distributed_in_place, kRows, false);
  Array dense(Scheme::distributed_in_place, kRows, true);
  const Decomposition initial = block_decomposition(kRows, nprocs_);
  Decomposition all_on_last(nprocs_, RowBlock{0, 0}), all_on_first(nprocs_, RowBlock{0, kRows});
  all_on_last[nprocs_ - 1] = {kRows, 0};
  all_on_first[0] = {kRows, 0};
  DataRegistry registry;
  follow({&vector, &dense}, registry, initial, {all_on_last, initial, all_on_first, all_on_last});
}

TEST_F(InPlace, UnregisterAndTheEndHandBackMallocedCopies) {
  constexpr std::int64_t kRows = 29;
  Array vector(Scheme::distributed_in_place, kRows, false);
  Array dense(Scheme::distributed_in_place, kRows, true);
  const Decomposition initial = block_decomposition(kRows, nprocs_);
  std::mt19937_64 random(3);
  const Decomposition target = random_decomposition(kRows, nprocs_, random);
  const RowBlock mine = target[rank_];
  {
    DataRegistry registry;
    follow({&vector, &dense}, registry, initial, {target});
    registry.unregister(&vector.data);
    EXPECT_EQ(registry.structure_count(), 1u);
    // Ends with the registry: `dense` is handed back too.
  }
  for (Array* a : {&vector, &dense}) {
    double sum = 0.0;
    EXPECT_EQ(a->mismatches(mine, 1, &sum), 0);
    // The application's malloc'ed memory now: realloc and free (~Array) work.
    const std::int64_t bytes = (mine.count + 4) * a->width * sizeof(double);
    a->data = static_cast<double*>(std::realloc(a->data, bytes));
    ASSERT_NE(a->data, nullptr);
    EXPECT_EQ(a->mismatches(mine, 1, &sum), 0);
  }
}

TEST_F(InPlace, HaloRowsAreTheNeighboursPlaces) {
  constexpr std::int64_t kRows = 16;
  Array vector(Scheme::distributed_in_place, kRows, false);
  const Decomposition blocks = block_decomposition(kRows, nprocs_);
  DataRegistry registry;
  follow({&vector}, registry, blocks, {});
  const RowBlock mine = blocks[rank_];
  if (mine.displ > 0) vector.data[-1] = -1.0;  // the row before the block
  if (mine.displ + mine.count < kRows) vector.data[mine.count] = -2.0;
  registry.redistribute(blocks, blocks, comm_);
  double sum = 0.0;
  EXPECT_EQ(vector.mismatches(mine, 0, &sum), 0);
}

// Runs `call` on every process; each must throw Error(invalid_argument)
// mentioning `needle`, with the in-place arrays' rows and pointers unchanged.
template <class Call>
void expect_rejected(Call&& call, std::vector<Array*> arrays, const RowBlock& mine,
                     const std::string& needle) {
  std::vector<double*> pointers;
  for (Array* a : arrays) pointers.push_back(a->data);
  try {
    call();
    ADD_FAILURE() << "no error (" << needle << ")";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), Errc::invalid_argument) << error.what();
    EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
  }
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ(arrays[i]->data, pointers[i]);
    double sum = 0.0;
    EXPECT_EQ(arrays[i]->mismatches(mine, 0, &sum), 0);
  }
}

TEST_F(InPlace, BadInputFailsEverywhereAndChangesNothing) {
  constexpr std::int64_t kRows = 23;
  Array vector(Scheme::distributed_in_place, kRows, false);
  Array dense(Scheme::distributed_in_place, kRows, true);
  Array ordinary(Scheme::distributed, kRows, false), replicated(Scheme::replicated, kRows, false);
  const Decomposition blocks = block_decomposition(kRows, nprocs_);
  const RowBlock mine = blocks[rank_];
  DataRegistry registry;
  follow({&vector, &dense, &ordinary, &replicated}, registry, blocks, {});
  const std::vector<Array*> all = {&vector, &dense, &ordinary, &replicated};

  Decomposition gap = blocks;
  gap.back().count -= 1;
  expect_rejected([&] { registry.redistribute(blocks, gap, comm_); }, all, mine, "rows");

  // A reallocated in-place buffer on the last process only.
  std::mt19937_64 random(5);
  const Decomposition target = random_decomposition(kRows, nprocs_, random);
  double* const in_window = vector.data;
  double* replaced = nullptr;
  if (rank_ == nprocs_ - 1 && mine.count > 0) {
    replaced = static_cast<double*>(std::malloc(mine.count * sizeof(double)));
    std::memcpy(replaced, in_window, mine.count * sizeof(double));
    vector.data = replaced;
  }
  expect_rejected([&] { registry.redistribute(blocks, target, comm_); }, all, mine,
                  "not where flexmpi put");
  vector.data = in_window;
  std::free(replaced);

  // Unregistering an address that is not registered.
  int other = 0;
  EXPECT_THROW(registry.unregister(&other), Error);
  EXPECT_EQ(registry.structure_count(), all.size());

  // Afterwards the structures still move.
  Decomposition current = blocks;
  for (Array* a : all) a->fill(mine, 1);
  registry.redistribute(current, target, comm_);
  for (Array* a : all) {
    double sum = 0.0;
    EXPECT_EQ(a->mismatches(target[rank_], 1, &sum), 0);
  }
}

TEST_F(InPlace, RegistrationRefusesWhatItCannotPlace) {
  constexpr std::int64_t kRows = 10;
  DataRegistry registry;
  auto* x = static_cast<double*>(std::malloc(kRows * sizeof(double)));
  // Without this process's block there is no place for it.
  EXPECT_THROW(registry.register_vector(reinterpret_cast<void**>(&x), kRows, MPI_DOUBLE,
                                        Scheme::distributed_in_place),
               Error);
  registry.set_local_block({kRows, 0});
  EXPECT_THROW(registry.register_vector(reinterpret_cast<void**>(&x), kRows - 1, MPI_DOUBLE,
                                        Scheme::distributed_in_place),
               Error);  // the block is not within the rows
  // Sparse matrices are refused, by name.
  int* ia = nullptr;
  int* ja = nullptr;
  double* a = nullptr;
  try {
    registry.register_sparse(&ia, &ja, reinterpret_cast<void**>(&a), kRows, 0, MPI_DOUBLE,
                             Scheme::distributed_in_place);
    ADD_FAILURE() << "sparse in place accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(error.what()).find("vectors and dense matrices only"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(registry.structure_count(), 0u);
  // A failed registration leaves the buffer the caller's: it is still x.
  double* const before = x;
  x[0] = 4.0;
  EXPECT_THROW(registry.register_vector(reinterpret_cast<void**>(&x), -1, MPI_DOUBLE,
                                        Scheme::distributed_in_place),
               Error);
  EXPECT_EQ(x, before);
  EXPECT_EQ(x[0], 4.0);
  // A structure larger than the address space (512 TiB) cannot be reserved.
  registry.set_local_block({0, 0});
  try {
    registry.register_dense(reinterpret_cast<void**>(&x), std::int64_t{1} << 23, MPI_DOUBLE,
                            Scheme::distributed_in_place);
    ADD_FAILURE() << "a 512 TiB window was reserved";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), Errc::out_of_memory) << error.what();
  }
  EXPECT_EQ(registry.structure_count(), 0u);
  EXPECT_EQ(x, before);
  EXPECT_EQ(x[0], 4.0);
  std::free(x);
}

}  // namespace
}  // namespace flexmpi
