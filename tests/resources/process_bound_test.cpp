// The processes a job may reach (resources/process_bound.hpp):
// never unbounded without a description of the machine.
#include "resources/process_bound.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>

namespace flexmpi {
namespace {

using ::testing::HasSubstr;

TEST(ProcessBound, MaxProcsSettingWinsOverEverything) {
  const ProcessBound bound = process_bound({5, true, 16, 8, 2});
  EXPECT_EQ(bound.limit, 5);
  EXPECT_EQ(bound.origin, "FLEXMPI_MAX_PROCS=5");
  EXPECT_THAT(bound.describe(), HasSubstr("raise it with FLEXMPI_MAX_PROCS"));
}

TEST(ProcessBound, DescribedNodesHaveNoBoundOfTheirOwn) {
  const ProcessBound bound = process_bound({0, true, 2, 2, 2});
  EXPECT_EQ(bound.limit, 0);
  EXPECT_TRUE(bound.allows(1000));
  EXPECT_EQ(bound.headroom(1000), INT_MAX);
}

TEST(ProcessBound, WithoutHostfileTheSlotsMpiexecGaveTheJob) {
  const ProcessBound bound = process_bound({0, false, 8, 2, 2});
  EXPECT_EQ(bound.limit, 8);
  EXPECT_TRUE(bound.allows(8));
  EXPECT_FALSE(bound.allows(9));
  EXPECT_EQ(bound.headroom(2), 6);
  EXPECT_EQ(bound.headroom(10), 0);
  EXPECT_EQ(bound.describe(),
            "the job's bound of 8 processes (the 8 slots mpiexec gave the job, "
            "MPI_UNIVERSE_SIZE); raise it with FLEXMPI_MAX_PROCS (flexrun --max-procs), more "
            "slots for mpiexec (--host HOST:SLOTS) or a hostfile (FLEXMPI_HOSTFILE)");
}

TEST(ProcessBound, AnOversubscribedStartKeepsItsProcessesButDoesNotGrow) {
  const ProcessBound bound = process_bound({0, false, 2, 2, 5});
  EXPECT_EQ(bound.limit, 5);
  EXPECT_EQ(bound.headroom(5), 0);
  EXPECT_EQ(bound.origin, "the 5 processes mpiexec started, more than its 2 slots");
}

TEST(ProcessBound, WithoutUniverseSizeTheNodesCores) {
  const ProcessBound bound = process_bound({0, false, std::nullopt, 4, 1});
  EXPECT_EQ(bound.limit, 4);
  EXPECT_THAT(bound.origin, HasSubstr("this node's 4 cores"));
  EXPECT_EQ(process_bound({0, false, 0, 4, 6}).limit, 6);  // a universe of 0 says nothing
}

TEST(ProcessBound, WithoutRemedyTheMessageStopsAtTheOrigin) {
  const ProcessBound stopped{3, "no more spawns after a failed MPI_Comm_spawn", ""};
  EXPECT_EQ(stopped.describe(),
            "the job's bound of 3 processes (no more spawns after a failed MPI_Comm_spawn)");
}

}  // namespace
}  // namespace flexmpi
