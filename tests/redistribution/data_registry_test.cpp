// DataRegistry::redistribute (thesis 4.5, Alg. 4) on 1-4 processes: every
// structure kind x scheme, random decompositions (seeded, the same on every
// process), round trips; every element checked against a function of its
// global index; bytes and messages against a row-by-row brute force of the
// minimum; bad input rejected on every process with the structures
// untouched bit for bit; message splitting with a lowered limit.
#include "redistribution/data_registry.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../support/random_decomposition.hpp"
#include "../support/world_test.hpp"
#include "flexmpi/error.hpp"
#include "redistribution/transfer_plan.hpp"

namespace flexmpi {
namespace {

using test::owner;
using test::random_decomposition;

// ---- values: a function of the global position and of the iteration ("epoch") ----

double vector_value(std::int64_t row, int epoch) { return 3.0 * row + 0.5 * epoch + 1.0; }
double matrix_value(std::int64_t row, std::int64_t column, int epoch) {
  return 1000.0 * row + column + 0.25 * epoch + 0.125;
}
// What a replicated copy holds where this process has never been the owner.
double stale_value(std::int64_t index, int rank) { return -1.0 - index - 1e6 * rank; }

// Sparse pattern: row (or column, CSC) i has 0..5 nonzeros at i, i+1, ... mod size.
std::int64_t row_nnz(std::int64_t row, std::int64_t size) {
  return std::min<std::int64_t>((row * 7 + 3) % 6, size);
}
int inner_index(std::int64_t row, std::int64_t k, std::int64_t size) {
  return static_cast<int>((row + k) % size);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool contains(const RowBlock& block, std::int64_t row) {
  return row >= block.displ && row < block.displ + block.count;
}

// Raw bytes of every array of a structure and the pointers themselves.
using Snapshot = std::vector<std::pair<const void*, std::vector<char>>>;

void add_bytes(Snapshot& snapshot, const void* data, std::size_t bytes) {
  const char* begin = static_cast<const char*>(data);
  snapshot.emplace_back(
      data, data == nullptr ? std::vector<char>{} : std::vector<char>(begin, begin + bytes));
}

// ---- test structures: each keeps the user's pointer(s) and knows what they must hold ----

class TestStructure {
 public:
  TestStructure(Scheme scheme, std::int64_t size, int rank)
      : scheme_(scheme), size_(size), rank_(rank) {}
  virtual ~TestStructure() = default;
  [[nodiscard]] bool replicated() const { return scheme_ == Scheme::replicated; }

  virtual std::string name() const = 0;
  virtual void register_in(DataRegistry& registry) = 0;
  /// Allocates (malloc) and fills this process's arrays for block `mine`, epoch 0.
  virtual void create(const RowBlock& mine) = 0;
  /// The owner computes: the rows of `mine` take the values of `epoch`.
  virtual void compute(const RowBlock& mine, int epoch) = 0;
  /// The data moved from `old_block` to `mine` after rows were computed at `epoch`.
  virtual void expect_moved(const RowBlock& old_block, const RowBlock& mine, int epoch) = 0;
  /// Number of elements (each checked) that differ from what they must be.
  virtual std::int64_t mismatches(const RowBlock& mine, int epoch) const = 0;
  /// The byte counts of the transfers a run of rows that changes owner needs (the minimum).
  virtual std::vector<std::uint64_t> segments(std::int64_t first, std::int64_t rows) const = 0;
  virtual Snapshot snapshot(const RowBlock& mine) const = 0;
  /// The pointers a null-pointer test may clear on a process holding rows.
  virtual std::vector<void**> pointers() = 0;

 protected:
  Scheme scheme_;
  std::int64_t size_;
  int rank_;
};

// Vector or dense matrix of doubles: `width` elements per row (1 or size).
class ArrayStructure : public TestStructure {
 public:
  ArrayStructure(bool dense, Scheme scheme, std::int64_t size, int rank)
      : TestStructure(scheme, size, rank), dense_(dense), width_(dense ? size : 1) {}
  ~ArrayStructure() override { std::free(data_); }

  std::string name() const override {
    return std::string(replicated() ? "replicated " : "distributed ") +
           (dense_ ? "dense" : "vector");
  }
  void register_in(DataRegistry& registry) override {
    if (dense_) {
      registry.register_dense(reinterpret_cast<void**>(&data_), size_, MPI_DOUBLE, scheme_);
    } else {
      registry.register_vector(reinterpret_cast<void**>(&data_), size_, MPI_DOUBLE, scheme_);
    }
  }
  void create(const RowBlock& mine) override {
    const std::int64_t rows = replicated() ? size_ : mine.count;
    // A process without rows may have no buffer at all (a spawned process).
    data_ = rows == 0 ? nullptr : static_cast<double*>(std::malloc(rows * width_ * sizeof(double)));
    for (std::int64_t i = 0; i < rows * width_; ++i) data_[i] = stale_value(i, rank_);
    shadow_.assign(data_, data_ + (replicated() ? rows * width_ : 0));
    compute(mine, 0);
  }
  void compute(const RowBlock& mine, int epoch) override {
    for (std::int64_t row = mine.displ; row < mine.displ + mine.count; ++row) {
      const std::int64_t local = replicated() ? row : row - mine.displ;
      for (std::int64_t c = 0; c < width_; ++c) {
        data_[local * width_ + c] = value(row, c, epoch);
        if (replicated()) shadow_[local * width_ + c] = value(row, c, epoch);
      }
    }
  }
  void expect_moved(const RowBlock& old_block, const RowBlock& mine, int epoch) override {
    if (!replicated()) return;
    // New owners hold the old owners' values; nothing else changes.
    for (std::int64_t row = mine.displ; row < mine.displ + mine.count; ++row) {
      if (contains(old_block, row)) continue;
      for (std::int64_t c = 0; c < width_; ++c) shadow_[row * width_ + c] = value(row, c, epoch);
    }
  }
  std::int64_t mismatches(const RowBlock& mine, int epoch) const override {
    std::int64_t wrong = 0;
    if (replicated()) {
      for (std::size_t i = 0; i < shadow_.size(); ++i) wrong += !same_bits(data_[i], shadow_[i]);
      return wrong;
    }
    if (mine.count > 0 && data_ == nullptr) return mine.count * width_;
    for (std::int64_t k = 0; k < mine.count; ++k) {
      for (std::int64_t c = 0; c < width_; ++c) {
        wrong += !same_bits(data_[k * width_ + c], value(mine.displ + k, c, epoch));
      }
    }
    return wrong;
  }
  std::vector<std::uint64_t> segments(std::int64_t, std::int64_t rows) const override {
    return {static_cast<std::uint64_t>(rows * width_) * sizeof(double)};
  }
  Snapshot snapshot(const RowBlock& mine) const override {
    Snapshot s;
    add_bytes(s, data_, (replicated() ? size_ : mine.count) * width_ * sizeof(double));
    return s;
  }
  std::vector<void**> pointers() override { return {reinterpret_cast<void**>(&data_)}; }

 private:
  double value(std::int64_t row, std::int64_t column, int epoch) const {
    return dense_ ? matrix_value(row, column, epoch) : vector_value(row, epoch);
  }
  bool dense_;
  std::int64_t width_;
  double* data_ = nullptr;
  std::vector<double> shadow_;  // replicated: what the copy must hold
};

// CSR (row blocks) or CSC (column blocks) matrix of doubles. The generator
// is the same: "row" below is the blocked dimension.
class SparseStructure : public TestStructure {
 public:
  SparseStructure(bool csc, Scheme scheme, std::int64_t size, int rank,
                  std::int64_t registered_nnz_delta = 0)
      : TestStructure(scheme, size, rank), csc_(csc), nnz_delta_(registered_nnz_delta) {}
  ~SparseStructure() override {
    std::free(ptr_);
    std::free(idx_);
    std::free(values_);
  }

  std::int64_t global_nnz() const {
    std::int64_t nnz = 0;
    for (std::int64_t row = 0; row < size_; ++row) nnz += row_nnz(row, size_);
    return nnz;
  }
  std::string name() const override {
    return std::string(replicated() ? "replicated " : "distributed ") + (csc_ ? "CSC" : "CSR");
  }
  void register_in(DataRegistry& registry) override {
    const std::int64_t nnz = global_nnz() + nnz_delta_;
    if (csc_) {
      registry.register_sparse_csc(&ptr_, &idx_, reinterpret_cast<void**>(&values_), size_, nnz,
                                   MPI_DOUBLE, scheme_);
    } else {
      registry.register_sparse(&ptr_, &idx_, reinterpret_cast<void**>(&values_), size_, nnz,
                               MPI_DOUBLE, scheme_);
    }
  }
  void create(const RowBlock& mine) override {
    const RowBlock held = replicated() ? RowBlock{size_, 0} : mine;
    std::int64_t nnz = 0;
    for (std::int64_t row = held.displ; row < held.displ + held.count; ++row)
      nnz += row_nnz(row, size_);
    // A process without rows may have no arrays at all (a spawned process).
    ptr_ =
        held.count == 0 ? nullptr : static_cast<int*>(std::malloc((held.count + 1) * sizeof(int)));
    idx_ = nnz == 0 ? nullptr : static_cast<int*>(std::malloc(nnz * sizeof(int)));
    values_ = nnz == 0 ? nullptr : static_cast<double*>(std::malloc(nnz * sizeof(double)));
    if (ptr_ != nullptr) ptr_[0] = 0;
    for (std::int64_t k = 0; k < held.count; ++k) {
      const std::int64_t row = held.displ + k;
      ptr_[k + 1] = static_cast<int>(ptr_[k] + row_nnz(row, size_));
      for (std::int64_t j = 0; j < row_nnz(row, size_); ++j) {
        idx_[ptr_[k] + j] = inner_index(row, j, size_);
        values_[ptr_[k] + j] = stale_value(ptr_[k] + j, rank_);
      }
    }
    shadow_.assign(values_, values_ + (replicated() ? nnz : 0));
    compute(mine, 0);
  }
  void compute(const RowBlock& mine, int epoch) override {
    for (std::int64_t row = mine.displ; row < mine.displ + mine.count; ++row) {
      const std::int64_t local = replicated() ? row : row - mine.displ;
      for (std::int64_t j = 0; j < row_nnz(row, size_); ++j) {
        const double v = matrix_value(row, inner_index(row, j, size_), epoch);
        values_[ptr_[local] + j] = v;
        if (replicated()) shadow_[ptr_[local] + j] = v;
      }
    }
  }
  void expect_moved(const RowBlock& old_block, const RowBlock& mine, int epoch) override {
    if (!replicated()) return;
    for (std::int64_t row = mine.displ; row < mine.displ + mine.count; ++row) {
      if (contains(old_block, row)) continue;
      for (std::int64_t j = 0; j < row_nnz(row, size_); ++j) {
        shadow_[ptr_[row] + j] = matrix_value(row, inner_index(row, j, size_), epoch);
      }
    }
  }
  std::int64_t mismatches(const RowBlock& mine, int epoch) const override {
    const RowBlock held = replicated() ? RowBlock{size_, 0} : mine;
    if (held.count > 0 && ptr_ == nullptr) return held.count;
    std::int64_t wrong = held.count > 0 && ptr_[0] != 0;
    std::int64_t position = 0;
    for (std::int64_t k = 0; k < held.count; ++k) {
      const std::int64_t row = held.displ + k;
      wrong += ptr_[k + 1] - ptr_[k] != row_nnz(row, size_);
      if (ptr_[k] != position) return wrong + 1;  // the rest cannot be located
      for (std::int64_t j = 0; j < row_nnz(row, size_); ++j, ++position) {
        wrong += idx_[position] != inner_index(row, j, size_);
        const double expected =
            replicated() ? shadow_[position] : matrix_value(row, inner_index(row, j, size_), epoch);
        wrong += !same_bits(values_[position], expected);
      }
    }
    return wrong;
  }
  std::vector<std::uint64_t> segments(std::int64_t first, std::int64_t rows) const override {
    std::uint64_t nnz = 0;
    for (std::int64_t row = first; row < first + rows; ++row) nnz += row_nnz(row, size_);
    // Replicated: the pattern is everywhere, only values move.
    if (replicated()) return {nnz * sizeof(double)};
    return {static_cast<std::uint64_t>(rows) * sizeof(int), nnz * sizeof(int),
            nnz * sizeof(double)};
  }
  Snapshot snapshot(const RowBlock& mine) const override {
    const std::int64_t rows = replicated() ? size_ : mine.count;
    const std::int64_t nnz = ptr_ == nullptr ? 0 : ptr_[rows];
    Snapshot s;
    add_bytes(s, ptr_, ptr_ == nullptr ? 0 : (rows + 1) * sizeof(int));
    add_bytes(s, idx_, nnz * sizeof(int));
    add_bytes(s, values_, nnz * sizeof(double));
    return s;
  }
  std::vector<void**> pointers() override {
    return {reinterpret_cast<void**>(&ptr_), reinterpret_cast<void**>(&idx_),
            reinterpret_cast<void**>(&values_)};
  }
  int* row_pointers() { return ptr_; }

 private:
  bool csc_;
  std::int64_t nnz_delta_;
  int* ptr_ = nullptr;
  int* idx_ = nullptr;
  double* values_ = nullptr;
  std::vector<double> shadow_;
};

enum class Kind { vector, dense, csr, csc };
constexpr Kind kKinds[] = {Kind::vector, Kind::dense, Kind::csr, Kind::csc};
constexpr Scheme kSchemes[] = {Scheme::distributed, Scheme::replicated};

std::unique_ptr<TestStructure> make(Kind kind, Scheme scheme, std::int64_t size, int rank) {
  switch (kind) {
    case Kind::vector:
      return std::make_unique<ArrayStructure>(false, scheme, size, rank);
    case Kind::dense:
      return std::make_unique<ArrayStructure>(true, scheme, size, rank);
    case Kind::csr:
      return std::make_unique<SparseStructure>(false, scheme, size, rank);
    case Kind::csc:
      return std::make_unique<SparseStructure>(true, scheme, size, rank);
  }
  return nullptr;
}

using Structures = std::vector<std::unique_ptr<TestStructure>>;

Snapshot snapshot_all(const Structures& structures, const RowBlock& mine) {
  Snapshot all;
  for (const auto& s : structures) {
    Snapshot one = s->snapshot(mine);
    all.insert(all.end(), one.begin(), one.end());
  }
  return all;
}

// The minimum a change moves on process `rank`, row by row: every row whose
// owner changes leaves its old owner once and reaches its new owner once.
RedistributionStats minimum(const Structures& structures, const Decomposition& from,
                            const Decomposition& to, std::int64_t rows, int rank,
                            std::uint64_t max_message_bytes) {
  RedistributionStats expected;
  std::int64_t row = 0;
  while (row < rows) {
    const int sender = owner(from, row), receiver = owner(to, row);
    std::int64_t end = row + 1;
    while (end < rows && owner(from, end) == sender && owner(to, end) == receiver) ++end;
    if (sender != receiver && (sender == rank || receiver == rank)) {
      for (const auto& s : structures) {
        for (const std::uint64_t bytes : s->segments(row, end - row)) {
          if (sender == rank) {
            expected.bytes_sent += bytes;
            expected.messages += message_count(bytes, max_message_bytes);
          } else {
            expected.bytes_received += bytes;
          }
        }
      }
    }
    row = end;
  }
  return expected;
}

class Redistribution : public test::WorldTest {
 protected:
  // Creates and registers the structures on the block decomposition, then
  // runs `rounds` round trips (random decomposition, then back) plus
  // `random_steps` random changes, checking every element and the stats
  // after each move.
  void round_trips(Structures& structures, std::int64_t rows, int rounds, int random_steps,
                   std::uint64_t max_message_bytes = kMaxMessageBytes, std::uint64_t seed = 42) {
    DataRegistry registry;
    registry.set_max_message_bytes(max_message_bytes);
    const Decomposition initial = block_decomposition(rows, nprocs_);
    Decomposition current = initial;
    for (auto& s : structures) {
      s->create(current[rank_]);
      s->register_in(registry);
    }
    std::mt19937_64 random(seed);
    std::vector<Decomposition> targets;
    for (int round = 0; round < rounds; ++round) {
      targets.push_back(random_decomposition(rows, nprocs_, random));
      targets.push_back(initial);
    }
    for (int step = 0; step < random_steps; ++step) {
      targets.push_back(random_decomposition(rows, nprocs_, random));
    }
    std::uint64_t moved = 0;
    for (std::size_t step = 0; step < targets.size(); ++step) {
      const Decomposition& target = targets[step];
      const int epoch = static_cast<int>(step) + 1;
      for (auto& s : structures) s->compute(current[rank_], epoch);
      const RedistributionStats stats = registry.redistribute(current, target, comm_);
      const RedistributionStats expected =
          minimum(structures, current, target, rows, rank_, max_message_bytes);
      EXPECT_EQ(stats.bytes_sent, expected.bytes_sent) << "step " << step;
      EXPECT_EQ(stats.bytes_received, expected.bytes_received) << "step " << step;
      EXPECT_EQ(stats.messages, expected.messages) << "step " << step;
      EXPECT_GE(stats.seconds, 0.0);
      for (auto& s : structures) {
        s->expect_moved(current[rank_], target[rank_], epoch);
        EXPECT_EQ(s->mismatches(target[rank_], epoch), 0)
            << s->name() << ", step " << step << ", rank " << rank_;
      }
      EXPECT_EQ(registry.local_block(), target[rank_]);
      moved += stats.bytes_sent;
      current = target;
    }
    // Something moved at all (with more than one process and some rows).
    std::uint64_t total = 0;
    MPI_Allreduce(&moved, &total, 1, MPI_UINT64_T, MPI_SUM, comm_);
    if (nprocs_ > 1 && rows > 1) {
      EXPECT_GT(total, 0u);
    }
  }

  // Calls redistribute(from, to) expecting it to fail with `code` and a
  // message containing `needle` on this process, and the data untouched.
  void expect_rejected(DataRegistry& registry, const Structures& structures,
                       const Decomposition& from, const Decomposition& to, const RowBlock& mine,
                       const std::string& needle, Errc code = Errc::invalid_argument) {
    const Snapshot before = snapshot_all(structures, mine);
    const std::optional<RowBlock> block_before = registry.local_block();
    try {
      registry.redistribute(from, to, comm_);
      ADD_FAILURE() << "no error; expected one containing \"" << needle << "\"";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), code) << error.what();
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos)
          << "message: " << error.what() << "\nexpected to contain: " << needle;
    }
    EXPECT_TRUE(snapshot_all(structures, mine) == before) << "data changed by a failed call";
    EXPECT_EQ(registry.local_block(), block_before);
  }
};

