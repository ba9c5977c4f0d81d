/* flexmpi's collective calls made by some ranks only, and a run
 * that makes them right. README's balanced loop, 20 iterations, with
 * FLEXMPI_SAMPLING_INTERVAL=5: the first collective evaluation is at the end
 * of iteration 4. argv[1] says who misbehaves there:
 *   all                   every rank calls XMPI_Eval_lbalance; rank 1 comes
 *                         1 s late once, under the timeout; exits 0
 *   reconfig-rank0-only   rank 0 calls XMPI_Eval_reconfig, the others nothing
 *   lbalance-skipped      the last rank skips XMPI_Eval_lbalance
 *   rank0-skips           rank 0 skips XMPI_Eval_lbalance
 *   redistribute-skipped  after the loop, rank 1 skips XMPI_Redistribute_data
 *   iterations-differ     the last rank monitors two iterations per loop
 *                         iteration and nobody evaluates: it reaches the end
 *                         of its first sampling interval (inside
 *                         XMPI_Monitor_iter_end) long before the others
 *   iterations-differ-rank0  the same, rank 0 the one that monitors twice
 *   it-differs            the last rank passes it + 1 to XMPI_Eval_lbalance
 *                         at iteration 4: every rank is told (XMPI_ERR_ARG),
 *                         prints "rank <r>: <message>" and goes on; exits 0
 *   free-world            MPI_Comm_free and MPI_Comm_disconnect of
 *                         XMPI_COMM_WORLD (MPI_ERRORS_RETURN): both refused
 *                         with MPI_ERR_COMM, the communicator still works; exits 0
 * The ranks that go on meet the waiting ones in the next MPI_Allreduce: without
 * the watchdog (FLEXMPI_COLLECTIVE_TIMEOUT) every rank blocks forever. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flexmpi.h"

enum { kRows = 3000, kIterations = 20, kMisstep = 4 };

static void check(int code, const char* call) {
  if (code != XMPI_SUCCESS) {
    fprintf(stderr, "%s: %s\n", call, XMPI_Last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* Whether this rank makes the evaluation at the end of iteration `it`. */
static int evaluates(const char* mode, int rank, int nprocs, int it) {
  if (strncmp(mode, "iterations-differ", 17) == 0) return 0;
  if (it != kMisstep) return 1;
  if (strcmp(mode, "reconfig-rank0-only") == 0) return rank == 0;
  if (strcmp(mode, "lbalance-skipped") == 0) return rank != nprocs - 1;
  if (strcmp(mode, "rank0-skips") == 0) return rank != 0;
  return 1;
}

/* Monitored iterations per loop iteration. */
static int monitored_per_iteration(const char* mode, int rank, int nprocs) {
  if (strcmp(mode, "iterations-differ") == 0) return rank == nprocs - 1 ? 2 : 1;
  if (strcmp(mode, "iterations-differ-rank0") == 0) return rank == 0 ? 2 : 1;
  return 1;
}

/* free-world: flexmpi refuses to destroy XMPI_COMM_WORLD, and it still works. */
static void try_to_free_world(int rank) {
  MPI_Comm_set_errhandler(XMPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const MPI_Comm before = XMPI_COMM_WORLD;
  int freed = MPI_Comm_free(&XMPI_COMM_WORLD), disconnected = MPI_Comm_disconnect(&XMPI_COMM_WORLD);
  int freed_class = -1, disconnected_class = -1;
  MPI_Error_class(freed, &freed_class);
  MPI_Error_class(disconnected, &disconnected_class);
  if (freed_class != MPI_ERR_COMM || disconnected_class != MPI_ERR_COMM ||
      XMPI_COMM_WORLD != before) {
    fprintf(stderr, "rank %d: MPI_Comm_free gave class %d, MPI_Comm_disconnect %d (expected %d)\n",
            rank, freed_class, disconnected_class, MPI_ERR_COMM);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "all";
  int rank = 0, nprocs = 1, count = 0, displ = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  check(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), "XMPI_Get_wsize");
  double* x = malloc((count > 0 ? count : 1) * sizeof *x);
  for (int i = 0; i < count; ++i) x[i] = displ + i;
  check(XMPI_Register_vector((void**)&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED),
        "XMPI_Register_vector");
  if (strcmp(mode, "free-world") == 0) try_to_free_world(rank);
  for (int it = 0; it < kIterations; ++it) {
    check(XMPI_Monitor_iter_begin(NULL), "XMPI_Monitor_iter_begin");
    double local = 0.0, total = 0.0;
    for (int i = 0; i < count; ++i) local += (x[i] += 1.0);
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    check(XMPI_Monitor_iter_end(NULL), "XMPI_Monitor_iter_end");
    for (int extra = 1; extra < monitored_per_iteration(mode, rank, nprocs); ++extra) {
      check(XMPI_Monitor_iter_begin(NULL), "XMPI_Monitor_iter_begin");
      check(XMPI_Monitor_iter_end(NULL), "XMPI_Monitor_iter_end");
    }
    if (strcmp(mode, "all") == 0 && rank == 1 && it == kMisstep) sleep(1);
    if (!evaluates(mode, rank, nprocs, it)) continue;
    if (strcmp(mode, "reconfig-rank0-only") == 0 && it == kMisstep) {
      check(XMPI_Eval_reconfig(rank, nprocs, it, kIterations, &count, &displ, NULL, NULL, NULL),
            "XMPI_Eval_reconfig");
    } else if (strcmp(mode, "it-differs") == 0 && it == kMisstep) {
      const int passed = rank == nprocs - 1 ? it + 1 : it;
      if (XMPI_Eval_lbalance(rank, nprocs, passed, kIterations, &count, &displ, NULL) ==
          XMPI_ERR_ARG) {
        fprintf(stderr, "rank %d: %s\n", rank, XMPI_Last_error_message());
      }
    } else {
      check(XMPI_Eval_lbalance(rank, nprocs, it, kIterations, &count, &displ, NULL),
            "XMPI_Eval_lbalance");
    }
  }
  if (strcmp(mode, "redistribute-skipped") != 0 || rank != 1) {
    check(XMPI_Redistribute_data(count, displ, count, displ), "XMPI_Redistribute_data");
  }
  MPI_Barrier(XMPI_COMM_WORLD);
  if (rank == 0) printf("collective_calls %s: done\n", mode);
  free(x);
  MPI_Finalize();
  return 0;
}
