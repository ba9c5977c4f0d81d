/*
 * flexmpi-jacobi - the dense Jacobi solver of the FLEX-MPI benchmark suite
 * (thesis 6.1.1.1, Algorithm 9), written against the flexmpi C API.
 *
 * A is distributed by row blocks (XMPI_Get_decomposition), x is replicated and
 * refreshed every iteration with MPI_Allgatherv on XMPI_COMM_WORLD, and each
 * iteration is one monitored region (XMPI_Monitor_iter_begin/end, thesis 4.2).
 *
 * Built with -DJACOBI_WITHOUT_FLEXMPI the same source is `jacobi-bare`: plain
 * MPI on MPI_COMM_WORLD, no flexmpi call, the baseline of
 * bench/monitoring_overhead.sh. Both builds measure the same things the same
 * way, so their times differ only by what flexmpi adds.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, clock_gettime under -std=c11 */

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef JACOBI_WITHOUT_FLEXMPI
#define PROGRAM "jacobi-bare"
#define JACOBI_COMM MPI_COMM_WORLD
#else
#include "flexmpi.h"
#define PROGRAM "flexmpi-jacobi"
#define JACOBI_COMM XMPI_COMM_WORLD /* rebuilt by flexmpi after a reconfiguration */
#endif

enum { kMaxSize = 1000000 };

typedef struct {
  long size;
  long iterations;
  long seed;
  const char* sampling_interval; /* validated text, handed to FLEXMPI_SAMPLING_INTERVAL */
  const char* trace;             /* handed to FLEXMPI_TRACE */
  int quiet;
  int static_mode; /* --static: same code, no balancing (FLEXMPI_POLICY=none) */
  int help;
  char error[256]; /* non-empty: the command line is wrong */
} Options;

static void usage(FILE* out) {
  fprintf(out,
          "usage: mpiexec -n P " PROGRAM
          " [options]\n"
          "Dense Jacobi solver (FLEX-MPI thesis, Algorithm 9) on a generated, strictly\n"
          "diagonally dominant system A x = b (the same system for every P).\n"
          "  --size N               order of A (default 2000)\n"
          "  --iterations N         Jacobi iterations, all monitored (default 500)\n"
          "  --seed N               seed of the generated system (default 1)\n"
#ifndef JACOBI_WITHOUT_FLEXMPI
          "  --sampling-interval N  iterations per sampling interval (FLEXMPI_SAMPLING_INTERVAL)\n"
          "  --trace FILE           JSON-lines trace written by rank 0 (FLEXMPI_TRACE)\n"
          "  --static               no load balancing (FLEXMPI_POLICY=none), same code\n"
#endif
          "  --quiet                print one summary line instead of the report\n"
          "  --help                 print this help\n");
}

/* A whole number in [minimum, maximum], or an error naming the option. */
static int parse_long(const char* option, const char* text, long minimum, long maximum, long* value,
                      Options* options) {
  char* end = NULL;
  errno = 0;
  const long parsed = text == NULL ? 0 : strtol(text, &end, 10);
  if (text == NULL || *text == '\0' || *end != '\0' || errno != 0 || parsed < minimum ||
      parsed > maximum) {
    snprintf(options->error, sizeof options->error,
             "%s '%s' is invalid: expected a whole number from %ld to %ld", option,
             text == NULL ? "" : text, minimum, maximum);
    return 0;
  }
  *value = parsed;
  return 1;
}

