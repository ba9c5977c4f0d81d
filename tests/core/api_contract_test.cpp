// The API fails at the call that is wrong, and keeps the contract of its
// header. The tests run in order on one runtime, whose
// decomposition has kRows rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "../support/mpi_test_util.hpp"

namespace flexmpi::test {
namespace {

using ::testing::HasSubstr;

constexpr int kRows = 1000;

struct Block {
  int count = 0;
  int displ = 0;
};

Block own_block() {
  Block block;
  must(XMPI_Get_wsize(world_rank(), world_size(), kRows, &block.count, &block.displ),
       "XMPI_Get_wsize");
  return block;
}

// A malloc'ed buffer of `block`'s rows whose element of global row i is `scale` * i.
double* rows_times(const Block& block, double scale) {
  auto* x = static_cast<double*>(std::malloc(sizeof(double) * (block.count > 0 ? block.count : 1)));
  for (int i = 0; i < block.count; ++i) x[i] = scale * (block.displ + i);
  return x;
}

// The rows, over every process, whose element is not `scale` * their global
// row: 0 when every row is where `block` says.
double misplaced(const double* x, const Block& block, double scale) {
  double wrong = 0.0;
  for (int i = 0; i < block.count; ++i) wrong += x[i] != scale * (block.displ + i) ? 1.0 : 0.0;
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
  return wrong;
}

// The sum of every element, over every process.
double checksum(const double* x, const Block& block) {
  double sum = 0.0;
  for (int i = 0; i < block.count; ++i) sum += x[i];
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
  return sum;
}

// Blocks in proportion to rank + 1 (every process gets another block than
// the equal one): this process's.
Block uneven_block() {
  const int size = world_size(), rank = world_rank();
  const int weights = size * (size + 1) / 2;
  Block block;
  for (int p = 0; p <= rank; ++p) {
    block.displ += block.count;
    block.count = p == size - 1 ? kRows - block.displ : kRows * (p + 1) / weights;
  }
  return block;
}

// Every process's block: counts, then displacements.
std::vector<int> decomposition() {
  const int size = world_size();
  std::vector<int> blocks(2 * static_cast<std::size_t>(size));
  must(XMPI_Get_decomposition(size, kRows, blocks.data(), blocks.data() + size),
       "XMPI_Get_decomposition");
  return blocks;
}

int blocks_changed() {
  int changed = -1;
  must(XMPI_Get_blocks_changed(&changed), "XMPI_Get_blocks_changed");
  return changed;
}

// The records of FLEXMPI_TRACE, one line each (rank 0 writes it).
std::vector<std::string> trace_lines() {
  std::vector<std::string> lines;
  std::ifstream trace(std::getenv("FLEXMPI_TRACE"));
  for (std::string line; std::getline(trace, line);) lines.push_back(line);
  return lines;
}

TEST(ApiContract, ARegistrationOfAnotherSizeIsRefusedNamingBothSizes) {
  const Block mine = own_block();  // the decomposition: kRows rows
  double* x = rows_times(mine, 1.0);
  EXPECT_EQ(XMPI_Register_vector(&x, mine.count, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("size=" + std::to_string(mine.count) + ":"));
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr(std::to_string(kRows) + " rows"));
  EXPECT_EQ(XMPI_Register_dense(&x, kRows + 1, MPI_DOUBLE, XMPI_REPLICATED), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("pass the global size"));
  EXPECT_EQ(runtime().state().data().structure_count(), 0u);  // nothing was registered
  // The global size is fine.
  EXPECT_EQ(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS)
      << XMPI_Last_error_message();
  EXPECT_EQ(XMPI_Unregister(&x), XMPI_SUCCESS) << XMPI_Last_error_message();
  std::free(x);
}

TEST(ApiContract, AnUnregisteredVectorStaysAndTheOthersStillMove) {
  const Block before = own_block();
  double* x = rows_times(before, 1.0);
  double* y = rows_times(before, -1.0);
  double* z = rows_times(before, 2.0);
  for (double** v : {&x, &y, &z}) {
    must(XMPI_Register_vector(v, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), "XMPI_Register_vector");
  }
  const double x_sum = checksum(x, before), z_sum = checksum(z, before);
  ASSERT_EQ(XMPI_Unregister(&y), XMPI_SUCCESS) << XMPI_Last_error_message();
  double* const y_buffer = y;

  const Block after = uneven_block();
  ASSERT_EQ(XMPI_Redistribute_data(before.count, before.displ, after.count, after.displ),
            XMPI_SUCCESS)
      << XMPI_Last_error_message();
  EXPECT_EQ(blocks_changed(), 1);
  EXPECT_EQ(checksum(x, after), x_sum);
  EXPECT_EQ(checksum(z, after), z_sum);
  EXPECT_EQ(misplaced(x, after, 1.0), 0.0);
  EXPECT_EQ(misplaced(z, after, 2.0), 0.0);
  // y is the application's: the same buffer, its old rows.
  EXPECT_EQ(y, y_buffer);
  EXPECT_EQ(misplaced(y, before, -1.0), 0.0);

  // Back to the blocks the other tests expect; a call that moves nothing says so.
  must(XMPI_Redistribute_data(after.count, after.displ, before.count, before.displ),
       "XMPI_Redistribute_data");
  EXPECT_EQ(blocks_changed(), 1);
  must(XMPI_Redistribute_data(before.count, before.displ, before.count, before.displ),
       "XMPI_Redistribute_data");
  EXPECT_EQ(blocks_changed(), 0);
  EXPECT_EQ(misplaced(x, before, 1.0), 0.0);
  for (double** v : {&x, &z}) must(XMPI_Unregister(v), "XMPI_Unregister");
  EXPECT_EQ(runtime().state().data().structure_count(), 0u);
  for (double* v : {x, y, z}) std::free(v);
}

TEST(ApiContract, UnregisteringAnUnknownAddressIsAnArgumentError) {
  const Block mine = own_block();
  double* x = rows_times(mine, 1.0);
  EXPECT_EQ(XMPI_Unregister(&x), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("not registered"));
  must(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), "XMPI_Register_vector");
  EXPECT_EQ(XMPI_Unregister(x), XMPI_ERR_ARG);  // the buffer, not the pointer's address
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("&x, not x"));
  EXPECT_EQ(XMPI_Unregister(nullptr), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("ptr_address"));
  EXPECT_EQ(XMPI_Unregister(&x), XMPI_SUCCESS) << XMPI_Last_error_message();
  EXPECT_EQ(XMPI_Unregister(&x), XMPI_ERR_ARG);  // once only
  std::free(x);
}

