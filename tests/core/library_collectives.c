/* The collective calls of flexmpi's other interfaces under the watchdog:
 * XMPI_Checkpoint, ULL_MPI_calibrate, DRUM_createMachineModel, DRUM_computePowers and
 * the profile exchange of MPI_Finalize, each made by some ranks only or at
 * another iteration. 3 ranks, a 20-iteration loop, FLEXMPI_SAMPLING_INTERVAL=5
 * and FLEXMPI_COLLECTIVE_TIMEOUT=2 (the tests' settings). argv[1]:
 *   checkpoint-skipped     rank 1 skips XMPI_Checkpoint and waits in the
 *                          program's MPI_Barrier
 *   checkpoint-differs     the last rank passes another next_it: every rank
 *                          is told (XMPI_ERR_ARG), prints "rank <r>: <message>"
 *                          and goes on; exits 0
 *   ull-differs            ULL_MPI_calibrate's loop, the last rank passing
 *                          iteration 5 to ULL_MPI_END at iteration 4: every
 *                          rank prints "rank <r>: <message>" and exits 1
 *   ull-skipped            the last rank skips the last ULL_MPI_END and goes
 *                          on to MPI_Finalize
 *   drum-skipped           the last rank skips DRUM_computePowers and goes on
 *                          to MPI_Finalize
 *   drum-create-skipped    the last rank skips DRUM_createMachineModel (whose
 *                          first step duplicates the program's communicator)
 *   finalize-early         the last rank skips the last XMPI_Eval_lbalance
 *                          (a sampling interval's end) and goes on to MPI_Finalize
 * Without the watchdog every rank but the ones that exit blocks forever. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexmpi.h"
#include "flexmpi/drum.h"
#include "ull_calibrate.h"

enum { kRows = 3000, kIterations = 20, kMisstep = 4 };

static void check(int code, const char* call) {
  if (code != XMPI_SUCCESS) {
    fprintf(stderr, "%s: %s\n", call, XMPI_Last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* README's balanced loop over a registered vector; the last rank skips the
 * last evaluation when `skip_last_evaluation`. */
static void balanced_loop(int rank, int nprocs, int skip_last_evaluation) {
  int count = 0, displ = 0;
  check(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), "XMPI_Get_wsize");
  double* x = malloc((size_t)kRows * sizeof *x);
  for (int i = 0; i < count; ++i) x[i] = displ + i;
  check(XMPI_Register_vector((void**)&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED),
        "XMPI_Register_vector");
  for (int it = 0; it < kIterations; ++it) {
    check(XMPI_Monitor_iter_begin(NULL), "XMPI_Monitor_iter_begin");
    double local = 0.0, total = 0.0;
    for (int i = 0; i < count; ++i) local += (x[i] += 1.0);
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    check(XMPI_Monitor_iter_end(NULL), "XMPI_Monitor_iter_end");
    if (skip_last_evaluation && it == kIterations - 1) continue;
    check(XMPI_Eval_lbalance(rank, nprocs, it, kIterations, &count, &displ, NULL),
          "XMPI_Eval_lbalance");
  }
}

static void checkpoint(const char* mode, int rank, int nprocs) {
  balanced_loop(rank, nprocs, 0);
  if (strcmp(mode, "checkpoint-skipped") == 0 && rank == 1) return;
  const int next_it =
      strcmp(mode, "checkpoint-differs") == 0 && rank == nprocs - 1 ? kIterations + 1 : kIterations;
  const int code = XMPI_Checkpoint(next_it);
  if (code == XMPI_ERR_ARG && strcmp(mode, "checkpoint-differs") == 0) {
    fprintf(stderr, "rank %d: %s\n", rank, XMPI_Last_error_message());
  } else {
    check(code, "XMPI_Checkpoint");
  }
}

/* ULL's loop (ull_calibrate.h), with no collective of the program's own. */
static void ull_loop(const char* mode, int rank, int nprocs) {
  int *counts = NULL, *displs = NULL;
  check(ULL_MPI_init_calibratelib(), "ULL_MPI_init_calibratelib");
  for (int it = 0; it < kIterations; ++it) {
    check(ULL_MPI_calibrate(ULL_MPI_INIT, it, &counts, &displs, 100, 1, kRows), "ULL_MPI_INIT");
    const int last = rank == nprocs - 1;
    if (last && strcmp(mode, "ull-skipped") == 0 && it == kIterations - 1) return;
    const int passed = last && strcmp(mode, "ull-differs") == 0 && it == kMisstep ? it + 1 : it;
    const int code = ULL_MPI_calibrate(ULL_MPI_END, passed, &counts, &displs, 100, 1, kRows);
    if (code != ULL_MPI_SUCCESS) {
      fprintf(stderr, "rank %d: %s\n", rank, ULL_MPI_Last_error_message());
      MPI_Finalize();
      exit(1);
    }
  }
  check(ULL_MPI_shutdown_calibratelib(), "ULL_MPI_shutdown_calibratelib");
  free(counts);
  free(displs);
}

static void drum(const char* mode, int rank, int nprocs) {
  if (rank == nprocs - 1 && strcmp(mode, "drum-create-skipped") == 0) return;
  DRUM_machineModel* model = DRUM_createMachineModel(XMPI_COMM_WORLD, DRUM_SILENT);
  if (model == NULL || DRUM_initMachineModel(model) != DRUM_OK) MPI_Abort(MPI_COMM_WORLD, 1);
  if (rank != nprocs - 1 && DRUM_computePowers(model) != DRUM_OK) MPI_Abort(MPI_COMM_WORLD, 1);
  DRUM_deleteMachineModel(model);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "checkpoint-skipped";
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  if (strncmp(mode, "checkpoint", 10) == 0) {
    checkpoint(mode, rank, nprocs);
  } else if (strncmp(mode, "ull", 3) == 0) {
    ull_loop(mode, rank, nprocs);
  } else if (strncmp(mode, "drum", 4) == 0) {
    drum(mode, rank, nprocs);
  } else if (strcmp(mode, "finalize-early") == 0) {
    balanced_loop(rank, nprocs, rank == nprocs - 1);
  }
  if (strncmp(mode, "checkpoint", 10) == 0) MPI_Barrier(XMPI_COMM_WORLD);
  if (rank == 0) printf("library_collectives %s: done\n", mode);
  MPI_Finalize();
  return 0;
}
