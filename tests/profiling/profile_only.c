/* A plain MPI program: no flexmpi header, not linked with libflexmpi. Run
 * with libflexmpi preloaded, it is profiled without any change (thesis
 * 4.2.2, profile-only mode). check_profile_only.cmake knows exactly what it
 * sends, so keep the two in step. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    fprintf(stderr, "profile_only: run me on 2 processes\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  double doubles[10] = {0};
  int ints[4] = {1, 2, 3, 4}, sums[4];
  if (rank == 0) {
    MPI_Send(doubles, 10, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD); /* 80 bytes */
  } else {
    MPI_Recv(doubles, 10, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Allreduce(ints, sums, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* 16 each way */
  MPI_Bcast(doubles, 8, MPI_DOUBLE, 0, MPI_COMM_WORLD);           /* 64 */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Finalize();
  return sums[3] == 8 ? 0 : 1;
}