/* Accepts "--name value" and "--name=value". Stops at the first error. */
static Options parse_options(int argc, char** argv) {
  Options o = {2000, 500, 1, NULL, NULL, 0, 0, 0, ""};
  for (int a = 1; a < argc && o.error[0] == '\0'; ++a) {
    const char* arg = argv[a];
    const char* equals = strchr(arg, '=');
    const size_t name_length = equals != NULL ? (size_t)(equals - arg) : strlen(arg);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(name_length < 63 ? name_length : 63), arg);
    const int is_flag = strcmp(name, "--quiet") == 0 || strcmp(name, "--help") == 0 ||
                        strcmp(name, "--static") == 0;
    const char* value = NULL;
    if (equals != NULL) {
      value = equals + 1;
    } else if (!is_flag && a + 1 < argc) {
      value = argv[++a];
    }
    const int known = is_flag || strcmp(name, "--size") == 0 || strcmp(name, "--iterations") == 0 ||
                      strcmp(name, "--seed") == 0 || strcmp(name, "--sampling-interval") == 0 ||
                      strcmp(name, "--trace") == 0;
    if (is_flag && equals != NULL) {
      snprintf(o.error, sizeof o.error, "%s takes no value", name);
    } else if (known && !is_flag && (value == NULL || *value == '\0')) {
      snprintf(o.error, sizeof o.error, "%s needs a value", name);
    } else if (strcmp(name, "--quiet") == 0) {
      o.quiet = 1;
    } else if (strcmp(name, "--help") == 0) {
      o.help = 1;
    } else if (strcmp(name, "--static") == 0) {
#ifdef JACOBI_WITHOUT_FLEXMPI
      snprintf(o.error, sizeof o.error, "%s: " PROGRAM " is built without flexmpi", name);
#else
      o.static_mode = 1;
#endif
    } else if (strcmp(name, "--size") == 0) {
      parse_long(name, value, 1, kMaxSize, &o.size, &o);
    } else if (strcmp(name, "--iterations") == 0) {
      parse_long(name, value, 1, 1000000000L, &o.iterations, &o);
    } else if (strcmp(name, "--seed") == 0) {
      parse_long(name, value, 0, 2147483647L, &o.seed, &o);
    } else if (strcmp(name, "--sampling-interval") == 0 || strcmp(name, "--trace") == 0) {
#ifdef JACOBI_WITHOUT_FLEXMPI
      snprintf(o.error, sizeof o.error, "%s: " PROGRAM " is built without flexmpi", name);
#else
      long interval = 0;
      if (strcmp(name, "--trace") == 0) {
        o.trace = value;
      } else if (parse_long(name, value, 1, 1000000000L, &interval, &o)) {
        o.sampling_interval = value;
      }
#endif
    } else {
      snprintf(o.error, sizeof o.error, "unknown option '%s' (see --help)", arg);
    }
  }
  return o;
}

/* ---- the generated system ------------------------------------------------- */

/* SplitMix64 finaliser: a counter-based generator, so entry (i, j) depends on
 * (seed, n, i, j) only and each process generates just its own rows. */
static uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Off-diagonal entry in [-1, 1). */
static double off_diagonal(uint64_t seed, long n, long i, long j) {
  const uint64_t bits = mix(seed ^ mix((uint64_t)i * (uint64_t)n + (uint64_t)j));
  return (double)(bits >> 11) * 0x1.0p-52 - 1.0;
}

/* The known solution; b = A x_true, so the error of x can be reported too. */
static double x_true(long j) { return 1.0 + 0.1 * (double)(j % 10); }

/* Rows [first, first+count) of A (row-major, count x n) and of b. The diagonal
 * is 2 sum|a_ij| + 1: strictly dominant, and ||D^-1 (A - D)||_inf < 1/2, so
 * Jacobi converges for every n (thesis 6.1.1.1 requires dominance). */
static void generate_rows(uint64_t seed, long n, long first, long count, double* a, double* b,
                          double* diagonal) {
  for (long r = 0; r < count; ++r) {
    const long i = first + r;
    double* row = a + (size_t)r * (size_t)n;
    double magnitude = 0.0;
    for (long j = 0; j < n; ++j) {
      row[j] = j == i ? 0.0 : off_diagonal(seed, n, i, j);
      magnitude += fabs(row[j]);
    }
    row[i] = 2.0 * magnitude + 1.0;
    diagonal[r] = row[i];
    double sum = 0.0;
    for (long j = 0; j < n; ++j) sum += row[j] * x_true(j);
    b[r] = sum;
  }
}