// ---- every kind x scheme -------------------------------------------------------------

struct Case {
  Kind kind;
  Scheme scheme;
};

class EveryKind : public Redistribution, public ::testing::WithParamInterface<Case> {};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  static const char* kNames[] = {"Vector", "Dense", "Csr", "Csc"};
  return std::string(kNames[static_cast<int>(info.param.kind)]) +
         (info.param.scheme == Scheme::distributed ? "Distributed" : "Replicated");
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (Kind kind : kKinds) {
    for (Scheme scheme : kSchemes) cases.push_back({kind, scheme});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Redistribution, EveryKind, ::testing::ValuesIn(all_cases()), case_name);

TEST_P(EveryKind, RandomRoundTripsMoveEveryElementOnceAndExactly) {
  const std::int64_t rows = GetParam().kind == Kind::dense ? 37 : 503;
  Structures structures;
  structures.push_back(make(GetParam().kind, GetParam().scheme, rows, rank_));
  round_trips(structures, rows, 3, 6);
}

TEST_P(EveryKind, FewerRowsThanProcesses) {
  Structures structures;
  structures.push_back(make(GetParam().kind, GetParam().scheme, 3, rank_));
  round_trips(structures, 3, 2, 4, kMaxMessageBytes, 7);
}

TEST_P(EveryKind, SplitsTransfersAtTheMessageLimit) {
  // 7 bytes: not a multiple of any element, so elements straddle messages.
  const std::int64_t rows = GetParam().kind == Kind::dense ? 11 : 97;
  Structures structures;
  structures.push_back(make(GetParam().kind, GetParam().scheme, rows, rank_));
  round_trips(structures, rows, 1, 2, 7);
}

