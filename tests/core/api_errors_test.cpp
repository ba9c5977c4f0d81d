// Errors of the C API: wrong call order, unknown events and
// bad arguments return the documented XMPI_ERR_* code, leave the state
// unchanged, and XMPI_Last_error_message says what was wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../support/mpi_test_util.hpp"

namespace flexmpi::test {
namespace {

using ::testing::HasSubstr;

TEST(ApiErrors, IterEndWithoutBeginIsAStateError) {
  long long counts[1] = {0};
  EXPECT_EQ(XMPI_Monitor_iter_end(counts), XMPI_ERR_STATE);
  EXPECT_STRNE(XMPI_Last_error_message(), "");
  EXPECT_EQ(XMPI_Monitor_iter_end(nullptr), XMPI_ERR_STATE);
}

TEST(ApiErrors, BeginTwiceIsAStateErrorAndKeepsTheOpenIteration) {
  const long long before = runtime().monitor().iterations_monitored();
  ASSERT_EQ(XMPI_Monitor_iter_begin(nullptr), XMPI_SUCCESS);
  EXPECT_EQ(XMPI_Monitor_iter_begin(nullptr), XMPI_ERR_STATE);
  EXPECT_STRNE(XMPI_Last_error_message(), "");
  EXPECT_TRUE(runtime().monitor().iteration_open());
  EXPECT_EQ(XMPI_Monitor_iter_end(nullptr), XMPI_SUCCESS);
  EXPECT_EQ(runtime().monitor().iterations_monitored(), before + 1);
  EXPECT_EQ(XMPI_Monitor_iter_end(nullptr), XMPI_ERR_STATE);
}

TEST(ApiErrors, UnknownEventIsAnEventErrorNamingItAndOpensNothing) {
  char name[] = "FLEXMPI_NO_SUCH_EVENT";
  char* events[] = {name, nullptr};
  EXPECT_EQ(XMPI_Monitor_iter_begin(events), XMPI_ERR_EVENT);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("FLEXMPI_NO_SUCH_EVENT"));
  EXPECT_FALSE(runtime().monitor().iteration_open());
  EXPECT_EQ(XMPI_Monitor_iter_end(nullptr), XMPI_ERR_STATE);
  // The failure left the monitor usable.
  EXPECT_EQ(XMPI_Monitor_iter_begin(nullptr), XMPI_SUCCESS);
  EXPECT_EQ(XMPI_Monitor_iter_end(nullptr), XMPI_SUCCESS);
}

TEST(ApiErrors, SuccessClearsTheLastErrorMessage) {
  EXPECT_EQ(XMPI_Monitor_iter_end(nullptr), XMPI_ERR_STATE);
  ASSERT_STRNE(XMPI_Last_error_message(), "");
  int count = 0, displ = 0;
  EXPECT_EQ(XMPI_Get_wsize(0, 1, 10, &count, &displ), XMPI_SUCCESS);
  EXPECT_STREQ(XMPI_Last_error_message(), "");
}

TEST(ApiErrors, SiInitClosesTheOpenIterationAndOpensTheNext) {
  const long long before = runtime().monitor().iterations_monitored();
  ASSERT_EQ(XMPI_Monitor_si_init(), XMPI_SUCCESS);
  EXPECT_TRUE(runtime().monitor().iteration_open());
  ASSERT_EQ(XMPI_Monitor_si_init(), XMPI_SUCCESS);
  EXPECT_EQ(runtime().monitor().iterations_monitored(), before + 1);
  EXPECT_EQ(XMPI_Monitor_iter_end(nullptr), XMPI_SUCCESS);
  EXPECT_EQ(runtime().monitor().iterations_monitored(), before + 2);
}

void expect_bad_wsize(int rank, int nprocs, int dsize, int* count, int* displ,
                      const std::string& argument) {
  SCOPED_TRACE(argument);
  EXPECT_EQ(XMPI_Get_wsize(rank, nprocs, dsize, count, displ), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr(argument));
}

TEST(ApiErrors, GetWsizeRejectsBadArgumentsNamingThem) {
  const int size = world_size();
  int count = -7, displ = -7;
  expect_bad_wsize(0, size, 10, nullptr, &displ, "count");
  expect_bad_wsize(0, size, 10, &count, nullptr, "displ");
  expect_bad_wsize(size, size, 10, &count, &displ, "rank");
  expect_bad_wsize(-1, size, 10, &count, &displ, "rank");
  expect_bad_wsize(0, 0, 10, &count, &displ, "nprocs");
  expect_bad_wsize(0, size, -1, &count, &displ, "dsize");
  // Failed calls write nothing.
  EXPECT_EQ(count, -7);
  EXPECT_EQ(displ, -7);
}

TEST(ApiErrors, GetWsizeGivesTheBlockPartition) {
  const int size = world_size();
  int next = 0;
  for (int r = 0; r < size; ++r) {
    int count = -1, displ = -1;
    ASSERT_EQ(XMPI_Get_wsize(r, size, 10, &count, &displ), XMPI_SUCCESS);
    EXPECT_EQ(displ, next);
    EXPECT_EQ(count, 10 / size + (r < 10 % size ? 1 : 0));
    next += count;
  }
  EXPECT_EQ(next, 10);
}

TEST(ApiErrors, GetDecompositionGivesEveryBlockAndRejectsBadArguments) {
  const int size = world_size();
  std::vector<int> counts(size, -7), displs(size, -7);
  ASSERT_EQ(XMPI_Get_decomposition(size, 10, counts.data(), displs.data()), XMPI_SUCCESS);
  for (int r = 0; r < size; ++r) {
    int count = -1, displ = -1;
    ASSERT_EQ(XMPI_Get_wsize(r, size, 10, &count, &displ), XMPI_SUCCESS);
    EXPECT_EQ(counts[r], count);
    EXPECT_EQ(displs[r], displ);
  }
  EXPECT_EQ(XMPI_Get_decomposition(size, 10, nullptr, displs.data()), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("counts"));
  EXPECT_EQ(XMPI_Get_decomposition(size, 10, counts.data(), nullptr), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("displs"));
  EXPECT_EQ(XMPI_Get_decomposition(0, 10, counts.data(), displs.data()), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("nprocs"));
  EXPECT_EQ(XMPI_Get_decomposition(size, -1, counts.data(), displs.data()), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("dsize"));
}

TEST(ApiErrors, RegisteringANullBufferThatHoldsRowsIsAnArgumentError) {
  double* none = nullptr;
  EXPECT_EQ(XMPI_Register_vector(&none, 10, MPI_DOUBLE, XMPI_REPLICATED), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("NULL"));
  EXPECT_EQ(XMPI_Register_dense(&none, 10, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_ERR_ARG);
  EXPECT_EQ(runtime().state().data().structure_count(), 0u);  // nothing was registered
}

// A size of 10^12 reached the library as -727379968 (the int
// parameter wrapped it) and was refused as negative. Sizes are long long:
// the value arrives intact and is refused by value, with the limit.
TEST(ApiErrors, SizesBeyondIntAreRefusedByTheirValue) {
  double* x = static_cast<double*>(std::malloc(sizeof(double)));
  EXPECT_EQ(XMPI_Register_vector(&x, 1000000000000LL, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(),
              HasSubstr("size 1000000000000 exceeds the largest supported, 2147483647"));
  EXPECT_EQ(XMPI_Register_dense(&x, 2147483648LL, MPI_DOUBLE, XMPI_REPLICATED), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("size 2147483648 exceeds"));
  int* ia = static_cast<int*>(std::calloc(11, sizeof(int)));  // row pointers of 10 rows
  int* ja = nullptr;
  EXPECT_EQ(XMPI_Register_sparse(&ia, &ja, &x, 10, 5000000000LL, MPI_DOUBLE, XMPI_REPLICATED),
            XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("5000000000 nonzeros"));
  EXPECT_EQ(runtime().state().data().structure_count(), 0u);  // nothing was registered
  std::free(ia);
  std::free(x);
}

// A valid tiling in another rank order was refused with "rows
// 0..4 belong to no process". Reversed blocks (the last rank owns the first
// rows) move every value to its new owner, and back.
TEST(ApiErrors, RedistributeDataAcceptsBlocksInAnyRankOrder) {
  const int rank = world_rank(), size = world_size(), n = 10;
  std::vector<int> counts(size), displs(size);
  ASSERT_EQ(XMPI_Get_decomposition(size, n, counts.data(), displs.data()), XMPI_SUCCESS);
  std::vector<int> reversed(size);  // displ of each rank's block in reverse rank order
  for (int r = size - 1, next = 0; r >= 0; --r) {
    reversed[r] = next;
    next += counts[r];
  }
  auto* x = static_cast<double*>(std::malloc(sizeof(double) * n));
  for (int i = 0; i < counts[rank]; ++i) x[i] = displs[rank] + i;
  ASSERT_EQ(XMPI_Register_vector(&x, n, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS)
      << XMPI_Last_error_message();
  ASSERT_EQ(XMPI_Redistribute_data(counts[rank], displs[rank], counts[rank], reversed[rank]),
            XMPI_SUCCESS)
      << XMPI_Last_error_message();
  int count = -1, displ = -1;
  ASSERT_EQ(XMPI_Get_wsize(rank, size, n, &count, &displ), XMPI_SUCCESS);
  EXPECT_EQ(displ, reversed[rank]);
  for (int i = 0; i < count; ++i) EXPECT_EQ(x[i], displ + i) << "row " << displ + i;
  // A gap names the rows nobody owns, and nothing moves.
  EXPECT_EQ(XMPI_Redistribute_data(count, displ, rank == 0 ? count - 1 : count, displ),
            XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("belong to no process"));
  for (int i = 0; i < count; ++i) EXPECT_EQ(x[i], displ + i) << "row " << displ + i;
  // And back to the block partition the later tests expect.
  ASSERT_EQ(XMPI_Redistribute_data(count, displ, counts[rank], displs[rank]), XMPI_SUCCESS)
      << XMPI_Last_error_message();
  for (int i = 0; i < counts[rank]; ++i) EXPECT_EQ(x[i], displs[rank] + i);
  ASSERT_EQ(XMPI_Unregister(&x), XMPI_SUCCESS);
  std::free(x);
}

TEST(ApiErrors, SendDataWithoutASpawnIsAStateError) {
  int count = -7, displ = -7;
  EXPECT_EQ(XMPI_Send_data(0, &count, &displ), XMPI_ERR_STATE);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("XMPI_Spawn"));
  EXPECT_EQ(count, -7);
}

TEST(ApiErrors, SendDataRefusesANegativeIteration) {
  int count = -7, displ = -7;
  EXPECT_EQ(XMPI_Send_data(-1, &count, &displ), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("it=-1: expected the iteration just completed"));
  EXPECT_EQ(count, -7);
}

// A process that holds rows needs their row pointers: NULL failed only at the
// first redistribution, or left the matrix registered under the nnz model.
TEST(ApiErrors, SparseRowPointersOfHeldRowsMustNotBeNull) {
  int* ia = nullptr;
  int* ja = nullptr;
  double* a = nullptr;
  EXPECT_EQ(XMPI_Register_sparse(&ia, &ja, &a, 10, 0, MPI_DOUBLE, XMPI_REPLICATED), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(),
              HasSubstr("register_sparse (ia): the buffer is NULL but this process holds 10 rows"));
  EXPECT_EQ(runtime().state().data().structure_count(), 0u);  // nothing was registered
}

// Run by mpi_api_errors_row_weights (FLEXMPI_LB_MODEL=weight): one NaN row
// weight made every block NaN in the partitioner.
TEST(ApiErrors, RowWeightsMustBeFiniteAndNonNegative) {
  if (runtime().state().model() != WorkloadModel::weight) {
    GTEST_SKIP() << "needs FLEXMPI_LB_MODEL=weight";
  }
  const int rank = world_rank(), size = world_size(), n = 10;
  int count = 0, displ = 0;
  ASSERT_EQ(XMPI_Get_wsize(rank, size, n, &count, &displ), XMPI_SUCCESS);
  std::vector<double> weight(n, 1.0);
  for (const double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), -2.0}) {
    weight[3] = bad;
    EXPECT_EQ(XMPI_Eval_lbalance(rank, size, 0, 10, &count, &displ, weight.data()), XMPI_ERR_ARG);
    EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("weight[3]="));
    EXPECT_THAT(XMPI_Last_error_message(), HasSubstr(": expected a finite number >= 0"));
  }
  weight[3] = 1.0;
  EXPECT_EQ(XMPI_Eval_lbalance(rank, size, 0, 10, &count, &displ, weight.data()), XMPI_SUCCESS)
      << XMPI_Last_error_message();
}