/* One Jacobi sweep over the local rows (Alg. 9, lines 3-9): the j loop skips
 * the diagonal; the order of the sums does not depend on the partition, so x
 * is bit-for-bit the same for every process count. */
static void sweep(long n, long first, long count, const double* a, const double* b,
                  const double* diagonal, const double* x_old, double* x_new) {
  for (long r = 0; r < count; ++r) {
    const long i = first + r;
    const double* row = a + (size_t)r * (size_t)n;
    double sum = 0.0;
    for (long j = 0; j < i; ++j) sum += row[j] * x_old[j];
    for (long j = i + 1; j < n; ++j) sum += row[j] * x_old[j];
    x_new[r] = (b[r] - sum) / diagonal[r];
  }
}

/* ---- flexmpi, or not ------------------------------------------------------ */

static double thread_cpu_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

#ifndef JACOBI_WITHOUT_FLEXMPI
static void check_xmpi(int code, const char* call) {
  if (code == XMPI_SUCCESS) return;
  fprintf(stderr, PROGRAM ": %s failed: %s (%s)\n", call, XMPI_Error_string(code),
          XMPI_Last_error_message());
  MPI_Abort(MPI_COMM_WORLD, 1);
}
#endif

/* Every process's block (counts[p] rows from displs[p]): flexmpi's
 * decomposition (the block partition until the balancer moves data), or the
 * same block rule without flexmpi. */
static void decomposition(int nprocs, long n, int* counts, int* displs) {
#ifdef JACOBI_WITHOUT_FLEXMPI
  const long base = n / nprocs, extra = n % nprocs;
  for (int p = 0; p < nprocs; ++p) {
    counts[p] = (int)(base + (p < extra ? 1 : 0));
    displs[p] = (int)(p * base + (p < extra ? p : extra));
  }
#else
  check_xmpi(XMPI_Get_decomposition(nprocs, (int)n, counts, displs), "XMPI_Get_decomposition");
#endif
}

static void iteration_begin(void) {
#ifndef JACOBI_WITHOUT_FLEXMPI
  check_xmpi(XMPI_Monitor_iter_begin(NULL), "XMPI_Monitor_iter_begin");
#endif
}

static void iteration_end(void) {
#ifndef JACOBI_WITHOUT_FLEXMPI
  check_xmpi(XMPI_Monitor_iter_end(NULL), "XMPI_Monitor_iter_end");
#endif
}

/* ---- the program ---------------------------------------------------------- */

/* What one process measured over all iterations (sums). */
enum { kRows, kRegion, kAllgather, kCpu, kSetup, kLoop, kFields };
/* What flexmpi measured on one process (XMPI_Get_monitor_totals). */
enum { kLibIterations, kLibWall, kLibComputation, kLibMpi, kLibCpu, kLibraryFields };

/* The rank the launcher gave this process, or 0 if it says nothing: lets
 * exactly one process print, before MPI_Init. */
static int launcher_rank(void) {
  const char* names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k) {
    const char* value = getenv(names[k]);
    if (value != NULL) return atoi(value);
  }
  return 0;
}

static void free_buffers(double* a, double* b, double* diagonal, double* x_local, double* x,
                         int* counts, int* displs) {
  free(a);
  free(b);
  free(diagonal);
  free(x_local);
  free(x);
  free(counts);
  free(displs);
}

static int finish(int code) {
  MPI_Finalize();
  return code;
}

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  /* Help and usage errors end the program before MPI_Init: no MPI, no
   * flexmpi start-up, and no FLEXMPI_* setting taken from a bad command line. */
  if (options.help || options.error[0] != '\0') {
    if (launcher_rank() == 0 && options.help) usage(stdout);
    if (launcher_rank() == 0 && !options.help) fprintf(stderr, PROGRAM ": %s\n", options.error);
    return options.help ? 0 : 2;
  }
#ifndef JACOBI_WITHOUT_FLEXMPI
  /* flexmpi reads its configuration in MPI_Init: set it before. */
  if (options.sampling_interval != NULL) {
    setenv("FLEXMPI_SAMPLING_INTERVAL", options.sampling_interval, 1);
  }
  if (options.trace != NULL) setenv("FLEXMPI_TRACE", options.trace, 1);
  if (options.static_mode) setenv("FLEXMPI_POLICY", "none", 1);