TEST_P(EveryKind, BadInputIsRejectedEverywhereAndChangesNothing) {
  const std::int64_t rows = 23;  // >= 5 rows per process up to 4 processes
  Structures structures;
  structures.push_back(make(GetParam().kind, GetParam().scheme, rows, rank_));
  DataRegistry registry;
  const Decomposition from = block_decomposition(rows, nprocs_);
  const RowBlock& mine = from[rank_];
  structures[0]->create(mine);
  structures[0]->register_in(registry);
  std::mt19937_64 random(5);
  const Decomposition good = random_decomposition(rows, nprocs_, random);
  const int last = nprocs_ - 1;

  Decomposition bad = good;
  bad.push_back({0, rows});
  expect_rejected(registry, structures, from, bad, mine, "blocks for");
  bad.assign(good.begin(), good.end() - 1);
  expect_rejected(registry, structures, from, bad, mine, "blocks for");
  bad = from;
  bad.pop_back();
  expect_rejected(registry, structures, bad, good, mine, "from (the old decomposition)");

  bad = from;  // do not add up
  bad[last].count -= 1;
  expect_rejected(registry, structures, from, bad, mine, "cover 22 rows");
  bad[last].count += 2;
  expect_rejected(registry, structures, from, bad, mine, "beyond the 23 rows");

  bad = from;  // negative
  bad[0].count = -bad[0].count;
  expect_rejected(registry, structures, from, bad, mine, "negative count");

  bad = from;  // overlapping, or before the first row
  if (nprocs_ > 1) {
    bad[1].displ -= 1;
    bad[1].count += 1;
  } else {
    bad[0].displ = -1;
  }
  expect_rejected(registry, structures, from, bad, mine,
                  nprocs_ > 1 ? "overlaps" : "starts before row 0");

  bad = from;  // gap
  if (nprocs_ > 1) {
    bad[0].count -= 1;
  } else {
    bad[0] = {rows - 1, 1};
  }
  expect_rejected(registry, structures, bad, good, mine, "gap");

  // A null pointer on one process only: all of them fail.
  for (void** pointer : structures[0]->pointers()) {
    void* saved = *pointer;
    if (rank_ == last) *pointer = nullptr;
    expect_rejected(registry, structures, from, good, mine, "null");
    *pointer = saved;
  }

  // One process disagrees about the new decomposition.
  if (nprocs_ > 1) {
    const Decomposition other = rank_ == 0 ? from : good;
    expect_rejected(registry, structures, from, other, mine, "different decompositions");
  }

  if (GetParam().kind == Kind::csr || GetParam().kind == Kind::csc) {
    int* ptr = static_cast<SparseStructure&>(*structures[0]).row_pointers();
    const std::int64_t first = GetParam().scheme == Scheme::replicated ? mine.displ : 0;
    if (rank_ == last) std::swap(ptr[first + 1], ptr[first + 3]);
    expect_rejected(registry, structures, from, good, mine, "decrease");
    if (rank_ == last) std::swap(ptr[first + 1], ptr[first + 3]);
    if (rank_ == last) ptr[0] = 1;
    expect_rejected(registry, structures, from, good, mine, "expected 0");
    if (rank_ == last) ptr[0] = 0;

    // Registered with the wrong global nnz.
    Structures wrong;
    wrong.push_back(std::make_unique<SparseStructure>(GetParam().kind == Kind::csc,
                                                      GetParam().scheme, rows, rank_, 1));
    wrong[0]->create(mine);
    DataRegistry other;
    wrong[0]->register_in(other);
    expect_rejected(other, wrong, from, good, mine, "registered with nnz");
  }

  // Still usable, and right, after all that.
  structures[0]->compute(mine, 9);
  registry.redistribute(from, good, comm_);
  structures[0]->expect_moved(mine, good[rank_], 9);
  EXPECT_EQ(structures[0]->mismatches(good[rank_], 9), 0);
}

