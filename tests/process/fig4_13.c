/* Thesis Fig. 4.13: a malleable program written with the low-level API
 *. Started with 3 processes, it spawns 3 more (flex_static
 * side), all 6 do an MPI_Allreduce, one dynamic process is removed and the
 * 5 others do an MPI_Allgather. Both sides of the figure are this one
 * program (flex_dynamic): a process tells them apart by its status. The
 * figure's code is kept as written; checks are added around it. */
#include <mpi.h>
#include <stdlib.h>

#include "flexmpi.h"
#include "process_check.h"

int main(int argc, char* argv[]) {
  int rank, size, status;
  int sendbuf, recvbuf, count = 1, scount = 1, rcount = 1;
  int gathered[16];

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  status = XMPI_Get_process_status();

  if (status == XMPI_RUNNING) { /* flex_static.c */
    CHECK(size == 3, "the initial set has %d processes, expected 3", size);
#ifdef OPEN_MPI
    CHECK_CODE(XMPI_Spawn("flex_dynamic", argv, 3, NULL, NULL), XMPI_SUCCESS);
#else /* MPI_Info is an integer handle elsewhere: NULL is not one */
    CHECK_CODE(XMPI_Spawn("flex_dynamic", argv, 3, MPI_INFO_NULL, NULL), XMPI_SUCCESS);
#endif
  } else { /* flex_dynamic.c */
    CHECK(status == XMPI_NEWLY_SPAWNED, "status %d, expected XMPI_NEWLY_SPAWNED", status);
  }
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  CHECK(size == 6, "after XMPI_Spawn: %d processes, expected 6", size);
  CHECK((status == XMPI_RUNNING) == (rank < 3), "rank %d has status %d", rank, status);

  sendbuf = 10 * rank;
  MPI_Allreduce(&sendbuf, &recvbuf, count, MPI_INT, MPI_MAX, XMPI_COMM_WORLD);
  CHECK(recvbuf == 50, "MPI_Allreduce(MAX) gave %d, expected 50", recvbuf);

  CHECK_CODE(XMPI_Remove(1, NULL), XMPI_SUCCESS);
  status = XMPI_Get_process_status();
  if (status != XMPI_REMOVED) {
    int old_rank = rank, p;
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Comm_size(XMPI_COMM_WORLD, &size);
    CHECK(size == 5, "after XMPI_Remove: %d processes, expected 5", size);
    CHECK(rank == old_rank, "rank %d became %d (the newest process leaves)", old_rank, rank);
    sendbuf = 10 * rank;
    MPI_Allgather(&sendbuf, scount, MPI_INT, gathered, rcount, MPI_INT, XMPI_COMM_WORLD);
    for (p = 0; p < size; ++p) CHECK(gathered[p] == 10 * p, "gathered[%d] = %d", p, gathered[p]);
    /* Every process still here agrees the run passed. */
    MPI_Allreduce(MPI_IN_PLACE, &process_check_failures, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
    if (rank == 0 && process_check_failures == 0) printf("fig4_13: all checks passed\n");
  } else {
    CHECK(rank == 5, "rank %d was removed, expected the newest (5)", rank);
    CHECK(XMPI_COMM_WORLD == MPI_COMM_NULL, "a removed process has no XMPI_COMM_WORLD");
  }
  MPI_Finalize();
  return process_check_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
