// A GoogleTest fixture on its own duplicate of MPI_COMM_WORLD, with this
// process's rank and the process count: what an MPI test of a component
// needs so that its messages never meet the library's or another test's.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

namespace flexmpi::test {

class WorldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &nprocs_);
  }
  void TearDown() override { MPI_Comm_free(&comm_); }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int nprocs_ = 1;
};

}  // namespace flexmpi::test