TEST(ApiErrors, EvalLbalanceChecksItsPlaceInTheLoopAndItsIterations) {
  const int rank = world_rank(), size = world_size();
  int count = 0, displ = 0;
  ASSERT_EQ(XMPI_Get_wsize(rank, size, 10, &count, &displ), XMPI_SUCCESS);
  // Inside an iteration opened by XMPI_Monitor_iter_begin: not yet.
  ASSERT_EQ(XMPI_Monitor_iter_begin(nullptr), XMPI_SUCCESS);
  EXPECT_EQ(XMPI_Eval_lbalance(rank, size, 0, 10, &count, &displ, nullptr), XMPI_ERR_STATE);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("XMPI_Monitor_iter_end"));
  EXPECT_TRUE(runtime().monitor().iteration_open());  // still open, as it was
  ASSERT_EQ(XMPI_Monitor_iter_end(nullptr), XMPI_SUCCESS);
  // it and maxit: 0 <= it < maxit.
  for (const auto& [it, maxit] : std::vector<std::pair<int, int>>{{-1, 10}, {10, 10}, {0, 0}}) {
    EXPECT_EQ(XMPI_Eval_lbalance(rank, size, it, maxit, &count, &displ, nullptr), XMPI_ERR_ARG)
        << it << ", " << maxit;
    EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("maxit"));
  }
  // After XMPI_Monitor_iter_end, and for an XMPI_Monitor_si_init iteration: fine.
  EXPECT_EQ(XMPI_Eval_lbalance(rank, size, 0, 10, &count, &displ, nullptr), XMPI_SUCCESS)
      << XMPI_Last_error_message();
  ASSERT_EQ(XMPI_Monitor_si_init(), XMPI_SUCCESS);
  EXPECT_EQ(XMPI_Eval_lbalance(rank, size, 1, 10, &count, &displ, nullptr), XMPI_SUCCESS)
      << XMPI_Last_error_message();
  EXPECT_FALSE(runtime().monitor().iteration_open());
}