// ---- several structures sharing one decomposition ---------------------------------------

Structures every_structure(std::int64_t rows, int rank) {
  Structures structures;
  for (Kind kind : kKinds) {
    for (Scheme scheme : kSchemes) structures.push_back(make(kind, scheme, rows, rank));
  }
  return structures;
}

TEST_F(Redistribution, AllKindsTogetherShareOneDecomposition) {
  Structures structures = every_structure(61, rank_);
  round_trips(structures, 61, 3, 5, kMaxMessageBytes, 11);
}

TEST_F(Redistribution, AllKindsTogetherWithSplitMessages) {
  Structures structures = every_structure(29, rank_);
  round_trips(structures, 29, 2, 2, 13, 12);
}

TEST_F(Redistribution, EmptyStructures) {
  Structures structures = every_structure(0, rank_);
  round_trips(structures, 0, 1, 1);
}

TEST_F(Redistribution, SpawnAndRemoveLikeChanges) {
  // All rows on the first process, then on the last, then spread: what
  // spawning (old block empty, no buffers yet) and removing (new block
  // empty) do to the data.
  const std::int64_t rows = 40;
  Structures structures = every_structure(rows, rank_);
  DataRegistry registry;
  Decomposition first(nprocs_, RowBlock{0, rows}), last(nprocs_, RowBlock{0, 0});
  first[0] = {rows, 0};
  for (int p = 1; p < nprocs_; ++p) first[p] = {0, rows};
  last[nprocs_ - 1] = {rows, 0};
  for (int p = 0; p < nprocs_ - 1; ++p) last[p] = {0, 0};
  for (auto& s : structures) {
    s->create(first[rank_]);
    s->register_in(registry);
  }
  Decomposition current = first;
  int epoch = 0;
  for (const Decomposition& target : {last, block_decomposition(rows, nprocs_), first}) {
    ++epoch;
    for (auto& s : structures) s->compute(current[rank_], epoch);
    const RedistributionStats stats = registry.redistribute(current, target, comm_);
    const RedistributionStats expected =
        minimum(structures, current, target, rows, rank_, kMaxMessageBytes);
    EXPECT_EQ(stats.bytes_sent, expected.bytes_sent);
    EXPECT_EQ(stats.bytes_received, expected.bytes_received);
    for (auto& s : structures) {
      s->expect_moved(current[rank_], target[rank_], epoch);
      EXPECT_EQ(s->mismatches(target[rank_], epoch), 0) << s->name() << ", epoch " << epoch;
    }
    current = target;
  }
}

