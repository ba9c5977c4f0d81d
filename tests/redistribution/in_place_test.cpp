// Scheme::distributed_in_place (XMPI_DISTRIBUTED_IN_PLACE) on 1-4 processes:
// vectors and dense matrices live in a window of the whole structure, at
// their global rows; a sparse matrix's nonzeros in windows of all of them,
// at their global offset, from the first redistribution on. Random
// decompositions back and forth, next to ordinary distributed and replicated
// structures, with every element and a global checksum checked; kept rows
// (and kept nonzeros) never move; blocks that empty and grow again; pages of
// rows that left are given back; unregistering and the registry's end hand
// back malloc'ed copies; bad input fails everywhere and changes nothing.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "../support/random_decomposition.hpp"
#include "../support/world_test.hpp"
#include "flexmpi/error.hpp"
#include "redistribution/data_registry.hpp"

namespace flexmpi {
namespace {

using test::random_decomposition;

double value(std::int64_t element, int epoch) { return 2.0 * element + 0.25 * epoch + 0.5; }

// A registered structure that knows what its block must hold.
struct Followed {
  virtual ~Followed() = default;
  virtual void create(const RowBlock& block) = 0;
  virtual void register_in(DataRegistry& registry) = 0;
  virtual void fill(const RowBlock& block, int epoch) = 0;
  // Elements of `block` that differ from `epoch`'s values; adds their sum to *checksum.
  virtual std::int64_t mismatches(const RowBlock& block, int epoch, double* checksum) const = 0;
  [[nodiscard]] virtual double expected_checksum(int epoch) const = 0;
  [[nodiscard]] virtual bool in_place() const = 0;
  // Where row `row` of `block` is (in place: the same while the row is kept).
  [[nodiscard]] virtual std::vector<const void*> row_addresses(const RowBlock& block,
                                                               std::int64_t row) const = 0;
  // The user's pointers.
  [[nodiscard]] virtual std::vector<const void*> pointers() const = 0;
};

// One array of doubles with `width` elements per row (1: vector; rows: dense),
// registered with `scheme`.
struct Array : Followed {
  Scheme scheme;
  std::int64_t rows;
  std::int64_t width;
  double* data = nullptr;

  Array(Scheme scheme_, std::int64_t rows_, bool dense)
      : scheme(scheme_), rows(rows_), width(dense ? rows_ : 1) {}
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  ~Array() override { std::free(data); }

  [[nodiscard]] bool replicated() const { return scheme == Scheme::replicated; }
  // First local element of `block`'s rows (a replicated array holds every row).
  [[nodiscard]] std::int64_t local_first(const RowBlock& block) const {
    return replicated() ? block.displ * width : 0;
  }
  void create(const RowBlock& block) override {
    const std::int64_t held = (replicated() ? rows : block.count) * width;
    data = static_cast<double*>(std::malloc(std::max<std::int64_t>(held, 1) * sizeof(double)));
    fill(block, 0);
  }
  void register_in(DataRegistry& registry) override {
    if (width == 1) {
      registry.register_vector(reinterpret_cast<void**>(&data), rows, MPI_DOUBLE, scheme);
    } else {
      registry.register_dense(reinterpret_cast<void**>(&data), rows, MPI_DOUBLE, scheme);
    }
  }
  void fill(const RowBlock& block, int epoch) override {
    const std::int64_t first = local_first(block);
    for (std::int64_t k = 0; k < block.count * width; ++k) {
      data[first + k] = value(block.displ * width + k, epoch);
    }
  }
  [[nodiscard]] std::int64_t mismatches(const RowBlock& block, int epoch,
                                        double* checksum) const override {
    std::int64_t wrong = 0;
    const std::int64_t first = local_first(block);
    for (std::int64_t k = 0; k < block.count * width; ++k) {
      wrong += data[first + k] != value(block.displ * width + k, epoch) ? 1 : 0;
      *checksum += data[first + k];
    }
    return wrong;
  }
  [[nodiscard]] double expected_checksum(int epoch) const override {
    double sum = 0.0;
    for (std::int64_t k = 0; k < rows * width; ++k) sum += value(k, epoch);
    return sum;
  }
  [[nodiscard]] bool in_place() const override { return scheme == Scheme::distributed_in_place; }
  [[nodiscard]] std::vector<const void*> row_addresses(const RowBlock& block,
                                                       std::int64_t row) const override {
    return {data + local_first(block) + (row - block.displ) * width};
  }
  [[nodiscard]] std::vector<const void*> pointers() const override { return {data}; }
};

// A CSR matrix of doubles (CSC with `csc`: the same arrays, blocks of
// columns) with 0 to 5 nonzeros a row; registered with `scheme`.
struct Sparse : Followed {
  Scheme scheme;
  std::int64_t rows;
  bool csc;
  int* ia = nullptr;
  int* ja = nullptr;
  double* values = nullptr;

