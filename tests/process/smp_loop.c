/* A malleable loop as thesis Fig. 5.14 writes it, driven by the smp policy
 * (thesis 5.4.1, Alg. 6) through XMPI_Eval_reconfig: a predefined schedule
 * (FLEXMPI_SCHEDULE) or a resource manager's scenario (FLEXMPI_RESOURCES).
 *
 *   smp_loop --smp-marker TIMELINE
 *
 * TIMELINE is the process count the test expects once an iteration has
 * ended, as "iteration:count,..." from iteration 0 on (e.g. 0:2,14:4,34:3).
 * The spawned processes start with the program's own arguments (argv NULL),
 * get their rows with XMPI_Get_data and resume right after one of the
 * timeline's iterations; removed ones leave the loop. Every element of the
 * registered vector is checked after every iteration, and every process
 * checks the process count in every iteration. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "flexmpi.h"
#include "process_check.h"

enum { kRows = 6000, kIterations = 70, kMaxEvents = 16 };

static int event_iteration[kMaxEvents], event_count[kMaxEvents], events = 0;

static void parse_timeline(const char* text) {
  int used = 0;
  while (events < kMaxEvents &&
         sscanf(text, "%d:%d%n", &event_iteration[events], &event_count[events], &used) == 2) {
    ++events;
    text += used;
    if (*text != ',') break;
    ++text;
  }
  CHECK(events > 0 && event_iteration[0] == 0, "bad timeline '%s'", text);
}

/* Processes expected once iteration `it` has ended. */
static int expected_processes(int it) {
  int count = event_count[0];
  for (int e = 0; e < events && event_iteration[e] <= it; ++e) count = event_count[e];
  return count;
}

/* Whether a spawned process may resume at `it`: right after an event. */
static int is_resume_iteration(int it) {
  for (int e = 1; e < events; ++e) {
    if (event_iteration[e] + 1 == it) return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CHECK(argc == 3 && strcmp(argv[1], "--smp-marker") == 0,
        "started with %d arguments, not this program's own (--smp-marker TIMELINE)", argc - 1);
  if (argc == 3) parse_timeline(argv[2]);
  int rank, nprocs, count, displ, it = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  CHECK_CODE(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), XMPI_SUCCESS);
  double* x = malloc((size_t)(count > 0 ? count : 1) * sizeof *x);
  for (int i = 0; i < count; ++i) x[i] = displ + i;
  CHECK_CODE(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);
  if (XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED) {
    CHECK_CODE(XMPI_Get_data(&it), XMPI_SUCCESS);
    CHECK(is_resume_iteration(it), "a spawned process resumes at iteration %d, not after an event",
          it);
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
    if (rank == 0 && process_check_failures == 0) printf("smp_loop: all checks passed\n");
  }
  free(x);
  MPI_Finalize();
  return process_check_failures == 0 ? 0 : 1;
}
