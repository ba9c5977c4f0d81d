// main() for multi-process GoogleTest executables: initialises MPI (and so
// flexmpi), runs every test on every rank, and fails if any rank failed.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    // Failures on other ranks still print (GoogleTest prints them as they
    // happen); only the summary chatter is limited to rank 0.
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new ::testing::EmptyTestEventListener);
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