// A vector of structs with padding: data moves as whole extents.
struct Particle {
  double x;
  int id;
};

TEST_F(Redistribution, DerivedDatatypeWithPadding) {
  MPI_Datatype particle = MPI_DATATYPE_NULL, raw = MPI_DATATYPE_NULL;
  const int lengths[2] = {1, 1};
  const MPI_Aint displacements[2] = {offsetof(Particle, x), offsetof(Particle, id)};
  const MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
  MPI_Type_create_struct(2, lengths, displacements, types, &raw);
  MPI_Type_create_resized(raw, 0, sizeof(Particle), &particle);
  MPI_Type_commit(&particle);

  const std::int64_t rows = 77;
  Decomposition current = block_decomposition(rows, nprocs_);
  auto* data = static_cast<Particle*>(std::malloc(current[rank_].count * sizeof(Particle) + 1));
  for (std::int64_t k = 0; k < current[rank_].count; ++k) {
    data[k] = {vector_value(current[rank_].displ + k, 0),
               static_cast<int>(current[rank_].displ + k)};
  }
  DataRegistry registry;
  registry.register_vector(reinterpret_cast<void**>(&data), rows, particle, Scheme::distributed);
  std::mt19937_64 random(3);
  for (int step = 0; step < 4; ++step) {
    const Decomposition target = random_decomposition(rows, nprocs_, random);
    const RedistributionStats stats = registry.redistribute(current, target, comm_);
    std::uint64_t sent = 0;
    for (std::int64_t row = 0; row < rows; ++row) {
      sent += owner(current, row) == rank_ && owner(target, row) != rank_ ? sizeof(Particle) : 0;
    }
    EXPECT_EQ(stats.bytes_sent, sent);
    for (std::int64_t k = 0; k < target[rank_].count; ++k) {
      EXPECT_EQ(data[k].id, target[rank_].displ + k);
      EXPECT_EQ(data[k].x, vector_value(target[rank_].displ + k, 0));
    }
    current = target;
  }
  std::free(data);
  MPI_Type_free(&particle);
  MPI_Type_free(&raw);
}

