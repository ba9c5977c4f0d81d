/* A newly spawned process that never calls XMPI_Get_data and makes a
 * collective of its own over XMPI_COMM_WORLD instead (a usual mistake of a
 * port: a broadcast of the input before the loop). Two processes balance a
 * registered vector, spawn one at iteration 4 and hand the data over with
 * XMPI_Send_data; the newcomer waits in MPI_Barrier, the others in
 * XMPI_Send_data. The watchdog ends the job and names the newcomer as one
 * that has not called XMPI_Get_data; without it every process waited forever. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "flexmpi.h"
#include "process_check.h"

enum { kRows = 3000, kIterations = 10, kSpawnAt = 4 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED) {
    MPI_Barrier(XMPI_COMM_WORLD); /* the mistake: XMPI_Get_data belongs first */
    MPI_Finalize();
    return 0;
  }
  int rank, nprocs, count, displ;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  CHECK_CODE(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), XMPI_SUCCESS);
  double* x = malloc((size_t)kRows * sizeof *x);
  for (int i = 0; i < count; ++i) x[i] = displ + i;
  CHECK_CODE(XMPI_Register_vector((void**)&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);
  for (int it = 0; it < kIterations; ++it) {
    CHECK_CODE(XMPI_Monitor_iter_begin(NULL), XMPI_SUCCESS);
    for (int i = 0; i < count; ++i) x[i] += 1.0;
    CHECK_CODE(XMPI_Monitor_iter_end(NULL), XMPI_SUCCESS);
    CHECK_CODE(XMPI_Eval_lbalance(rank, nprocs, it, kIterations, &count, &displ, NULL),
               XMPI_SUCCESS);
    if (it == kSpawnAt) {
      CHECK_CODE(XMPI_Spawn(NULL, NULL, 1, MPI_INFO_NULL, NULL), XMPI_SUCCESS);
      CHECK_CODE(XMPI_Send_data(it + 1, &count, &displ), XMPI_SUCCESS);
      MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
      MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
    }
  }
  if (rank == 0) printf("newcomer_skips_get_data: done\n");
  free(x);
  MPI_Finalize();
  return 0;
}