  Sparse(Scheme scheme_, std::int64_t rows_, bool csc_ = false)
      : scheme(scheme_), rows(rows_), csc(csc_) {}
  Sparse(const Sparse&) = delete;
  Sparse& operator=(const Sparse&) = delete;
  ~Sparse() override {
    std::free(ia);
    std::free(ja);
    std::free(values);
  }

  [[nodiscard]] static std::int64_t row_nnz(std::int64_t row) { return (row * 7 + 3) % 6; }
  [[nodiscard]] int column(std::int64_t row, std::int64_t j) const {
    return static_cast<int>((row + j * 7919) % rows);
  }
  [[nodiscard]] static double entry(std::int64_t row, std::int64_t j, int epoch) {
    return value(row * 8 + j, epoch);
  }
  [[nodiscard]] bool replicated() const { return scheme == Scheme::replicated; }
  [[nodiscard]] RowBlock held(const RowBlock& block) const {
    return replicated() ? RowBlock{rows, 0} : block;
  }
  [[nodiscard]] std::int64_t nnz_of(const RowBlock& block) const {
    std::int64_t nnz = 0;
    for (std::int64_t row = block.displ; row < block.displ + block.count; ++row) {
      nnz += row_nnz(row);
    }
    return nnz;
  }
  void create(const RowBlock& block) override {
    const RowBlock all = held(block);
    const std::int64_t nnz = nnz_of(all);
    ia = static_cast<int*>(std::malloc((all.count + 1) * sizeof(int)));
    ja = static_cast<int*>(std::malloc(std::max<std::int64_t>(nnz, 1) * sizeof(int)));
    values = static_cast<double*>(std::malloc(std::max<std::int64_t>(nnz, 1) * sizeof(double)));
    ia[0] = 0;
    for (std::int64_t k = 0; k < all.count; ++k) {
      const std::int64_t row = all.displ + k;
      ia[k + 1] = static_cast<int>(ia[k] + row_nnz(row));
      for (std::int64_t j = 0; j < row_nnz(row); ++j) ja[ia[k] + j] = column(row, j);
    }
    fill(block, 0);
  }
  void register_in(DataRegistry& registry) override {
    const std::int64_t nnz = nnz_of({rows, 0});
    if (csc) {
      registry.register_sparse_csc(&ia, &ja, reinterpret_cast<void**>(&values), rows, nnz,
                                   MPI_DOUBLE, scheme);
    } else {
      registry.register_sparse(&ia, &ja, reinterpret_cast<void**>(&values), rows, nnz, MPI_DOUBLE,
                               scheme);
    }
  }
  // Local index of `row`'s first pointer in the arrays of `block`.
  [[nodiscard]] std::int64_t local(const RowBlock& block, std::int64_t row) const {
    return row - held(block).displ;
  }
  void fill(const RowBlock& block, int epoch) override {
    for (std::int64_t row = block.displ; row < block.displ + block.count; ++row) {
      const int first = ia[local(block, row)];
      for (std::int64_t j = 0; j < row_nnz(row); ++j) values[first + j] = entry(row, j, epoch);
    }
  }
  [[nodiscard]] std::int64_t mismatches(const RowBlock& block, int epoch,
                                        double* checksum) const override {
    if (block.count == 0) return 0;
    std::int64_t wrong = ia[0] != 0 ? 1 : 0;
    for (std::int64_t row = block.displ; row < block.displ + block.count; ++row) {
      const std::int64_t k = local(block, row);
      wrong += ia[k + 1] - ia[k] != row_nnz(row) ? 1 : 0;
      *checksum += ia[k + 1] - ia[k];
      for (std::int64_t j = 0; j < std::min<std::int64_t>(ia[k + 1] - ia[k], 5); ++j) {
        wrong += ja[ia[k] + j] != column(row, j) ? 1 : 0;
        wrong += values[ia[k] + j] != entry(row, j, epoch) ? 1 : 0;
        *checksum += ja[ia[k] + j] + values[ia[k] + j];
      }
    }
    return wrong;
  }
  [[nodiscard]] double expected_checksum(int epoch) const override {
    double sum = 0.0;
    for (std::int64_t row = 0; row < rows; ++row) {
      sum += static_cast<double>(row_nnz(row));
      for (std::int64_t j = 0; j < row_nnz(row); ++j) sum += column(row, j) + entry(row, j, epoch);
    }
    return sum;
  }
  [[nodiscard]] bool in_place() const override { return scheme == Scheme::distributed_in_place; }
  [[nodiscard]] std::vector<const void*> row_addresses(const RowBlock& block,
                                                       std::int64_t row) const override {
    const int first = ia[local(block, row)];
    return {ja + first, values + first};
  }
  [[nodiscard]] std::vector<const void*> pointers() const override { return {ia, ja, values}; }
};

class InPlace : public test::WorldTest {
 protected:
  // Creates the structures on `initial`, registers them (in place ones at
  // this process's block), and checks every element after each change to
  // `targets`, and that kept rows stayed where they were.
  void follow(std::vector<Followed*> structures, DataRegistry& registry,
              const Decomposition& initial, const std::vector<Decomposition>& targets) {
    registry.set_local_block(initial[rank_]);
    for (Followed* f : structures) {
      f->create(initial[rank_]);
      f->register_in(registry);
    }
    Decomposition current = initial;
    for (std::size_t step = 0; step < targets.size(); ++step) {
      const int epoch = static_cast<int>(step) + 1;
      const Decomposition& target = targets[step];
      const RowBlock &before = current[rank_], &after = target[rank_];
      const std::int64_t kept = std::max(before.displ, after.displ);
      const bool keeps = kept < std::min(before.displ + before.count, after.displ + after.count);
      std::vector<std::vector<const void*>> kept_rows;  // where each kept first row is
      for (Followed* f : structures) {
        f->fill(before, epoch);
        kept_rows.push_back(keeps ? f->row_addresses(before, kept) : std::vector<const void*>{});
      }
      registry.redistribute(current, target, comm_);
      for (std::size_t i = 0; i < structures.size(); ++i) {
        const Followed& f = *structures[i];
        double sum = 0.0;
        EXPECT_EQ(f.mismatches(after, epoch, &sum), 0)
            << "structure " << i << ", step " << step << ", rank " << rank_;
        MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm_);
        EXPECT_DOUBLE_EQ(sum, f.expected_checksum(epoch)) << "structure " << i << ", step " << step;
        // A sparse matrix's nonzeros are placed by the first redistribution.
        if (f.in_place() && keeps && (step > 0 || dynamic_cast<const Sparse*>(&f) == nullptr)) {
          EXPECT_EQ(f.row_addresses(after, kept), kept_rows[i])
              << "kept rows moved, structure " << i << ", step " << step;
        }
      }
      current = target;
    }
  }