TEST_F(Redistribution, BufferSmallerThanItsRowsIsRefusedEverywhereAndChangesNothing) {
  if (nprocs_ < 2) {
    GTEST_SKIP() << "needs a process that receives rows";
  }
  // A dense 2^26 x 2^26 matrix whose old "block" is a 16-byte stand-in: the
  // rows are checked against malloc_usable_size before anything moves, so
  // it is never read, and every process refuses the call.
  const std::int64_t rows = std::int64_t{1} << 26;
  void* data = std::malloc(16);
  std::memset(data, 0x5a, 16);
  DataRegistry registry;
  registry.register_dense(&data, rows, MPI_DOUBLE, Scheme::distributed);
  Decomposition from(nprocs_, RowBlock{0, rows}), to(nprocs_, RowBlock{0, 0});
  from[0] = {rows, 0};
  to[nprocs_ - 1] = {rows, 0};
  for (int p = 0; p < nprocs_ - 1; ++p) to[p] = {0, 0};
  void* const before = data;
  try {
    registry.redistribute(from, to, comm_);
    ADD_FAILURE() << "a 16-byte buffer for 2^26 rows was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), Errc::invalid_argument) << error.what();
    EXPECT_NE(std::string(error.what()).find("malloc_usable_size"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(data, before);
  for (int k = 0; k < 16; ++k) EXPECT_EQ(static_cast<unsigned char*>(data)[k], 0x5a);
  std::free(data);
}

// ---- registration ----------------------------------------------------------------------

TEST_F(Redistribution, RegistrationRejectsBadArguments) {
  DataRegistry registry;
  double* x = nullptr;
  double* y = nullptr;
  int* ia = nullptr;
  int* ja = nullptr;
  const auto rejects = [](auto&& call, const std::string& needle) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one containing \"" << needle << "\"";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), Errc::invalid_argument);
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
    }
  };
  void** px = reinterpret_cast<void**>(&x);
  void** py = reinterpret_cast<void**>(&y);
  rejects([&] { registry.register_vector(nullptr, 10, MPI_DOUBLE, Scheme::distributed); }, "null");
  rejects([&] { registry.register_vector(px, -1, MPI_DOUBLE, Scheme::distributed); },
          "negative size");
  rejects([&] { registry.register_dense(px, -1, MPI_DOUBLE, Scheme::replicated); },
          "negative size");
  rejects([&] { registry.register_vector(px, 10, MPI_DATATYPE_NULL, Scheme::distributed); },
          "MPI_DATATYPE_NULL");
  rejects([&] { registry.register_vector(px, 10, MPI_DOUBLE, static_cast<Scheme>(7)); }, "scheme");

  MPI_Datatype uncommitted = MPI_DATATYPE_NULL, shifted = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_DOUBLE, &uncommitted);
  rejects([&] { registry.register_vector(px, 10, uncommitted, Scheme::distributed); },
          "not committed");
  MPI_Type_create_resized(MPI_DOUBLE, -8, 16, &shifted);
  MPI_Type_commit(&shifted);
  rejects([&] { registry.register_vector(px, 10, shifted, Scheme::distributed); }, "lower bound");
  MPI_Type_free(&shifted);
  // A committed copy of the same type is fine.
  MPI_Type_commit(&uncommitted);
  registry.register_vector(px, 10, uncommitted, Scheme::distributed);
  MPI_Type_free(&uncommitted);

  rejects([&] { registry.register_vector(px, 10, MPI_DOUBLE, Scheme::replicated); },
          "already registered");
  rejects([&] { registry.register_vector(py, 11, MPI_DOUBLE, Scheme::replicated); },
          "differs from the size 10");
  rejects([&] { registry.register_sparse(&ia, &ja, px, 10, 5, MPI_DOUBLE, Scheme::distributed); },
          "already registered");
  rejects([&] { registry.register_sparse(&ia, &ia, py, 10, 5, MPI_DOUBLE, Scheme::distributed); },
          "must be different");
  rejects(
      [&] { registry.register_sparse(nullptr, &ja, py, 10, 5, MPI_DOUBLE, Scheme::distributed); },
      "ia pointer is null");
  rejects([&] { registry.register_sparse(&ia, &ja, py, 10, -5, MPI_DOUBLE, Scheme::distributed); },
          "negative nnz");
  rejects(
      [&] {
        registry.register_sparse_csc(&ia, nullptr, py, 10, 5, MPI_DOUBLE, Scheme::distributed);
      },
      "row index pointer is null");

  DataRegistry big;
  rejects(
      [&] {
        big.register_sparse(&ia, &ja, py, std::int64_t{1} << 31, 5, MPI_DOUBLE,
                            Scheme::distributed);
      },
      "exceeds INT_MAX");
  rejects(
      [&] {
        big.register_sparse(&ia, &ja, py, 10, std::int64_t{1} << 31, MPI_DOUBLE,
                            Scheme::replicated);
      },
      "does not fit int");
  rejects([&] { big.register_dense(py, std::int64_t{1} << 31, MPI_DOUBLE, Scheme::distributed); },
          "overflows");
  // 64-bit sizes and nonzero counts are fine where the format allows them.
  big.register_sparse(&ia, &ja, py, 10, std::int64_t{1} << 40, MPI_DOUBLE, Scheme::distributed);
  EXPECT_EQ(big.rows(), 10);

  EXPECT_EQ(registry.structure_count(), 1u);
  rejects([&] { registry.unregister(py); }, "not registered");
  registry.unregister(px);
  EXPECT_TRUE(registry.empty());
  EXPECT_EQ(registry.rows(), -1);
  registry.register_vector(py, 11, MPI_DOUBLE, Scheme::replicated);  // any size again
  rejects([&] { registry.set_max_message_bytes(0); }, "max_message_bytes");
}

