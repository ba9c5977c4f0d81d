// Errors of the C API (SPEC section 3): wrong call order, unknown events and
// bad arguments return the documented XMPI_ERR_* code, leave the state
// unchanged, and XMPI_Last_error_message says what was wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "mpi_test_util.hpp"

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

TEST(ApiErrors, SetWorkRejectsNegativeAndNan) {
  EXPECT_EQ(XMPI_Set_work(-1.0), XMPI_ERR_ARG);
  EXPECT_THAT(XMPI_Last_error_message(), HasSubstr("work"));
  EXPECT_EQ(XMPI_Set_work(std::numeric_limits<double>::quiet_NaN()), XMPI_ERR_ARG);
  EXPECT_EQ(XMPI_Set_work(0.0), XMPI_SUCCESS);
}

TEST(ApiErrors, ProcessStartedByMpiexecIsRunning) {
  EXPECT_EQ(XMPI_Get_process_status(), XMPI_RUNNING);
}

TEST(ApiErrors, EveryErrorStringIsDistinctAndNonEmpty) {
  const int codes[] = {XMPI_SUCCESS,         XMPI_ERR_ARG,    XMPI_ERR_STATE,
                       XMPI_ERR_UNSUPPORTED, XMPI_ERR_EVENT,  XMPI_ERR_MPI,
                       XMPI_ERR_NOMEM,       XMPI_ERR_CONFIG, XMPI_ERR_INTERNAL};
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
  for (const int code : {1, -9, -1000}) {
    const char* text = XMPI_Error_string(code);
    ASSERT_NE(text, nullptr);
    EXPECT_STRNE(text, "");
    EXPECT_EQ(texts.count(text), 0u) << code;
  }
}

}  // namespace
}  // namespace flexmpi::test