  // `rounds` random decompositions of `rows`, each followed by the block
  // decomposition again: back and forth.
  [[nodiscard]] std::vector<Decomposition> back_and_forth(std::int64_t rows, std::uint64_t seed,
                                                          int rounds = 12) const {
    const Decomposition initial = block_decomposition(rows, nprocs_);
    std::mt19937_64 random(seed);
    std::vector<Decomposition> targets;
    for (int round = 0; round < rounds; ++round) {
      targets.push_back(random_decomposition(rows, nprocs_, random));
      targets.push_back(initial);
    }
    return targets;
  }
};

TEST_F(InPlace, RandomDecompositionsBackAndForthBesideOtherSchemes) {
  constexpr std::int64_t kRows = 37;
  Array vector(Scheme::distributed_in_place, kRows, false),
      dense(Scheme::distributed_in_place, kRows, true);
  Array ordinary(Scheme::distributed, kRows, false), replicated(Scheme::replicated, kRows, true);
  DataRegistry registry;
  follow({&vector, &dense, &ordinary, &replicated}, registry, block_decomposition(kRows, nprocs_),
         back_and_forth(kRows, 7));
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
// mentioning `needle`, with the structures' rows and pointers unchanged.
template <class Call>
void expect_rejected(Call&& call, std::vector<Followed*> structures, const RowBlock& mine,
                     const std::string& needle) {
  std::vector<std::vector<const void*>> pointers;
  for (Followed* f : structures) pointers.push_back(f->pointers());
  try {
    call();
    ADD_FAILURE() << "no error (" << needle << ")";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), Errc::invalid_argument) << error.what();
    EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
  }
  for (std::size_t i = 0; i < structures.size(); ++i) {
    EXPECT_EQ(structures[i]->pointers(), pointers[i]);
    double sum = 0.0;
    EXPECT_EQ(structures[i]->mismatches(mine, 0, &sum), 0);
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
  const std::vector<Followed*> all = {&vector, &dense, &ordinary, &replicated};

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
  for (Followed* a : all) a->fill(mine, 1);
  registry.redistribute(current, target, comm_);
  for (Followed* a : all) {
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
  // A sparse matrix whose nonzeros (512 TiB of values) cannot be reserved.
  int* ia = nullptr;
  int* ja = nullptr;
  double* a = nullptr;
  try {
    registry.register_sparse(&ia, &ja, reinterpret_cast<void**>(&a), kRows, std::int64_t{1} << 46,
                             MPI_DOUBLE, Scheme::distributed_in_place);
    ADD_FAILURE() << "a 512 TiB window was reserved";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), Errc::out_of_memory) << error.what();
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

// ---- sparse matrices in place ----

TEST_F(InPlace, SparseRandomDecompositionsBackAndForthBesideOtherSchemes) {
  constexpr std::int64_t kRows = 41;
  Sparse csr(Scheme::distributed_in_place, kRows), csc(Scheme::distributed_in_place, kRows, true);
  Sparse ordinary(Scheme::distributed, kRows), replicated(Scheme::replicated, kRows);
  Array vector(Scheme::distributed_in_place, kRows, false), dense(Scheme::distributed, kRows, true);
  DataRegistry registry;
  follow({&csr, &csc, &ordinary, &replicated, &vector, &dense}, registry,
         block_decomposition(kRows, nprocs_), back_and_forth(kRows, 17));
}

TEST_F(InPlace, SparseBlockThatEmptiesGrowsAgain) {
  constexpr std::int64_t kRows = 24;
  Sparse csr(Scheme::distributed_in_place, kRows);
  Array vector(Scheme::distributed_in_place, kRows, false);
  const Decomposition initial = block_decomposition(kRows, nprocs_);
  Decomposition all_on_last(nprocs_, RowBlock{0, 0}), all_on_first(nprocs_, RowBlock{0, kRows});
  all_on_last[nprocs_ - 1] = {kRows, 0};
  all_on_first[0] = {kRows, 0};
  DataRegistry registry;
  follow({&csr, &vector}, registry, initial,
         {initial, all_on_last, initial, all_on_first, all_on_last, initial});
}

// Memory this process holds in the mapping that contains `address`, in KiB:
// resident pages minus those given back with MADV_FREE (not yet reclaimed).
std::int64_t held_kib(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::string line;
  bool inside = false;
  std::int64_t held = 0;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 && line.find(':') > 8) {
      if (inside) break;
      inside = begin <= at && at < end;
      continue;
    }
    long kib = 0;
    if (inside && std::sscanf(line.c_str(), "Rss: %ld kB", &kib) == 1) held += kib;
    if (inside && std::sscanf(line.c_str(), "LazyFree: %ld kB", &kib) == 1) held -= kib;
  }
  return held;
}