TEST_F(Redistribution, RejectsTwoStructuresOnOneBuffer) {
  const std::int64_t rows = 12;
  const Decomposition blocks = block_decomposition(rows, nprocs_);
  double* x = static_cast<double*>(std::malloc(rows * sizeof(double)));
  double* alias = x;
  DataRegistry registry;
  registry.register_vector(reinterpret_cast<void**>(&x), rows, MPI_DOUBLE, Scheme::replicated);
  registry.register_vector(reinterpret_cast<void**>(&alias), rows, MPI_DOUBLE, Scheme::replicated);
  try {
    registry.redistribute(blocks, blocks, comm_);
    ADD_FAILURE() << "aliased buffers accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("share a buffer"), std::string::npos) << error.what();
  }
  std::free(x);
}

TEST_F(Redistribution, RejectsBadCommunicators) {
  DataRegistry registry;
  const Decomposition blocks = block_decomposition(4, nprocs_);
  EXPECT_THROW(registry.redistribute(blocks, blocks, MPI_COMM_NULL), Error);
}

TEST_F(Redistribution, NothingRegisteredStillChecksAndAgrees) {
  DataRegistry registry;
  const Decomposition blocks = block_decomposition(10, nprocs_);
  const RedistributionStats stats = registry.redistribute(blocks, blocks, comm_);
  EXPECT_EQ(stats.bytes_sent, 0u);
  Decomposition bad = blocks;
  bad[0].count += 1;
  EXPECT_THROW(registry.redistribute(blocks, bad, comm_), Error);
}

