/*
 * flexmpi-ull-jacobi: the Jacobi method of the ULL paper (Galindo, Almeida
 * and Badia-Contelles, Listing 1.3) balanced by the three ULL calls, on
 * flexmpi. Every process holds the whole system (replicated data, as the
 * ULL library assumes), computes its rows displ[me] .. displ[me]+count[me]-1
 * and shares them with MPI_Allgatherv; ULL_MPI_calibrate moves rows from the
 * slow processes to the fast ones. Emulate slower processes with
 * FLEXMPI_EMULATE_SPEED, e.g. 0.25,0.5,1.0 (the paper's example).
 *
 *   mpiexec -n 3 flexmpi-ull-jacobi --size 1500 --threshold 100
 */
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ull_calibrate.h"

typedef struct {
  long n;
  long iterations;
  long threshold; /* microseconds */
  int init_per_row;
  int calibrate;
  int quiet;
  char error[256];
} Options;

static void usage(FILE* out) {
  fprintf(
      out,
      "usage: flexmpi-ull-jacobi [options]\n"
      "  --size N          order of A (default 1500)\n"
      "  --iterations N    Jacobi iterations (default 200)\n"
      "  --threshold US    balance when max(T) - min(T) > US microseconds (default 100)\n"
      "  --init-per-row    call ULL_MPI_INIT for every row, as the paper's Listing 1.3 prints it\n"
      "  --static          never rebalance (threshold INT_MAX): the homogeneous partition\n"
      "  --quiet           one summary line\n"
      "  --help            this help\n");
}

static int parse_long(const char* name, const char* text, long minimum, long* value, Options* o) {
  char* end = NULL;
  const long v = strtol(text, &end, 10);
  if (text[0] == '\0' || *end != '\0' || v < minimum || v > 100000000L) {
    snprintf(o->error, sizeof o->error, "%s '%s': expected a whole number >= %ld", name, text,
             minimum);
    return 0;
  }
  *value = v;
  return 1;
}

static Options parse_options(int argc, char** argv) {
  Options o = {1500, 200, 100, 0, 1, 0, ""};
  for (int a = 1; a < argc && o.error[0] == '\0'; ++a) {
    const char* arg = argv[a];
    if (strcmp(arg, "--init-per-row") == 0) {
      o.init_per_row = 1;
    } else if (strcmp(arg, "--static") == 0) {
      o.calibrate = 0;
    } else if (strcmp(arg, "--quiet") == 0) {
      o.quiet = 1;
    } else if (strcmp(arg, "--help") == 0) {
      usage(stdout);
      exit(0);
    } else if (a + 1 < argc && strcmp(arg, "--size") == 0) {
      parse_long(arg, argv[++a], 2, &o.n, &o);
    } else if (a + 1 < argc && strcmp(arg, "--iterations") == 0) {
      parse_long(arg, argv[++a], 1, &o.iterations, &o);
    } else if (a + 1 < argc && strcmp(arg, "--threshold") == 0) {
      parse_long(arg, argv[++a], 0, &o.threshold, &o);
    } else {
      snprintf(o.error, sizeof o.error, "unknown option or missing value '%s' (see --help)", arg);
    }
  }
  return o;
}

/* A diagonally dominant system with the known solution x_true. */
static double off_diagonal(long i, long j) {
  uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ull + (uint64_t)j * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 31)) * 0x94D049BB133111EBull;
  return (double)(z >> 11) / 9007199254740992.0; /* [0, 1) */
}
static double x_true(long j) { return 1.0 + 0.1 * (double)(j % 10); }