#endif
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(JACOBI_COMM, &rank);
  MPI_Comm_size(JACOBI_COMM, &nprocs);
#ifndef JACOBI_WITHOUT_FLEXMPI
  const int newcomer = XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED;
#else
  const int newcomer = 0;
#endif

  const long n = options.size;
  const double setup_start = MPI_Wtime();
  int* counts = malloc((size_t)nprocs * sizeof *counts);
  int* displs = malloc((size_t)nprocs * sizeof *displs);
  if (counts == NULL || displs == NULL) {
    fprintf(stderr, PROGRAM ": rank %d: out of memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  decomposition(nprocs, n, counts, displs);
  int count = counts[rank], first = displs[rank];

  /* +1: a process with no rows still gets valid (unused) buffers. */
  double* a = malloc(((size_t)count * (size_t)n + 1) * sizeof *a);
  double* b = malloc(((size_t)count + 1) * sizeof *b);
  double* diagonal = malloc(((size_t)count + 1) * sizeof *diagonal);
  double* x_local = malloc(((size_t)count + 1) * sizeof *x_local);
  double* x = calloc((size_t)n, sizeof *x); /* Alg. 9 line 1: x = 0 */
  int failed = a == NULL || b == NULL || diagonal == NULL || x_local == NULL || x == NULL;
  /* A spawned process joins the others inside their loop: no collective here. */
  if (!newcomer) MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, JACOBI_COMM);
  if (failed && newcomer) MPI_Abort(MPI_COMM_WORLD, 1); /* the others wait for it */
  if (failed) {
    if (rank == 0) {
      fprintf(stderr, PROGRAM ": --size %ld: cannot allocate %.0f MiB of A per process\n", n,
              (double)counts[0] * (double)n * 8.0 / 1048576.0);
    }
    return finish(1);
  }
  generate_rows((uint64_t)options.seed, n, first, count, a, b, diagonal);
#ifndef JACOBI_WITHOUT_FLEXMPI
  /* The structures that follow the partition (thesis Fig. 5.14): A, b and the
   * diagonal by row blocks, x replicated. flexmpi reallocates them when the
   * balancer moves rows. */
  check_xmpi(XMPI_Register_dense(&a, (int)n, MPI_DOUBLE, XMPI_DISTRIBUTED),
             "XMPI_Register_dense(A)");
  check_xmpi(XMPI_Register_vector(&b, (int)n, MPI_DOUBLE, XMPI_DISTRIBUTED),
             "XMPI_Register_vector(b)");
  check_xmpi(XMPI_Register_vector(&diagonal, (int)n, MPI_DOUBLE, XMPI_DISTRIBUTED),
             "XMPI_Register_vector(diagonal)");
  check_xmpi(XMPI_Register_vector(&x, (int)n, MPI_DOUBLE, XMPI_REPLICATED),
             "XMPI_Register_vector(x)");
#endif

  long first_iteration = 0;
#ifndef JACOBI_WITHOUT_FLEXMPI
  /* Where the loop starts: 0; in a process spawned by a malleability policy
   * (thesis Fig. 5.14), where the others are, with its rows of A, b, the
   * diagonal and all of x taken from them; in a job restarted from a
   * checkpoint (FLEXMPI_RESTART), after the checkpointed iteration, with
   * every registered structure read back from it. */
  int resume = 0;
  check_xmpi(XMPI_Resume(&resume), "XMPI_Resume");
  first_iteration = resume;
  if (newcomer) {
    decomposition(nprocs, n, counts, displs);
    count = counts[rank];
    first = displs[rank];
    free(x_local);
    x_local = malloc(((size_t)count + 1) * sizeof *x_local);
    if (x_local == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  }
#endif
  int removed = 0;

  double mine[kFields] = {(double)count, 0.0, 0.0, 0.0, 0.0, 0.0};
  mine[kSetup] = MPI_Wtime() - setup_start;
  if (!newcomer) MPI_Barrier(JACOBI_COMM); /* the others are in their loop already */
  const double loop_start = MPI_Wtime();
  for (long k = first_iteration; k < options.iterations; ++k) {
    /* The application's own view of the monitored region: wall and CPU time
     * of the whole region, and the time in its one MPI call. With
     * FLEXMPI_EMULATE_SPEED the busy-wait of a slower rank happens in
     * XMPI_Monitor_iter_end, so it is inside the region, as computation. */
    const double region_start = MPI_Wtime();
    const double cpu_start = thread_cpu_seconds();
    iteration_begin();
    sweep(n, first, count, a, b, diagonal, x, x_local);
    const double gather_start = MPI_Wtime();
    /* Alg. 9 line 10 (x_old = x_new), distributed: every process gets all of x. */
    MPI_Allgatherv(x_local, (int)count, MPI_DOUBLE, x, counts, displs, MPI_DOUBLE, JACOBI_COMM);
    mine[kAllgather] += MPI_Wtime() - gather_start;
    iteration_end();
    mine[kCpu] += thread_cpu_seconds() - cpu_start;
    mine[kRegion] += MPI_Wtime() - region_start;
#ifndef JACOBI_WITHOUT_FLEXMPI
    /* End of a sampling interval: flexmpi's policy (FLEXMPI_POLICY) may give
     * this process another block (thesis Alg. 5), or spawn or remove
     * processes (thesis 5.4, Fig. 5.14); A, b, the diagonal and x have then
     * already moved. A spawned process runs this program with its arguments. */
    const int old_count = count;
    check_xmpi(XMPI_Eval_reconfig(rank, nprocs, (int)k, (int)options.iterations, &count, &first,
                                  NULL, NULL, NULL),
               "XMPI_Eval_reconfig");
    if (XMPI_Get_process_status() == XMPI_REMOVED) {
      removed = 1;
      break;
    }
    const int old_nprocs = nprocs;
    MPI_Comm_rank(JACOBI_COMM, &rank);
    MPI_Comm_size(JACOBI_COMM, &nprocs);
    if (nprocs != old_nprocs) {
      free(counts);
      free(displs);
      counts = malloc((size_t)nprocs * sizeof *counts);
      displs = malloc((size_t)nprocs * sizeof *displs);
      if (counts == NULL || displs == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Every process's block, for MPI_Allgatherv of x: flexmpi knows them all
     * without communication. Refreshed every time, because another process's
     * block can change while this one's stays the same. */
    decomposition(nprocs, n, counts, displs);
    if (count != old_count) {
      free(x_local);
      x_local = malloc(((size_t)count + 1) * sizeof *x_local);
      if (x_local == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    }
#endif
  }
  mine[kRows] = count;
  mine[kLoop] = MPI_Wtime() - loop_start;
  if (removed) { /* its rows went to the others; it reports nothing */
    free_buffers(a, b, diagonal, x_local, x, counts, displs);
    return finish(0);
  }

  /* ||Ax - b||_inf and the error against x_true, each process on its rows. */
  double local_norms[2] = {0.0, 0.0}, norms[2];
  for (long r = 0; r < count; ++r) {
    const double* row = a + (size_t)r * (size_t)n;
    double sum = 0.0;
    for (long j = 0; j < n; ++j) sum += row[j] * x[j];
    local_norms[0] = fmax(local_norms[0], fabs(sum - b[r]));
    local_norms[1] = fmax(local_norms[1], fabs(x[first + r] - x_true(first + r)));
  }
  MPI_Reduce(local_norms, norms, 2, MPI_DOUBLE, MPI_MAX, 0, JACOBI_COMM);
  double* all = rank == 0 ? malloc((size_t)nprocs * kFields * sizeof *all) : NULL;
  if (rank == 0 && all == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Gather(mine, kFields, MPI_DOUBLE, all, kFields, MPI_DOUBLE, 0, JACOBI_COMM);
#ifndef JACOBI_WITHOUT_FLEXMPI
  /* What flexmpi's monitoring measured (thesis 4.2): the same regions, seen
   * from inside the library, beside the program's own view. */
  long long monitored = 0;
  double library[kLibraryFields];
  check_xmpi(XMPI_Get_monitor_totals(&monitored, &library[kLibWall], &library[kLibCpu],
                                     &library[kLibMpi], &library[kLibComputation]),
             "XMPI_Get_monitor_totals");
  library[kLibIterations] = (double)monitored;
  double* library_all =
      rank == 0 ? malloc((size_t)nprocs * kLibraryFields * sizeof *library_all) : NULL;
  if (rank == 0 && library_all == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Gather(library, kLibraryFields, MPI_DOUBLE, library_all, kLibraryFields, MPI_DOUBLE, 0,
             JACOBI_COMM);
#endif

  if (rank == 0) {
    double checksum = 0.0, time = 0.0, setup = 0.0, best_speed = 0.0;
    for (long j = 0; j < n; ++j) checksum += x[j];
    for (int p = 0; p < nprocs; ++p) {
      const double* v = all + (size_t)p * kFields;
      const double compute = v[kRegion] - v[kAllgather];
      time = fmax(time, v[kLoop]);
      setup = fmax(setup, v[kSetup]);
      if (compute > 0.0) best_speed = fmax(best_speed, v[kRows] / compute);
    }
    if (options.quiet) {
      printf("program=%s size=%ld iterations=%ld procs=%d time=%.6f residual=%.3e checksum=%.17g\n",
             PROGRAM, n, options.iterations, nprocs, time, norms[0], checksum);
    } else {
      printf(PROGRAM
             ": dense Jacobi (thesis Alg. 9), n=%ld, %ld iterations, %d processes, seed %ld\n",
             n, options.iterations, nprocs, options.seed);
      printf("  residual ||Ax-b||_inf     %.3e\n", norms[0]);
      printf("  error ||x-x_true||_inf    %.3e\n", norms[1]);
      printf("  checksum sum(x)           %.17g\n", checksum);
      printf("  time, max over ranks      %.3f s  (iterations; setup %.3f s)\n", time, setup);
      printf("  per process, summed over the %ld iterations:\n", options.iterations);
      printf("  %5s %9s %12s %12s %13s %9s %10s\n", "rank", "rows", "region s", "compute s",
             "Allgatherv s", "CPU s", "rel.speed");
      for (int p = 0; p < nprocs; ++p) {
        const double* v = all + (size_t)p * kFields;
        const double compute = v[kRegion] - v[kAllgather];
        const double speed =
            compute > 0.0 && best_speed > 0.0 ? v[kRows] / compute / best_speed : 0.0;
        printf("  %5d %9.0f %12.3f %12.3f %13.3f %9.3f %10.2f\n", p, v[kRows], v[kRegion], compute,
               v[kAllgather], v[kCpu], speed);
      }
      printf("  region = monitored iteration (Monitor_iter_begin..end);\n");
      printf("  compute = region - Allgatherv; rel.speed = rows/compute s, fastest = 1.\n");
#ifndef JACOBI_WITHOUT_FLEXMPI
      printf("  measured by flexmpi itself (XMPI_Get_monitor_totals):\n");
      printf("  %5s %10s %12s %14s %9s %9s\n", "rank", "iterations", "wall s", "computation s",
             "MPI s", "CPU s");
      for (int p = 0; p < nprocs; ++p) {
        const double* v = library_all + (size_t)p * kLibraryFields;
        printf("  %5d %10.0f %12.3f %14.3f %9.3f %9.3f\n", p, v[kLibIterations], v[kLibWall],
               v[kLibComputation], v[kLibMpi], v[kLibCpu]);
      }
#endif
    }
  }
#ifndef JACOBI_WITHOUT_FLEXMPI
  free(library_all);
#endif
  free(all);
  free_buffers(a, b, diagonal, x_local, x, counts, displs);
  return finish(0);
}