TEST(ApiContract, InPlaceVectorsAndMatricesMoveAndComeBackMalloced) {
  const Block before = own_block();
  double* x = rows_times(before, 3.0);
  double* a = rows_times(before, 1.0);  // a dense matrix's first column is enough here
  a = static_cast<double*>(std::realloc(a, sizeof(double) * kRows * (before.count + 1)));
  must(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED_IN_PLACE),
       "XMPI_Register_vector");
  must(XMPI_Register_dense(&a, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED_IN_PLACE),
       "XMPI_Register_dense");
  const double sum = checksum(x, before);
  const Block after = uneven_block();
  ASSERT_EQ(XMPI_Redistribute_data(before.count, before.displ, after.count, after.displ),
            XMPI_SUCCESS)
      << XMPI_Last_error_message();
  EXPECT_EQ(checksum(x, after), sum);
  EXPECT_EQ(misplaced(x, after, 3.0), 0.0);
  // The pointer is the block's first row in the window: the kept rows stayed.
  const int kept = std::max(before.displ, after.displ);
  if (kept < std::min(before.displ + before.count, after.displ + after.count)) {
    EXPECT_EQ(x[kept - after.displ], 3.0 * kept);
  }
  EXPECT_EQ(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, static_cast<XMPI_Scheme>(7)), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("XMPI_DISTRIBUTED_IN_PLACE"));
  EXPECT_EQ(runtime().state().data().structure_count(), 2u);

  must(XMPI_Redistribute_data(after.count, after.displ, before.count, before.displ),
       "XMPI_Redistribute_data");
  for (double** v : {&x, &a}) must(XMPI_Unregister(v), "XMPI_Unregister");
  // The application's malloc'ed buffers again: realloc and free work.
  x = static_cast<double*>(std::realloc(x, sizeof(double) * (before.count + 8)));
  EXPECT_EQ(misplaced(x, before, 3.0), 0.0);
  for (double* v : {x, a}) std::free(v);
}

