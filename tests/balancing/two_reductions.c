/* A loop with two synchronisations per iteration, shaped like CG or HPCCG:
 * work on the process's rows, a reduction, as much work again, a second
 * reduction. The rows are a registered vector that moves with the blocks.
 *
 *   two_reductions [--static] [--rows N] [--iterations I] [--work W]
 *
 * prints "time=<seconds of the loop> rows=<this process's final rows>" on
 * rank 0, and fails if an element was lost or changed (checksum). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexmpi.h"

static void fail(const char* what) {
  fprintf(stderr, "two_reductions: %s\n", what);
  MPI_Abort(XMPI_COMM_WORLD, 1);
}

/* W dependent multiply-adds per row: time proportional to the rows. */
static double work_on_rows(const double* x, int count, int work) {
  double sum = 0.0;
  for (int i = 0; i < count; ++i) {
    double v = x[i];
    for (int k = 0; k < work; ++k) v = v * 0.999999 + 1e-9;
    sum += v;
  }
  return sum;
}

int main(int argc, char** argv) {
  int balanced = 1, rows = 20000, iterations = 600, work = 100;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--static") == 0) {
      balanced = 0;
    } else if (i + 1 < argc && strcmp(argv[i], "--rows") == 0) {
      rows = atoi(argv[++i]);
    } else if (i + 1 < argc && strcmp(argv[i], "--iterations") == 0) {
      iterations = atoi(argv[++i]);
    } else if (i + 1 < argc && strcmp(argv[i], "--work") == 0) {
      work = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: two_reductions [--static] [--rows N] [--iterations I] [--work W]\n");
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1, count = 0, displ = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  if (XMPI_Get_wsize(rank, nprocs, rows, &count, &displ) != XMPI_SUCCESS) fail("XMPI_Get_wsize");
  double* x = malloc(((size_t)count + 1) * sizeof *x);
  if (x == NULL) fail("out of memory");
  for (int i = 0; i < count; ++i) x[i] = displ + i; /* element i holds its global index */
  if (XMPI_Register_vector(&x, rows, MPI_DOUBLE, XMPI_DISTRIBUTED) != XMPI_SUCCESS) {
    fail(XMPI_Last_error_message());
  }
  MPI_Barrier(XMPI_COMM_WORLD);
  const double start = MPI_Wtime();
  double total = 0.0;
  for (int it = 0; it < iterations; ++it) {
    if (XMPI_Monitor_si_init() != XMPI_SUCCESS) fail(XMPI_Last_error_message());
    double partial = work_on_rows(x, count, work);
    MPI_Allreduce(MPI_IN_PLACE, &partial, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    double second = work_on_rows(x, count, work) + partial * 1e-30;
    MPI_Allreduce(MPI_IN_PLACE, &second, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    total += second;
    if (balanced &&
        XMPI_Eval_lbalance(rank, nprocs, it, iterations, &count, &displ, NULL) != XMPI_SUCCESS) {
      fail(XMPI_Last_error_message());
    }
  }
  const double seconds = MPI_Wtime() - start;
  /* Every element is where its block says, with its value. */
  long long wrong = 0;
  for (int i = 0; i < count; ++i) wrong += x[i] != (double)(displ + i);
  long long held = count;
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, XMPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &held, 1, MPI_LONG_LONG, MPI_SUM, XMPI_COMM_WORLD);
  if (wrong != 0 || held != rows) fail("an element was lost or changed");
  if (rank == 0) printf("time=%.3f rows=%d checksum=%.6e\n", seconds, count, total);
  free(x);
  MPI_Finalize();
  return 0;
}
