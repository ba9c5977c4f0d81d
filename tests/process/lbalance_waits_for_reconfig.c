/* XMPI_Eval_lbalance balances only; the spawn it leaves waiting is
 * XMPI_Eval_reconfig's.
 *
 * Two processes run README's balanced loop under FLEXMPI_POLICY=smp with the
 * schedule "10 spawn 1" (FLEXMPI_SAMPLING_INTERVAL=5). Iterations 0-29 call
 * only XMPI_Eval_lbalance: the spawn, due from the interval ending at 14
 * (the first at or after 10), waits, and the loop keeps its 2 processes.
 * From iteration 30 the loop calls XMPI_Eval_reconfig: the interval ending at
 * 34 spawns the process, which starts at 35 (XMPI_Get_data), and nothing
 * else changes processes. Each iteration adds 1 to every element: element i
 * holds i + it + 1 after iteration it, on whichever process owns it, checked
 * every iteration. After every evaluation XMPI_Get_blocks_changed must say
 * whether the decomposition (or the process count) changed. Rank 0 finally
 * reads FLEXMPI_TRACE: the 4 intervals ending at 14-29 say the spawn waits. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "flexmpi.h"
#include "process_check.h"

enum { kRows = 6000, kIterations = 50, kFirstReconfig = 30, kSpawnAfter = 34, kMaxProcs = 8 };

/* counts, then displacements, of every block; nprocs in *nprocs. */
static void decomposition(int blocks[2 * kMaxProcs], int* nprocs) {
  MPI_Comm_size(XMPI_COMM_WORLD, nprocs);
  memset(blocks, 0, 2 * kMaxProcs * sizeof *blocks);
  CHECK_CODE(XMPI_Get_decomposition(*nprocs, kRows, blocks, blocks + kMaxProcs), XMPI_SUCCESS);
}

static void check_blocks_changed(const int before[2 * kMaxProcs], int nprocs_before, int it) {
  int after[2 * kMaxProcs], nprocs = 0, changed = -1;
  decomposition(after, &nprocs);
  const int expected = nprocs != nprocs_before || memcmp(before, after, sizeof after) != 0;
  CHECK_CODE(XMPI_Get_blocks_changed(&changed), XMPI_SUCCESS);
  CHECK(changed == expected, "after iteration %d: XMPI_Get_blocks_changed says %d, expected %d", it,
        changed, expected);
}

static void check_values(const double* x, int count, int displ, int it) {
  for (int i = 0; i < count; ++i) {
    if (x[i] != (double)(displ + i + it + 1)) {
      CHECK(0, "after iteration %d: element %d holds %g", it, displ + i, x[i]);
      return;
    }
  }
}

/* Occurrences of `text` in the file `path`. */
static int occurrences(const char* path, const char* text) {
  FILE* file = fopen(path, "r");
  CHECK(file != NULL, "cannot read the trace %s", path);
  if (file == NULL) return -1;
  fseek(file, 0, SEEK_END);
  const long size = ftell(file);
  rewind(file);
  char* content = calloc((size_t)size + 1, 1);
  const size_t read = fread(content, 1, (size_t)size, file);
  fclose(file);
  int found = 0;
  for (const char* at = content; read > 0 && (at = strstr(at, text)) != NULL; at += strlen(text)) {
    ++found;
  }
  free(content);
  return found;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs, count, displ, it = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  CHECK_CODE(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), XMPI_SUCCESS);
  double* x = malloc((size_t)(count > 0 ? count : 1) * sizeof *x);
  for (int i = 0; i < count; ++i) x[i] = displ + i;
  CHECK_CODE(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);
  if (XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED) {
    CHECK_CODE(XMPI_Get_data(&it), XMPI_SUCCESS);
    CHECK(it == kSpawnAfter + 1, "the spawned process starts at iteration %d, not %d", it,
          kSpawnAfter + 1);
    int changed = 0;
    CHECK_CODE(XMPI_Get_blocks_changed(&changed), XMPI_SUCCESS);
    CHECK(changed == 1, "XMPI_Get_data gave the new process its rows but says %d", changed);
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
    CHECK_CODE(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), XMPI_SUCCESS);
  }
  for (; it < kIterations; ++it) {
    CHECK_CODE(XMPI_Monitor_iter_begin(NULL), XMPI_SUCCESS);
    for (int i = 0; i < count; ++i) x[i] += 1.0;
    double total = count;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    CHECK_CODE(XMPI_Monitor_iter_end(NULL), XMPI_SUCCESS);
    CHECK(total == kRows, "iteration %d: the blocks hold %.0f rows, not %d", it, total, kRows);
    int before[2 * kMaxProcs], nprocs_before = 0;
    decomposition(before, &nprocs_before);
    if (it < kFirstReconfig) {
      CHECK_CODE(XMPI_Eval_lbalance(rank, nprocs, it, kIterations, &count, &displ, NULL),
                 XMPI_SUCCESS);
    } else {
      CHECK_CODE(
          XMPI_Eval_reconfig(rank, nprocs, it, kIterations, &count, &displ, NULL, NULL, NULL),
          XMPI_SUCCESS);
    }
    check_blocks_changed(before, nprocs_before, it);
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
    const int expected = it < kSpawnAfter ? 2 : 3;
    CHECK(nprocs == expected, "after iteration %d: %d processes, expected %d", it, nprocs,
          expected);
    check_values(x, count, displ, it);
  }
  MPI_Allreduce(MPI_IN_PLACE, &process_check_failures, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
  if (rank == 0) {
    const char* trace = getenv("FLEXMPI_TRACE");
    const int waiting = occurrences(trace, "\"process_change_waits_for\":\"XMPI_Eval_reconfig\"");
    CHECK(waiting == 4, "%d intervals of the trace say a process change waits, expected 4",
          waiting);
    if (process_check_failures == 0) printf("lbalance_waits_for_reconfig: all checks passed\n");
  }
  free(x);
  MPI_Finalize();
  return process_check_failures == 0 ? 0 : 1;
}
