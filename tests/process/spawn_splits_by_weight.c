/* A spawn hands out rows by the workload model, not by row count.
 *
 * Two processes balance a registered vector under FLEXMPI_LB_MODEL=weight:
 * the first half of the rows weighs 1, the second 9, and a row costs its
 * weight. At iteration 20 each spawns one process; XMPI_Send_data must split
 * the rows so that the three hold comparable work (by row count the last
 * would hold 9 times the first's: EpiGraph's newcomers at the epidemic's peak
 * held 25 times the others' work). The speeds differ by up to 1.7x between
 * this VM's cores, so the bound is a factor 3, not equality. Every element is
 * checked after every step. */
#include <mpi.h>
#include <stdlib.h>

#include "flexmpi.h"
#include "process_check.h"

enum { kRows = 3000, kIterations = 40, kSpawn = 20 };

static double weight_of(int row) { return row < kRows / 2 ? 1.0 : 9.0; }

static double compute(const double* x, int count, int displ) {
  double sum = 0.0;
  for (int i = 0; i < count; ++i) {
    const int cost = (int)(300 * weight_of(displ + i));
    for (int k = 0; k < cost; ++k) sum += x[i] * 1e-9 * k;
  }
  return sum;
}

/* Right after the spawn: the most and least work held differ by < 3x. */
static void check_work(int it) {
  int rank, nprocs;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  int counts[8], displs[8];
  CHECK_CODE(XMPI_Get_decomposition(nprocs, kRows, counts, displs), XMPI_SUCCESS);
  double most = 0.0, least = 1e300;
  for (int p = 0; p < nprocs; ++p) {
    double work = 0.0;
    for (int i = displs[p]; i < displs[p] + counts[p]; ++i) work += weight_of(i);
    most = work > most ? work : most;
    least = work < least ? work : least;
  }
  if (rank == 0) {
    printf("iteration %d: %d processes, rows", it, nprocs);
    for (int p = 0; p < nprocs; ++p) printf(" %d", counts[p]);
    printf(", work from %.0f to %.0f\n", least, most);
  }
  CHECK(nprocs == 3, "iteration %d: %d processes, expected 3", it, nprocs);
  CHECK(most < 3.0 * least, "iteration %d: work from %.0f to %.0f, split by row count?", it, least,
        most);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs, count, displ, it;
  double* x = NULL;
  start_registered_rows(&x, kRows, &count, &displ, &it);
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  double weight[kRows];
  for (int i = 0; i < kRows; ++i) weight[i] = weight_of(i);
  volatile double sink = 0.0;
  for (; it < kIterations; ++it) {
    if (it == kSpawn + 1) check_work(it);
    CHECK_CODE(XMPI_Monitor_iter_begin(NULL), XMPI_SUCCESS);
    sink = sink + compute(x, count, displ);
    double total = 0.0;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    CHECK_CODE(XMPI_Monitor_iter_end(NULL), XMPI_SUCCESS);
    CHECK_CODE(XMPI_Eval_lbalance(rank, nprocs, it, kIterations, &count, &displ, weight),
               XMPI_SUCCESS);
    check_elements(x, count, displ, it);
    if (it == kSpawn) {
      CHECK_CODE(XMPI_Spawn(NULL, NULL, 1, MPI_INFO_NULL, NULL), XMPI_SUCCESS);
      CHECK_CODE(XMPI_Send_data(it + 1, &count, &displ), XMPI_SUCCESS);
      MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
      MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
      check_elements(x, count, displ, it);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &process_check_failures, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
  if (rank == 0 && process_check_failures == 0)
    printf("spawn_splits_by_weight: all checks passed\n");
  free(x);
  MPI_Finalize();
  return process_check_failures == 0 ? 0 : 1;
}