TEST_F(InPlace, SparsePagesOfNonzerosThatLeaveAreGivenBack) {
  constexpr std::int64_t kRows = 120000;  // 300000 nonzeros, 2.4 MB of values
  Sparse csr(Scheme::distributed_in_place, kRows);
  const Decomposition initial = block_decomposition(kRows, nprocs_);
  std::mt19937_64 random(23);
  std::vector<Decomposition> targets = {initial};  // places the nonzeros
  for (int step = 0; step < 3; ++step) {
    targets.push_back(random_decomposition(kRows, nprocs_, random));
  }
  targets.push_back(initial);
  DataRegistry registry;
  follow({&csr}, registry, initial, targets);

  // Every process but the last gives its whole block to the last one.
  Decomposition all_on_last(nprocs_, RowBlock{0, 0});
  all_on_last[nprocs_ - 1] = {kRows, 0};
  const std::int64_t before = held_kib(csr.values);
  const std::int64_t block_kib =
      csr.nnz_of(initial[rank_]) * static_cast<std::int64_t>(sizeof(double)) / 1024;
  registry.redistribute(initial, all_on_last, comm_);
  if (rank_ != nprocs_ - 1) {
    EXPECT_LE(held_kib(csr.values), before - block_kib / 2)
        << "before " << before << " KiB, a block of " << block_kib << " KiB of values left";
  }
  double sum = 0.0;
  EXPECT_EQ(csr.mismatches(all_on_last[rank_], static_cast<int>(targets.size()), &sum), 0);
}

