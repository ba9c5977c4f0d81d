/* An in-place vector and an in-place sparse matrix still registered at
 * MPI_Finalize come back as malloc'ed copies of their blocks
 * (include/flexmpi.h, "Distributed in place"): after MPI_Finalize the program
 * reallocs them, checks them and frees them. */
#include <flexmpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kRows = 1000 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, count = 0, displ = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  if (XMPI_Get_wsize(rank, size, kRows, &count, &displ) != XMPI_SUCCESS) return 2;
  double* x = malloc(sizeof *x * (count > 0 ? count : 1));
  for (int i = 0; i < count; ++i) x[i] = displ + i;
  /* A diagonal matrix: row i holds -i at column i. */
  int* ia = malloc(sizeof *ia * (count + 1));
  int* ja = malloc(sizeof *ja * (count > 0 ? count : 1));
  double* a = malloc(sizeof *a * (count > 0 ? count : 1));
  for (int i = 0; i <= count; ++i) ia[i] = i;
  for (int i = 0; i < count; ++i) {
    ja[i] = displ + i;
    a[i] = -(displ + i);
  }
  if (XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED_IN_PLACE) != XMPI_SUCCESS ||
      XMPI_Register_sparse(&ia, &ja, &a, kRows, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED_IN_PLACE) !=
          XMPI_SUCCESS) {
    fprintf(stderr, "register: %s\n", XMPI_Last_error_message());
    return 2;
  }
  /* Every block but the last gives its last row to the next process. */
  const int new_displ = rank == 0 ? 0 : displ - 1;
  const int new_count = count + (rank == 0 ? -1 : 0) + (rank == size - 1 ? 1 : 0);
  if (XMPI_Redistribute_data(count, displ, new_count, new_displ) != XMPI_SUCCESS) {
    fprintf(stderr, "redistribute: %s\n", XMPI_Last_error_message());
    return 2;
  }
  MPI_Finalize();

  x = realloc(x, sizeof *x * (new_count + 16));
  ja = realloc(ja, sizeof *ja * (new_count + 16));
  a = realloc(a, sizeof *a * (new_count + 16));
  int wrong = x == NULL || ja == NULL || a == NULL || ia[0] != 0;
  for (int i = 0; !wrong && i < new_count; ++i) {
    wrong += x[i] != new_displ + i || ia[i + 1] != i + 1 || ja[i] != new_displ + i ||
             a[i] != -(new_displ + i);
  }
  free(x);
  free(ia);
  free(ja);
  free(a);
  if (wrong) fprintf(stderr, "rank %d: a handed-back block is wrong\n", rank);
  return wrong ? 1 : 0;
}
