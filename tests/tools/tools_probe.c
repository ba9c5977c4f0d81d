/*
 * tools_probe: a tiny iterative MPI program for the tools tests, written in C
 * against flexmpi.h only (so it also checks that the C API is C).
 *
 *   tools_probe [--expect VAR=VALUE]... [--iterations N] [--rows N] [-- args to echo...]
 *
 * Every rank checks that each VAR has VALUE in its environment (the launcher
 * put it there); rank 0 prints "probe: argv[i]=..." for the arguments after
 * "--" so a test can see they arrived untouched. Then all ranks run N
 * monitored iterations of a small computation on their block of `rows` rows
 * plus an MPI_Allreduce, so FLEXMPI_TRACE gets one line per sampling interval.
 * Exit status 0 on success; 3 if an expectation fails.
 */
#include <flexmpi.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(int code, const char* call) {
  if (code != XMPI_SUCCESS) {
    fprintf(stderr, "probe: %s failed: %s (%s)\n", call, XMPI_Error_string(code),
            XMPI_Last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  return code;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);

  int iterations = 40, rows = 2000, failures = 0, echo_from = argc;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--") == 0) {
      echo_from = i + 1;
      break;
    } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
      rows = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) {
      const char* expectation = argv[++i];
      const char* equals = strchr(expectation, '=');
      if (equals == NULL) {
        fprintf(stderr, "probe: --expect %s: expected VAR=VALUE\n", expectation);
        ++failures;
        continue;
      }
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(equals - expectation), expectation);
      const char* value = getenv(name);
      if (value == NULL || strcmp(value, equals + 1) != 0) {
        fprintf(stderr, "probe: rank %d: %s is %s%s%s, expected '%s'\n", rank, name,
                value ? "'" : "", value ? value : "not set", value ? "'" : "", equals + 1);
        ++failures;
      } else {
        printf("probe: rank %d: %s=%s\n", rank, name, value);
      }
    } else {
      fprintf(stderr, "probe: unknown argument '%s'\n", argv[i]);
      ++failures;
    }
  }
  if (rank == 0) {
    for (int i = echo_from; i < argc; ++i) printf("probe: argv[%d]=%s\n", i - echo_from, argv[i]);
  }

  int count = 0, displ = 0;
  check(XMPI_Get_wsize(rank, nprocs, rows, &count, &displ), "XMPI_Get_wsize");
  double* x = calloc((size_t)count + 1, sizeof(double));
  double sum = 0.0;
  for (int it = 0; it < iterations; ++it) {
    check(XMPI_Monitor_iter_begin(NULL), "XMPI_Monitor_iter_begin");
    double local = 0.0;
    for (int r = 0; r < count; ++r) {
      for (int c = 0; c < 200; ++c) x[r] = 0.5 * x[r] + 1e-3 * (double)((displ + r + c) % 7);
      local += x[r];
    }
    MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    check(XMPI_Monitor_iter_end(NULL), "XMPI_Monitor_iter_end");
  }
  free(x);

  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
  if (rank == 0) printf("probe: %d ranks, %d iterations, checksum %.6f\n", nprocs, iterations, sum);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 3;
}
