/*
 * plain_mpi: an MPI program that knows nothing of flexmpi (not even linked
 * with it), for the profile-only mode test: flexrun --preload profiles it.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  double one = 1.0, sum = 0.0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 50; ++i) MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("plain_mpi: sum %g\n", sum);
  MPI_Finalize();
  return 0;
}
