/* XMPI_Spawn beyond the processes the job may reach. Without a
 * hostfile and FLEXMPI_MAX_PROCS the bound is the slots mpiexec gave the job
 * (MPI_UNIVERSE_SIZE): a spawn of 1000 processes is refused at once with
 * XMPI_ERR_ARG and a message naming the bound and how to raise it, nothing
 * is spawned, and the application goes on with its processes (before, one
 * process was spawned every ~0.3 s). INT_MAX processes are refused the same
 * way (their sum with the running ones once wrapped below the bound).
 * Rank 0 prints the message of the spawn of 1000. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "flexmpi.h"
#include "process_check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, flag = 0, after = 0;
  int* universe = NULL;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag);
  CHECK(flag != 0, "MPI gives no MPI_UNIVERSE_SIZE");
  const double start = MPI_Wtime();
  CHECK_CODE(XMPI_Spawn(NULL, NULL, 1000, MPI_INFO_NULL, NULL), XMPI_ERR_ARG);
  const double seconds = MPI_Wtime() - start;
  char refusal[512];
  snprintf(refusal, sizeof refusal, "%s", XMPI_Last_error_message());
  char expected[64];
  snprintf(expected, sizeof expected, "bound of %d processes", flag ? *universe : -1);
  CHECK(strstr(XMPI_Last_error_message(), expected) != NULL, "'%s' does not say '%s'",
        XMPI_Last_error_message(), expected);
  CHECK(strstr(XMPI_Last_error_message(), "FLEXMPI_MAX_PROCS") != NULL,
        "'%s' does not say how to raise the bound", XMPI_Last_error_message());
  CHECK(seconds < 5.0, "the refusal took %.1f s", seconds);
  /* INT_MAX more than the running processes must not wrap around the bound. */
  char largest[64];
  snprintf(largest, sizeof largest, "would make %lld", (long long)size + INT_MAX);
  CHECK_CODE(XMPI_Spawn(NULL, NULL, INT_MAX, MPI_INFO_NULL, NULL), XMPI_ERR_ARG);
  CHECK(strstr(XMPI_Last_error_message(), largest) != NULL, "'%s' does not say '%s'",
        XMPI_Last_error_message(), largest);
  MPI_Comm_size(XMPI_COMM_WORLD, &after);
  CHECK(after == size, "%d processes after the refused spawn, %d before", after, size);
  if (rank == 0) printf("XMPI_Spawn of 1000: %s\n", refusal);
  MPI_Finalize();
  return process_check_failures == 0 ? 0 : 1;
}
