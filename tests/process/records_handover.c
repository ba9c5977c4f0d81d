/* Records (XMPI_Register_record) reach a spawned process with its rows.
 *
 * Two processes advance a simulated time (t += dt, whose rounding a newcomer
 * cannot recompute from the iteration alone) and a residual history for
 * kSpawnAt iterations, then spawn one process and hand over the data. The
 * newcomer first registers the time as a float: XMPI_Get_data and
 * XMPI_Send_data both return XMPI_ERR_ARG naming record 0, and nothing
 * moves. It registers the records as the others did and the hand-over is
 * retried: it must then hold rank 0's time and history bit for bit, and its
 * rows. After a few more iterations it is removed: on the removed process
 * XMPI_Unregister of a structure or of a record returns XMPI_ERR_STATE. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "flexmpi.h"
#include "process_check.h"

enum { kRows = 600, kIterations = 12, kSpawnAt = 5, kRemoveAt = 9 };
static const double kDt = 0.1;

/* Iteration it's step of the state every process keeps. */
static void advance(double* time, double* history, int it) {
  *time += kDt;
  history[it] = 1.0 / (1.0 + *time * *time);
}

/* Every process holds rank 0's records, bit for bit. */
static void check_same_as_rank0(const double* time, const double* history, int it) {
  double reference[1 + kIterations];
  reference[0] = *time;
  memcpy(reference + 1, history, sizeof(double) * kIterations);
  MPI_Bcast(reference, 1 + kIterations, MPI_DOUBLE, 0, XMPI_COMM_WORLD);
  CHECK(memcmp(reference, time, sizeof *time) == 0, "iteration %d: time %.17g, rank 0's %.17g", it,
        *time, reference[0]);
  CHECK(memcmp(reference + 1, history, sizeof(double) * kIterations) == 0,
        "iteration %d: the residual history differs from rank 0's", it);
}

/* A newcomer's first attempt: the time as a float, which the others did not register. */
static void newcomer_mismatched_attempt(double* history) {
  float time_as_float = 0.0f;
  int it = -1;
  CHECK_CODE(XMPI_Register_record("time", &time_as_float, 1, MPI_FLOAT), XMPI_SUCCESS);
  CHECK_CODE(XMPI_Register_record("residuals", history, kIterations, MPI_DOUBLE), XMPI_SUCCESS);
  CHECK_CODE(XMPI_Get_data(&it), XMPI_ERR_ARG);
  CHECK(strstr(XMPI_Last_error_message(), "record 0 is 'time' of 1 float64") != NULL,
        "the mismatch message does not name record 0: %s", XMPI_Last_error_message());
  CHECK(XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED,
        "a failed XMPI_Get_data changed the status");
  CHECK_CODE(XMPI_Unregister(&time_as_float), XMPI_SUCCESS);
  CHECK_CODE(XMPI_Unregister(history), XMPI_SUCCESS);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int newcomer = XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED;
  int rank, nprocs, count, displ, it = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  CHECK_CODE(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), XMPI_SUCCESS);
  double* x = malloc((size_t)(count > 0 ? count : 1) * sizeof *x);
  for (int i = 0; i < count; ++i) x[i] = displ + i;
  CHECK_CODE(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);
  double time = newcomer ? NAN : 0.0, history[kIterations];
  for (int k = 0; k < kIterations; ++k) history[k] = newcomer ? NAN : 0.0;
  if (newcomer) {
    newcomer_mismatched_attempt(history);
    CHECK_CODE(XMPI_Get_data(&it), XMPI_ERR_ARG); /* nothing registered: still a mismatch */
  }
  CHECK_CODE(XMPI_Register_record("time", &time, 1, MPI_DOUBLE), XMPI_SUCCESS);
  CHECK_CODE(XMPI_Register_record("residuals", history, kIterations, MPI_DOUBLE), XMPI_SUCCESS);
  if (newcomer) {
    CHECK_CODE(XMPI_Get_data(&it), XMPI_SUCCESS);
    CHECK(it == kSpawnAt, "the newcomer resumes at %d, expected %d", it, kSpawnAt);
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
    CHECK_CODE(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), XMPI_SUCCESS);
    check_same_as_rank0(&time, history, it);
  }
  for (; it < kIterations; ++it) {
    if (it == kSpawnAt && !newcomer) {
      CHECK_CODE(XMPI_Spawn(NULL, NULL, 1, MPI_INFO_NULL, NULL), XMPI_SUCCESS);
      for (int attempt = 0; attempt < 2; ++attempt) { /* the newcomer's mismatches */
        CHECK_CODE(XMPI_Send_data(it, &count, &displ), XMPI_ERR_ARG);
      }
      CHECK_CODE(XMPI_Send_data(it, &count, &displ), XMPI_SUCCESS);
      MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
      MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
      check_same_as_rank0(&time, history, it);
    }
    if (it == kRemoveAt) {
      CHECK_CODE(XMPI_Remove(1, NULL), XMPI_SUCCESS);
      if (XMPI_Get_process_status() == XMPI_REMOVED) {
        CHECK_CODE(XMPI_Unregister(&x), XMPI_ERR_STATE);
        CHECK_CODE(XMPI_Unregister(&time), XMPI_ERR_STATE);
        break;
      }
      MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
      MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
      CHECK_CODE(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), XMPI_SUCCESS);
    }
    advance(&time, history, it);
    check_elements(x, count, displ, it);
  }
  if (XMPI_Get_process_status() != XMPI_REMOVED) {
    CHECK(nprocs == 2, "%d processes at the end, expected 2", nprocs);
    check_same_as_rank0(&time, history, it);
    MPI_Allreduce(MPI_IN_PLACE, &process_check_failures, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
    if (rank == 0 && process_check_failures == 0) printf("records_handover: all checks passed\n");
    CHECK_CODE(XMPI_Unregister(&time), XMPI_SUCCESS);
    CHECK_CODE(XMPI_Unregister(history), XMPI_SUCCESS);
  }
  free(x);
  MPI_Finalize();
  return process_check_failures == 0 ? 0 : 1;
}
