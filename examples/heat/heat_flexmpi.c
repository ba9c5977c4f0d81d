/*
 * The 2-D heat equation on a 900 x 600 grid, explicit 5-point stencil: heat.c
 * as a plain MPI program, heat_flexmpi.c the same program made balanced and
 * malleable with flexmpi. `diff heat.c heat_flexmpi.c` is the port that
 * docs/guide.md ("Port a stencil code") walks through.
 *
 * The grid's rows are split into blocks. Each process holds its block with
 * one ghost row before and after it, in two buffers: u (this step) and unew
 * (the next), swapped after every step. The ghost rows are filled from the
 * neighbouring processes at the top of each step (heat.c: MPI_Sendrecv with
 * rank - 1 and rank + 1; heat_flexmpi.c: XMPI_Halo_exchange, which follows
 * the blocks wherever flexmpi moves them). A heater under the whole plate
 * weakens with the simulated time t, so every row depends on t. The
 * checksum adds the row sums in row order: the same, bit for bit, on any
 * number of processes.
 *
 *   mpiexec -n 2 heat|heat_flexmpi [--steps K] [--quiet]
 */
#include <flexmpi.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NY = 900, NX = 600 }; /* rows, columns */

static const double kRate = 0.2; /* alpha * dt / h^2: stable below 0.25 */

/* The heater under the plate, weakening with the simulated time t. */
static double heater(double t) { return 10.0 / (1.0 + 1000.0 * t); }

/* The initial temperature: a hot top edge, the rest cold. */
static double initial(int i) { return i == 0 ? 100.0 : 0.0; }

/* Ends the job on a flexmpi error, with flexmpi's explanation. */
static void check(int code) {
  if (code == XMPI_SUCCESS) return;
  fprintf(stderr, "heat: %s: %s\n", XMPI_Error_string(code), XMPI_Last_error_message());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* This process's rank, the number of processes and its block of rows. */
static void find_block(int* rank, int* nprocs, int* count, int* first) {
  MPI_Comm_rank(XMPI_COMM_WORLD, rank);
  MPI_Comm_size(XMPI_COMM_WORLD, nprocs);
  check(XMPI_Get_wsize(*rank, *nprocs, NY, count, first));
}

/* One step on the block (rows 1..count of u; rows 0 and count + 1 are ghost
 * rows): unew = u + rate * laplacian(u) + heat, the grid's border fixed. */
static void step_block(const double* u, double* unew, int count, int first, double dt, double t) {
  for (int r = 1; r <= count; ++r) {
    const int i = first + r - 1;
    const double* row = u + (size_t)r * NX;
    double* out = unew + (size_t)r * NX;
    if (i == 0 || i == NY - 1) {
      memcpy(out, row, NX * sizeof *out);
      continue;
    }
    out[0] = row[0];
    out[NX - 1] = row[NX - 1];
    for (int j = 1; j < NX - 1; ++j) {
      const double laplacian = row[j - NX] + row[j + NX] + row[j - 1] + row[j + 1] - 4.0 * row[j];
      out[j] = row[j] + kRate * laplacian + dt * heater(t);
    }
  }
}

/* Rank 0 prints the sum of every cell, added in row order. */
static void print_checksum(const double* u, int count, int first, int rank, int nprocs, int steps,
                           double t) {
  double* row_sums = calloc(NY, sizeof *row_sums);
  for (int r = 1; r <= count; ++r) {
    for (int j = 0; j < NX; ++j) row_sums[first + r - 1] += u[(size_t)r * NX + j];
  }
  /* One process holds each row: the other terms are zeros, the sum is exact. */
  MPI_Allreduce(MPI_IN_PLACE, row_sums, NY, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
  double sum = 0.0;
  for (int i = 0; i < NY; ++i) sum += row_sums[i];
  if (rank == 0)
    printf("heat: procs=%d steps=%d time=%.17g checksum=%.17g\n", nprocs, steps, t, sum);
  free(row_sums);
}

int main(int argc, char** argv) {
  int steps = 200;
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--steps") == 0 && a + 1 < argc) {
      steps = atoi(argv[++a]);
    } else if (strcmp(argv[a], "--quiet") != 0) {
      fprintf(stderr, "heat: unknown argument '%s' (expected --steps K, --quiet)\n", argv[a]);
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  int rank, nprocs, count, first;
  find_block(&rank, &nprocs, &count, &first);
  double* u = malloc((size_t)(count + 2) * NX * sizeof *u);
  double* unew = malloc((size_t)(count + 2) * NX * sizeof *unew);
  for (int r = 1; r <= count; ++r) {
    for (int j = 0; j < NX; ++j)
      u[(size_t)r * NX + j] = unew[(size_t)r * NX + j] = initial(first + r - 1);
  }
  const double dt = kRate / ((NX - 1.0) * (NX - 1.0)); /* alpha = 1, h = 1 / (NX - 1) */
  double t = 0.0;
  check(XMPI_Register_pair(&u, &unew, NY, NX, 1, MPI_DOUBLE, XMPI_DISTRIBUTED));
  check(XMPI_Register_record("time", &t, 1, MPI_DOUBLE));
  int step = 0;
  check(XMPI_Resume(&step)); /* 0; in a spawned process, its rows, t and the others' next step */
  find_block(&rank, &nprocs, &count, &first);

  for (; step < steps; ++step) {
    check(XMPI_Monitor_si_init());
    check(XMPI_Halo_exchange(&u));
    step_block(u, unew, count, first, dt, t);
    double* swap = u;
    u = unew;
    unew = swap;
    t += dt;
    check(XMPI_Eval_reconfig(rank, nprocs, step, steps, &count, &first, NULL, NULL, NULL));
    if (XMPI_Get_process_status() == XMPI_REMOVED) break;
    find_block(&rank, &nprocs, &count, &first);
  }

  if (XMPI_Get_process_status() != XMPI_REMOVED)
    print_checksum(u, count, first, rank, nprocs, steps, t);
  free(u);
  free(unew);
  MPI_Finalize();
  return 0;
}
