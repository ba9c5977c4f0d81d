/* The smp policy follows a predefined schedule (thesis 5.4.1, Alg. 6) through
 * XMPI_Eval_reconfig, written as thesis Fig. 5.14 writes a malleable loop.
 *
 * Two processes start; FLEXMPI_SCHEDULE (smp_schedule.txt) spawns 2 at
 * iteration 10, removes 1 at 30 and 1 at 50; with sampling intervals of 5
 * iterations the actions happen at the ends of iterations 14, 34 and 54. The
 * spawned processes start with the program's own arguments (argv NULL), get
 * their rows with XMPI_Get_data and continue the loop; removed ones leave it.
 * Every element of the registered vector is checked after every iteration,
 * and rank 0 checks the process count in every iteration. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "flexmpi.h"
#include "process_check.h"

enum { kRows = 6000, kIterations = 70 };

/* Processes the schedule asks for once iteration `it` has ended. */
static int expected_processes(int it) {
  if (it >= 54) return 2;
  if (it >= 34) return 3;
  if (it >= 14) return 4;
  return 2;
}

static void check_elements(const double* x, int count, int displ, int it) {
  for (int i = 0; i < count; ++i) {
    if (x[i] != (double)(displ + i)) {
      CHECK(0, "iteration %d: element %d holds %g", it, displ + i, x[i]);
      return;
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CHECK(argc == 2 && strcmp(argv[1], "--smp-marker") == 0,
        "started with %d arguments, not this program's own (--smp-marker)", argc - 1);
  int rank, nprocs, count, displ, it = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  CHECK_CODE(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), XMPI_SUCCESS);
  double* x = malloc((size_t)(count > 0 ? count : 1) * sizeof *x);
  for (int i = 0; i < count; ++i) x[i] = displ + i;
  CHECK_CODE(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);
  if (XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED) {
    CHECK_CODE(XMPI_Get_data(&it), XMPI_SUCCESS);
    CHECK(it == 15, "a spawned process resumes at iteration %d, expected 15", it);
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
    CHECK_CODE(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), XMPI_SUCCESS);
  }
  volatile double sink = 0.0;
  int removed = 0;
  for (; it < kIterations; ++it) {
    CHECK_CODE(XMPI_Monitor_si_init(), XMPI_SUCCESS);
    for (int i = 0; i < count; ++i) sink = sink + x[i] * 1e-9;
    double total = count;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    CHECK(total == kRows, "iteration %d: the blocks hold %.0f rows, not %d", it, total, kRows);
    CHECK_CODE(XMPI_Eval_reconfig(rank, nprocs, it, kIterations, &count, &displ, NULL, NULL, NULL),
               XMPI_SUCCESS);
    if (XMPI_Get_process_status() == XMPI_REMOVED) {
      CHECK(count == 0, "a removed process keeps %d rows", count);
      removed = 1;
      break;
    }
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
    CHECK(nprocs == expected_processes(it), "after iteration %d: %d processes, expected %d", it,
          nprocs, expected_processes(it));
    check_elements(x, count, displ, it);
  }
  if (!removed) {
    MPI_Allreduce(MPI_IN_PLACE, &process_check_failures, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
    if (rank == 0 && process_check_failures == 0) printf("smp_schedule: all checks passed\n");
  }
  free(x);
  MPI_Finalize();
  return process_check_failures == 0 ? 0 : 1;
}