static void check(int code, const char* call) {
  if (code != ULL_MPI_SUCCESS) {
    fprintf(stderr, "flexmpi-ull-jacobi: %s failed (%d): %s\n", call, code,
            ULL_MPI_Last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int miid = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &miid);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  const Options o = parse_options(argc, argv);
  if (o.error[0] != '\0') {
    if (miid == 0) fprintf(stderr, "flexmpi-ull-jacobi: %s\n", o.error);
    MPI_Finalize();
    return 2;
  }
  const int n = (int)o.n;
  double* a = malloc(sizeof(double) * (size_t)n * (size_t)n);
  double* b = malloc(sizeof(double) * (size_t)n);
  double* x = malloc(sizeof(double) * (size_t)n);
  double* new_x = malloc(sizeof(double) * (size_t)n);
  if (a == NULL || b == NULL || x == NULL || new_x == NULL) {
    fprintf(stderr, "flexmpi-ull-jacobi: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (long i = 0; i < n; ++i) {
    double row_sum = 0.0, bi = 0.0;
    for (long j = 0; j < n; ++j) {
      a[i * n + j] = i == j ? 0.0 : off_diagonal(i, j);
      row_sum += a[i * n + j];
    }
    a[i * n + i] = 2.0 * row_sum + 1.0; /* Jacobi converges by about 1/2 per iteration */
    for (long j = 0; j < n; ++j) bi += a[i * n + j] * x_true(j);
    b[i] = bi;
    x[i] = 0.0;
  }

  /* Listing 1.3: the homogeneous start, then ULL_MPI_calibrate around the rows. */
  int* count = malloc(sizeof(int) * (size_t)nprocs);
  int* displ = malloc(sizeof(int) * (size_t)nprocs);
  const int nrows = n / nprocs;
  displ[0] = 0;
  for (int i = 0; i < nprocs; i++) {
    count[i] = nrows + (i < n % nprocs ? 1 : 0);
    if (i) displ[i] = displ[i - 1] + count[i - 1];
  }
  MPI_Comm new_com;
  MPI_Comm_dup(MPI_COMM_WORLD, &new_com);
  check(ULL_MPI_init_calibratelib(), "ULL_MPI_init_calibratelib");
  /* --static still times the section (so FLEXMPI_EMULATE_SPEED slows ranks
     down the same way) but with a threshold no imbalance exceeds. */
  const int threshold = o.calibrate ? (int)o.threshold : INT_MAX;
  int changes = 0;
  double residual = 0.0;
  MPI_Barrier(new_com);
  const double start = MPI_Wtime();
  for (int it = 0; it < o.iterations; ++it) {
    const int before = count[miid];
    /* The paper prints ULL_MPI_INIT inside the row loop; the library starts
       timing at the first call of an iteration and ignores the others. */
    if (!o.init_per_row) {
      check(ULL_MPI_calibrate(ULL_MPI_INIT, it, &count, &displ, threshold, 1, n),
            "ULL_MPI_calibrate");
    }
    const int fin = displ[miid] + count[miid];
    double resi_local = 0.0;
    for (int i = displ[miid]; i < fin; i++) {
      if (o.init_per_row) {
        check(ULL_MPI_calibrate(ULL_MPI_INIT, it, &count, &displ, threshold, 1, n),
              "ULL_MPI_calibrate");
      }
      const double* row = a + (size_t)i * (size_t)n;
      double sum = 0.0;
      for (int j = 0; j < n; j++) sum += row[j] * x[j];
      resi_local += fabs(sum - b[i]);
      sum += -row[i] * x[i];
      new_x[i] = (b[i] - sum) / row[i];
    }
    /* The rows computed this iteration are the ones shared: keep their
       partition for the exchange, the new one applies from the next. */
    int my_count = count[miid], my_displ = displ[miid];
    int* exchange_counts = malloc(sizeof(int) * (size_t)nprocs);
    int* exchange_displs = malloc(sizeof(int) * (size_t)nprocs);
    memcpy(exchange_counts, count, sizeof(int) * (size_t)nprocs);
    memcpy(exchange_displs, displ, sizeof(int) * (size_t)nprocs);
    check(ULL_MPI_calibrate(ULL_MPI_END, it, &count, &displ, threshold, 1, n), "ULL_MPI_calibrate");
    MPI_Allgatherv(&new_x[my_displ], my_count, MPI_DOUBLE, x, exchange_counts, exchange_displs,
                   MPI_DOUBLE, new_com);
    free(exchange_counts);
    free(exchange_displs);
    MPI_Allreduce(&resi_local, &residual, 1, MPI_DOUBLE, MPI_SUM, new_com);
    if (count[miid] != before) ++changes;
  }
  const double elapsed = MPI_Wtime() - start;
  check(ULL_MPI_shutdown_calibratelib(), "ULL_MPI_shutdown_calibratelib");

  double max_error = 0.0;
  for (long j = 0; j < n; ++j) max_error = fmax(max_error, fabs(x[j] - x_true(j)));
  if (miid == 0) {
    printf(
        "flexmpi-ull-jacobi: n=%d iterations=%ld mode=%s threshold_us=%d time_s=%.3f "
        "residual=%.3e max_error=%.3e rebalanced_iterations=%d counts=",
        n, o.iterations,
        o.calibrate ? (o.init_per_row ? "calibrated-per-row" : "calibrated") : "static", threshold,
        elapsed, residual, max_error, changes);
    for (int q = 0; q < nprocs; ++q) printf("%s%d", q ? "/" : "", count[q]);
    printf("\n");
  }
  MPI_Comm_free(&new_com);
  free(a);
  free(b);
  free(x);
  free(new_x);
  free(count);
  free(displ);
  MPI_Finalize();
  return 0;
}