// The row pointers follow the block in the user's array: every way a block
// changes (shrinking and growing at either end, the first row moving,
// rows leaving and arriving at once with and without rows kept, emptying,
// growing from nothing), twice, with every element and the checksums
// checked; afterwards moves back and forth keep ia where it is.
TEST_F(InPlace, SparseRowPointersFollowTheBlockInTheUsersArray) {
  constexpr std::int64_t kRows = 50000;  // ia of 200 KB: whole pages to give back
  Sparse csr(Scheme::distributed_in_place, kRows), csc(Scheme::distributed_in_place, kRows, true);
  const Decomposition even = block_decomposition(kRows, nprocs_);
  // A quarter of the first block shifts to the last (bench-redistribution):
  // the first shrinks at its end, the last grows at its start, the others
  // receive at their start and send at their end.
  Decomposition shifted = even;
  const std::int64_t shift = even[0].count / 2;
  shifted[0].count -= shift;
  for (int p = 1; p < nprocs_; ++p) shifted[p].displ -= shift;
  shifted[nprocs_ - 1].count += shift;
  // Blocks in reverse rank order, the first process's at the end: it keeps
  // the end of its block, sends its start and receives the rows after it.
  Decomposition reversed(nprocs_);
  const std::int64_t small = kRows / (4 * nprocs_);
  for (int p = 1; p < nprocs_; ++p) reversed[p] = {small, (nprocs_ - 1 - p) * small};
  reversed[0] = {kRows - (nprocs_ - 1) * small, (nprocs_ - 1) * small};
  Decomposition all_on_last(nprocs_, RowBlock{0, 0}), all_on_first(nprocs_, RowBlock{0, kRows});
  all_on_last[nprocs_ - 1] = {kRows, 0};
  all_on_first[0] = {kRows, 0};
  std::vector<Decomposition> targets;
  for (int cycle = 0; cycle < 2; ++cycle) {
    targets.insert(targets.end(),
                   {shifted, even, reversed, shifted, all_on_last, all_on_first, reversed, even});
  }
  DataRegistry registry;
  follow({&csr, &csc}, registry, even, targets);

  // Back and forth once more: the array has the room it needs, so it stays.
  const int epoch = static_cast<int>(targets.size());
  const auto move = [&](const Decomposition& from, const Decomposition& to) {
    registry.redistribute(from, to, comm_);
    double sum = 0.0;
    for (const Sparse* m : {&csr, &csc}) {
      EXPECT_EQ(m->mismatches(to[rank_], epoch, &sum), 0);
    }
  };
  move(even, shifted);
  move(shifted, even);
  const int* const ia = csr.ia;
  for (int round = 0; round < 3; ++round) {
    move(even, shifted);
    move(shifted, even);
    EXPECT_EQ(csr.ia, ia) << "round " << round;
  }
}

