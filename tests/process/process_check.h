/* A minimal check macro for the spawn tests: a spawned process runs the same
 * main as the initial ones, so these programs do not use GoogleTest's main
 * (whose test list every new process would run again). A failed check prints
 * "CHECK FAILED" (CTest fails on it) and makes the process exit non-zero. */
#ifndef FLEXMPI_TESTS_PROCESS_CHECK_H
#define FLEXMPI_TESTS_PROCESS_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "flexmpi.h"

static int process_check_failures = 0;

#define CHECK(condition, ...)                                                      \
  do {                                                                             \
    if (!(condition)) {                                                            \
      ++process_check_failures;                                                    \
      fprintf(stderr, "CHECK FAILED %s:%d: %s: ", __FILE__, __LINE__, #condition); \
      fprintf(stderr, __VA_ARGS__);                                                \
      fprintf(stderr, "\n");                                                       \
      fflush(stderr);                                                              \
    }                                                                              \
  } while (0)

/* Checks that an XMPI_* call returned `expected`, printing the library's message if not. */
#define CHECK_CODE(call, expected)                                                            \
  do {                                                                                        \
    const int check_code_result = (call);                                                     \
    CHECK(check_code_result == (expected), "%s returned %d (%s: %s), expected %d", #call,     \
          check_code_result, XMPI_Error_string(check_code_result), XMPI_Last_error_message(), \
          (int)(expected));                                                                   \
  } while (0)

/* Checks a registered vector whose element i holds i, at iteration `it`:
 * this process's `count` elements from global row `displ`. */
static inline void check_elements(const double* x, int count, int displ, int it) {
  for (int i = 0; i < count; ++i) {
    if (x[i] != (double)(displ + i)) {
      CHECK(0, "iteration %d: element %d holds %g", it, displ + i, x[i]);
      return;
    }
  }
}

/* The start of a spawn test's loop over a registered vector of `rows` rows
 * whose element i holds i: *x is registered (its pointer must outlive the
 * loop, since redistribution replaces it), *count and *displ are this
 * process's block, and *it the first iteration (a newly spawned process gets
 * its data and goes on from its parents' iteration). */
static inline void start_registered_rows(double** x, int rows, int* count, int* displ, int* it) {
  int rank, nprocs;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  CHECK_CODE(XMPI_Get_wsize(rank, nprocs, rows, count, displ), XMPI_SUCCESS);
  const int spawned = XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED;
  *x = (double*)malloc((size_t)(*count > 0 ? *count : 1) * sizeof **x);
  for (int i = 0; i < *count; ++i) (*x)[i] = *displ + i;
  CHECK_CODE(XMPI_Register_vector(x, rows, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);
  *it = 0;
  if (spawned) {
    CHECK_CODE(XMPI_Get_data(it), XMPI_SUCCESS);
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
    CHECK_CODE(XMPI_Get_wsize(rank, nprocs, rows, count, displ), XMPI_SUCCESS);
  }
}

#endif