TEST(ApiErrors, SetWorkRejectsNegativeNanAndInfinity) {
  EXPECT_EQ(XMPI_Set_work(-1.0), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("work"));
  EXPECT_EQ(XMPI_Set_work(std::numeric_limits<double>::quiet_NaN()), XMPI_ERR_ARG);
  EXPECT_EQ(XMPI_Set_work(std::numeric_limits<double>::infinity()), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("expected a finite number >= 0"));
  EXPECT_EQ(XMPI_Set_work(0.0), XMPI_SUCCESS);
}

TEST(ApiErrors, ProcessStartedByMpiexecIsRunning) {
  EXPECT_EQ(XMPI_Get_process_status(), XMPI_RUNNING);
}

TEST(ApiErrors, EveryErrorStringIsDistinctAndNonEmpty) {
  const int codes[] = {XMPI_SUCCESS,      XMPI_ERR_ARG, XMPI_ERR_STATE, XMPI_ERR_UNSUPPORTED,
                       XMPI_ERR_EVENT,    XMPI_ERR_MPI, XMPI_ERR_NOMEM, XMPI_ERR_CONFIG,
                       XMPI_ERR_INTERNAL, XMPI_ERR_IO};
  std::set<std::string> texts;
  for (const int code : codes) {
    const char* text = XMPI_Error_string(code);
    ASSERT_NE(text, nullptr) << code;
    EXPECT_STRNE(text, "") << code;
    EXPECT_TRUE(texts.insert(text).second) << code << " shares its text: " << text;
    if (code != XMPI_SUCCESS) {
      EXPECT_LT(code, 0);
    }
  }
  // Codes the API does not define still get a (distinct) explanation.
  for (const int code : {1, -10, -1000}) {
    const char* text = XMPI_Error_string(code);
    ASSERT_NE(text, nullptr);
    EXPECT_STRNE(text, "");
    EXPECT_EQ(texts.count(text), 0u) << code;
  }
}

}  // namespace
}  // namespace flexmpi::test
