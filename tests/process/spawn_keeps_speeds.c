/* A spawn keeps what balancing learnt.
 *
 * Two processes, rank 1 emulated at half speed (FLEXMPI_EMULATE_SPEED=1.0,0.5),
 * balance a registered vector; then each spawns one process at iteration 40
 * (the first spawn of the run) and again at iteration 80. XMPI_Send_data
 * splits the rows by the speeds of the latest interval: the slow rank must
 * keep a smaller share each time (an equal share after the first spawn
 * would mean the speeds were lost). The spawns use XMPI_Spawn(NULL, NULL, ...): the new
 * processes must get this program's own arguments (--marker keep-speeds),
 * which they check. Every element is checked after every step. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "flexmpi.h"
#include "process_check.h"

enum { kRows = 6000, kIterations = 120, kFirstSpawn = 40, kSecondSpawn = 80 };

static double compute(const double* x, int count) {
  double sum = 0.0;
  for (int i = 0; i < count; ++i) {
    for (int k = 0; k < 1500; ++k) sum += x[i] * 1e-9 * k;
  }
  return sum;
}

/* Right after a spawn: the slow rank 1 holds less than 0.8 x the others' mean. */
static void check_shares(int it) {
  int rank, nprocs;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  int counts[8], displs[8];
  CHECK_CODE(XMPI_Get_decomposition(nprocs, kRows, counts, displs), XMPI_SUCCESS);
  double others = 0.0;
  for (int p = 0; p < nprocs; ++p) {
    if (p != 1) others += counts[p];
  }
  others /= nprocs - 1;
  if (rank == 0) {
    printf("iteration %d: %d processes, rows", it, nprocs);
    for (int p = 0; p < nprocs; ++p) printf(" %d", counts[p]);
    printf("\n");
  }
  CHECK(counts[1] < 0.8 * others,
        "iteration %d: the half-speed rank 1 holds %d rows, the others %.0f on average", it,
        counts[1], others);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CHECK(argc == 3 && strcmp(argv[1], "--marker") == 0 && strcmp(argv[2], "keep-speeds") == 0,
        "started with %d arguments, not this program's own (--marker keep-speeds)", argc - 1);
  int rank, nprocs, count, displ, it;
  double* x = NULL;
  start_registered_rows(&x, kRows, &count, &displ, &it);
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  volatile double sink = 0.0;
  for (; it < kIterations; ++it) {
    if (it == kFirstSpawn + 1 || it == kSecondSpawn + 1) check_shares(it);
    CHECK_CODE(XMPI_Monitor_iter_begin(NULL), XMPI_SUCCESS);
    sink = sink + compute(x, count);
    double total = 0.0;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    CHECK_CODE(XMPI_Monitor_iter_end(NULL), XMPI_SUCCESS);
    CHECK_CODE(XMPI_Eval_lbalance(rank, nprocs, it, kIterations, &count, &displ, NULL),
               XMPI_SUCCESS);
    check_elements(x, count, displ, it);
    if (it == kFirstSpawn || it == kSecondSpawn) {
      CHECK_CODE(XMPI_Spawn(NULL, NULL, 1, MPI_INFO_NULL, NULL), XMPI_SUCCESS);
      CHECK_CODE(XMPI_Send_data(it + 1, &count, &displ), XMPI_SUCCESS);
      MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
      MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
      check_elements(x, count, displ, it);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &process_check_failures, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
  if (rank == 0 && process_check_failures == 0) printf("spawn_keeps_speeds: all checks passed\n");
  free(x);
  MPI_Finalize();
  return process_check_failures == 0 ? 0 : 1;
}