TEST_F(InPlace, SparseUnregisterAndTheEndHandBackMallocedArrays) {
  constexpr std::int64_t kRows = 31;
  Sparse moved(Scheme::distributed_in_place, kRows),
      kept_to_the_end(Scheme::distributed_in_place, kRows);
  const Decomposition initial = block_decomposition(kRows, nprocs_);
  std::mt19937_64 random(29);
  const Decomposition target = random_decomposition(kRows, nprocs_, random);
  const RowBlock mine = target[rank_];
  Sparse never_placed(Scheme::distributed_in_place, kRows);
  {
    DataRegistry registry;
    follow({&moved, &kept_to_the_end}, registry, initial, {target});
    never_placed.create(mine);
    const std::vector<const void*> own = never_placed.pointers();
    never_placed.register_in(registry);
    registry.unregister(&never_placed.ja);  // any of its addresses
    EXPECT_EQ(never_placed.pointers(), own) << "a block never placed is the application's as is";
    registry.unregister(&moved.ia);
    EXPECT_EQ(registry.structure_count(), 1u);
    // Ends with the registry: `kept_to_the_end` is handed back too.
  }
  for (Sparse* m : {&moved, &kept_to_the_end}) {
    double sum = 0.0;
    EXPECT_EQ(m->mismatches(mine, 1, &sum), 0);
    // The application's malloc'ed memory now: realloc and free (~Sparse) work.
    const std::int64_t nnz = m->nnz_of(mine);
    m->ia = static_cast<int*>(std::realloc(m->ia, (mine.count + 9) * sizeof(int)));
    m->ja = static_cast<int*>(std::realloc(m->ja, (nnz + 9) * sizeof(int)));
    m->values = static_cast<double*>(std::realloc(m->values, (nnz + 9) * sizeof(double)));
    ASSERT_TRUE(m->ia != nullptr && m->ja != nullptr && m->values != nullptr);
    EXPECT_EQ(m->mismatches(mine, 1, &sum), 0);
  }
}

TEST_F(InPlace, SparseReplacedPointerOrCountFailsEverywhereAndChangesNothing) {
  constexpr std::int64_t kRows = 27;
  Sparse csr(Scheme::distributed_in_place, kRows), ordinary(Scheme::distributed, kRows);
  Array vector(Scheme::distributed_in_place, kRows, false);
  const Decomposition blocks = block_decomposition(kRows, nprocs_);
  const RowBlock mine = blocks[rank_];
  DataRegistry registry;
  // Before the first redistribution the arrays are the application's; the
  // one that places them must be one that keeps everything for the check.
  const std::vector<Followed*> all = {&csr, &ordinary, &vector};
  follow(all, registry, blocks, {blocks});
  for (Followed* f : all) f->fill(mine, 0);

  std::mt19937_64 random(31);
  const Decomposition target = random_decomposition(kRows, nprocs_, random);
  // ja replaced on the last process, then values on the first: a malloc'ed
  // copy of the block's nonzeros where flexmpi's window was.
  const std::int64_t nnz = csr.nnz_of(mine);
  const auto rejected_with_replaced = [&](auto*& pointer, int on_rank) {
    using Element = std::remove_reference_t<decltype(*pointer)>;
    Element* const in_window = pointer;
    Element* replaced = nullptr;
    if (rank_ == on_rank && mine.count > 0) {
      replaced =
          static_cast<Element*>(std::malloc(std::max<std::int64_t>(nnz, 1) * sizeof(Element)));
      std::memcpy(replaced, in_window, nnz * sizeof(Element));
      pointer = replaced;
    }
    expect_rejected([&] { registry.redistribute(blocks, target, comm_); }, all, mine,
                    "not where flexmpi put");
    pointer = in_window;
    std::free(replaced);
  };
  rejected_with_replaced(csr.ja, nprocs_ - 1);
  rejected_with_replaced(csr.values, 0);

  // The first block's nonzero count changed: the blocks after it would no
  // longer find their nonzeros where they are.
  if (rank_ == 0) csr.ia[mine.count] += 1;
  try {
    registry.redistribute(blocks, target, comm_);
    ADD_FAILURE() << "a changed nonzero count was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), Errc::invalid_argument) << error.what();
    // One process alone holds more than the matrix has.
    const char* needle = nprocs_ > 1 ? "must not change" : "more than the registered nnz";
    EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
  }
  if (rank_ == 0) csr.ia[mine.count] -= 1;
  for (Followed* f : all) {
    double sum = 0.0;
    EXPECT_EQ(f->mismatches(mine, 0, &sum), 0);
  }

  // Afterwards the structures still move.
  for (Followed* f : all) f->fill(mine, 1);
  registry.redistribute(blocks, target, comm_);
  for (Followed* f : all) {
    double sum = 0.0;
    EXPECT_EQ(f->mismatches(target[rank_], 1, &sum), 0);
  }
}

}  // namespace
}  // namespace flexmpi