// Rows of a diagonal matrix whose row i holds 2i at column i: the rows of
// `block` that are not, over every process (0 when every row is in place).
double misplaced_diagonal(const int* ia, const int* ja, const double* values, const Block& block) {
  double wrong = block.count > 0 && ia[0] != 0 ? 1.0 : 0.0;
  for (int i = 0; i < block.count; ++i) {
    wrong += ia[i + 1] != i + 1 || ja[i] != block.displ + i ? 1.0 : 0.0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
  return wrong + misplaced(values, block, 2.0);
}

TEST(ApiContract, InPlaceSparseMatrixMovesAndComesBackMalloced) {
  const Block before = own_block();
  auto* ia = static_cast<int*>(std::malloc(sizeof(int) * (before.count + 1)));
  auto* ja = static_cast<int*>(std::malloc(sizeof(int) * (before.count > 0 ? before.count : 1)));
  double* values = rows_times(before, 2.0);
  for (int i = 0; i <= before.count; ++i) ia[i] = i;
  for (int i = 0; i < before.count; ++i) ja[i] = before.displ + i;
  must(XMPI_Register_sparse(&ia, &ja, &values, kRows, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED_IN_PLACE),
       "XMPI_Register_sparse");
  const Block after = uneven_block();
  must(XMPI_Redistribute_data(before.count, before.displ, after.count, after.displ),
       "XMPI_Redistribute_data");
  EXPECT_EQ(misplaced_diagonal(ia, ja, values, after), 0.0);
  // The values are the block's nonzeros in a window of all of them.
  const int kept = std::max(before.displ, after.displ);
  const double* kept_value = values + (kept - after.displ);
  must(XMPI_Redistribute_data(after.count, after.displ, before.count, before.displ),
       "XMPI_Redistribute_data");
  EXPECT_EQ(misplaced_diagonal(ia, ja, values, before), 0.0);
  if (kept < std::min(before.displ + before.count, after.displ + after.count)) {
    EXPECT_EQ(values + (kept - before.displ), kept_value) << "a kept nonzero moved";
  }
  must(XMPI_Unregister(&ia), "XMPI_Unregister");
  // The application's malloc'ed arrays again: realloc and free work.
  values = static_cast<double*>(std::realloc(values, sizeof(double) * (before.count + 8)));
  ja = static_cast<int*>(std::realloc(ja, sizeof(int) * (before.count + 8)));
  EXPECT_EQ(misplaced_diagonal(ia, ja, values, before), 0.0);
  std::free(ia);
  std::free(ja);
  std::free(values);
}

TEST(ApiContract, BlocksChangedNeedsAPointer) {
  EXPECT_EQ(XMPI_Get_blocks_changed(nullptr), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("changed"));
}

// balanced_loop.c of the README under FLEXMPI_POLICY=smp, whose schedule's
// spawn is due from iteration 5 on (FLEXMPI_SCHEDULE, see CMakeLists.txt):
// XMPI_Eval_lbalance keeps the processes and the data, and every interval's
// record says that the spawn waits.
TEST(ApiContract, EvalLbalanceNeverChangesProcessesAndTheDueSpawnWaits) {
  const int nprocs = world_size(), rank = world_rank();
  const std::size_t traced_before = rank == 0 ? trace_lines().size() : 0;
  Block mine = own_block();
  double* x = rows_times(mine, 1.0);
  must(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), "XMPI_Register_vector");
  constexpr int kIterations = 30;
  for (int it = 0; it < kIterations; ++it) {
    monitored_iteration([&] {
      for (int i = 0; i < mine.count; ++i) x[i] += 1.0;
    });
    const std::vector<int> blocks = decomposition();
    must(XMPI_Eval_lbalance(rank, nprocs, it, kIterations, &mine.count, &mine.displ, nullptr),
         "XMPI_Eval_lbalance");
    ASSERT_EQ(world_size(), nprocs) << "after iteration " << it;
    ASSERT_EQ(XMPI_Get_process_status(), XMPI_RUNNING);
    EXPECT_EQ(blocks_changed(), decomposition() != blocks ? 1 : 0) << "after iteration " << it;
  }
  for (int i = 0; i < mine.count; ++i) x[i] -= kIterations;
  EXPECT_EQ(misplaced(x, mine, 1.0), 0.0);
  must(XMPI_Unregister(&x), "XMPI_Unregister");
  std::free(x);
  if (rank != 0) return;
  // FLEXMPI_SAMPLING_INTERVAL=5: 6 intervals, the spawn due in the last 5.
  const std::vector<std::string> lines = trace_lines();
  ASSERT_EQ(lines.size() - traced_before, 6u);
  int waiting = 0;
  for (std::size_t k = traced_before; k < lines.size(); ++k) {
    EXPECT_THAT(lines[k], ::testing::Not(HasSubstr("\"reconfigurations\"")));
    if (lines[k].find(R"("process_change_waits_for":"XMPI_Eval_reconfig")") != std::string::npos) {
      EXPECT_THAT(lines[k], HasSubstr(R"("action":"spawn")"));
      ++waiting;
    }
  }
  EXPECT_EQ(waiting, 5);
}

}  // namespace
}  // namespace flexmpi::test