TEST_F(Redistribution, LocalRowNonzerosForTheNnzWorkloadModel) {
  const std::int64_t rows = 19;
  Structures structures;
  structures.push_back(make(Kind::csr, Scheme::distributed, rows, rank_));
  structures.push_back(make(Kind::csr, Scheme::replicated, rows, rank_));
  structures.push_back(make(Kind::vector, Scheme::distributed, rows, rank_));
  DataRegistry registry;
  EXPECT_THROW((void)registry.local_row_nonzeros(), Error);  // block not known yet
  const Decomposition blocks = block_decomposition(rows, nprocs_);
  for (auto& s : structures) {
    s->create(blocks[rank_]);
    s->register_in(registry);
  }
  registry.set_local_block(blocks[rank_]);
  auto check = [&](const RowBlock& mine) {
    const std::vector<double> work = registry.local_row_nonzeros();
    ASSERT_EQ(work.size(), static_cast<std::size_t>(mine.count));
    for (std::int64_t k = 0; k < mine.count; ++k) {
      EXPECT_EQ(work[k], 2.0 * row_nnz(mine.displ + k, rows) + 1.0) << "row " << mine.displ + k;
    }
  };
  check(blocks[rank_]);
  std::mt19937_64 random(8);
  const Decomposition target = random_decomposition(rows, nprocs_, random);
  registry.redistribute(blocks, target, comm_);
  check(target[rank_]);
  EXPECT_THROW((void)registry.local_row_nonzeros({rows, 1}), Error);
}

TEST_F(Redistribution, GathersTheDecompositionChange) {
  const DecompositionChange change =
      gather_decomposition_change({rank_ + 1, rank_ * 10}, {2 * rank_, rank_ * 20}, comm_);
  ASSERT_EQ(change.from.size(), static_cast<std::size_t>(nprocs_));
  for (int p = 0; p < nprocs_; ++p) {
    EXPECT_EQ(change.from[p], (RowBlock{p + 1, p * 10}));
    EXPECT_EQ(change.to[p], (RowBlock{2 * p, p * 20}));
  }
}

}  // namespace
}  // namespace flexmpi
