/* bench-ull-calibrate-cost: what one ULL_MPI_calibrate(ULL_MPI_END) costs
 * when nothing moves, against its floor measured in the same run: the one
 * MPI_Allgather of a double that sharing the section times needs anyway
 * (PMPI_Allgather, MPI alone). The difference is the call's checks: the
 * watchdog's arrival round (every rank at the same iteration) and the
 * agreement on a failed argument check.
 *
 * Each repetition times one batch of INIT/END pairs around an empty section
 * and one batch of PMPI_Allgather, alternating which goes first; the ratio is
 * the median over the repetitions of the slowest rank's batch times.
 *
 *   mpiexec -n P bench-ull-calibrate-cost [REPETITIONS] [BATCH]
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "ull_calibrate.h"

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* values, int n) {
  qsort(values, (size_t)n, sizeof(double), compare_doubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/* The slowest rank's time of `batch` calls of the ULL pair, in seconds. */
static double time_calibrate(int first_iteration, int batch, int** counts, int** displs, int n) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int it = first_iteration; it < first_iteration + batch; ++it) {
    if (ULL_MPI_calibrate(ULL_MPI_INIT, it, counts, displs, INT_MAX, 1, n) != ULL_MPI_SUCCESS ||
        ULL_MPI_calibrate(ULL_MPI_END, it, counts, displs, INT_MAX, 1, n) != ULL_MPI_SUCCESS) {
      fprintf(stderr, "ULL_MPI_calibrate failed\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  double local = MPI_Wtime() - start, slowest = 0.0;
  PMPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

static double time_allgather(int batch, double* gathered) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime(), mine = 1.0;
  for (int i = 0; i < batch; ++i) {
    PMPI_Allgather(&mine, 1, MPI_DOUBLE, gathered, 1, MPI_DOUBLE, MPI_COMM_WORLD);
  }
  double local = MPI_Wtime() - start, slowest = 0.0;
  PMPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int repetitions = argc > 1 ? atoi(argv[1]) : 21;
  const int batch = argc > 2 ? atoi(argv[2]) : 500;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (repetitions < 1 || batch < 1) {
    if (rank == 0) fprintf(stderr, "usage: bench-ull-calibrate-cost [REPETITIONS>0] [BATCH>0]\n");
    MPI_Finalize();
    return 2;
  }
  const int n = 1000 * size;
  int* counts = malloc(sizeof(int) * (size_t)size);
  int* displs = malloc(sizeof(int) * (size_t)size);
  double* gathered = malloc(sizeof(double) * (size_t)size);
  for (int q = 0; q < size; ++q) counts[q] = 1000, displs[q] = 1000 * q;
  ULL_MPI_init_calibratelib();
  double* calibrate = malloc(sizeof(double) * (size_t)repetitions);
  double* floor = malloc(sizeof(double) * (size_t)repetitions);
  double* ratio = malloc(sizeof(double) * (size_t)repetitions);
  for (int r = 0; r < repetitions; ++r) {
    if (r % 2) floor[r] = time_allgather(batch, gathered);
    calibrate[r] = time_calibrate(r * batch, batch, &counts, &displs, n);
    if (r % 2 == 0) floor[r] = time_allgather(batch, gathered);
    ratio[r] = calibrate[r] / floor[r];
  }
  const double ratio_median = median(ratio, repetitions);
  const double calibrate_us = median(calibrate, repetitions) / batch * 1e6;
  const double floor_us = median(floor, repetitions) / batch * 1e6;
  if (rank == 0) {
    printf("# median of %d repetitions of %d calls; us per call\n", repetitions, batch);
    printf("%6s %16s %16s %8s\n", "ranks", "ULL_END_us", "PMPI_Allgather", "ratio");
    printf("%6d %16.2f %16.2f %8.2f\n", size, calibrate_us, floor_us, ratio_median);
  }
  ULL_MPI_shutdown_calibratelib();
  free(calibrate), free(floor), free(ratio), free(gathered), free(counts), free(displs);
  MPI_Finalize();
  return 0;
}
