/*
 * halo_stencil: the worked port of docs/guide.md, a 2-D heat-diffusion
 * stencil with a neighbour (halo) exchange, made balanced and malleable with
 * flexmpi.
 *
 * The n x n grid u is split into blocks of whole rows (XMPI_Register_dense:
 * flexmpi moves the rows and updates the pointer u). Each iteration every
 * process swaps its first and last rows with the processes that own the rows
 * just above and below its block (the halo exchange), then applies the
 * 5-point Jacobi update to its rows. When flexmpi changes the blocks
 * (balancing, or processes spawned or removed) the neighbours change too:
 * the program rebuilds its exchange only then, when XMPI_Get_blocks_changed
 * says so. The pattern to copy is in rebuild_exchange() and the end of the loop.
 *
 * The result does not depend on the blocks: every cell is computed from the
 * same values in the same order, so the checksum of u (an order-free sum of
 * the bits of every cell) is the same, bit for bit, on 1 process, balanced,
 * growing and shrinking, or restarted from a checkpoint on another number
 * of processes (FLEXMPI_CHECKPOINT, FLEXMPI_RESTART: XMPI_Resume).
 *
 *   mpiexec -n 2 halo_stencil [--size N] [--iterations K] [--quiet]
 */
#include <flexmpi.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "halo_stencil"

/* Stops every process on a flexmpi error: a collective call failed. */
static void check(int code, const char* call) {
  if (code == XMPI_SUCCESS) return;
  fprintf(stderr, PROGRAM ": %s failed: %s (%s)\n", call, XMPI_Error_string(code),
          XMPI_Last_error_message());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void* allocate(size_t bytes) {
  void* memory = malloc(bytes > 0 ? bytes : 1);
  if (memory == NULL) {
    fprintf(stderr, PROGRAM ": out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return memory;
}

/* The initial temperature: a hot square in a cold plate, hot top edge. */
static double initial(int n, int i, int j) {
  if (i == 0) return 100.0;
  if (i > n / 4 && i < n / 2 && j > n / 4 && j < n / 2) return 50.0;
  return 0.0;
}

/* This process's view of the decomposition and its halo exchange. */
typedef struct {
  int rank, nprocs;
  int count, first_row; /* my rows: first_row .. first_row + count - 1 */
  int above, below;   /* ranks owning rows first_row - 1 and first_row + count, or MPI_PROC_NULL */
  double* halo_above; /* row first_row - 1, received */
  double* halo_below; /* row first_row + count, received */
  double* next;       /* the updated rows */
  int rebuilds;       /* how often the exchange was rebuilt */
} Exchange;

/* The rank whose block holds `row`, or MPI_PROC_NULL outside the grid. */
static int owner(int row, int nprocs, const int* counts, const int* displs) {
  for (int p = 0; p < nprocs; ++p) {
    if (counts[p] > 0 && row >= displs[p] && row < displs[p] + counts[p]) return p;
  }
  return MPI_PROC_NULL;
}

/* Reads rank, size and every block from flexmpi and finds the neighbours.
 * After a rebalance or a reconfiguration any block may have changed, not only
 * this process's: the neighbours come from the whole decomposition. */
static void rebuild_exchange(Exchange* ex, int n) {
  MPI_Comm_rank(XMPI_COMM_WORLD, &ex->rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &ex->nprocs);
  int* counts = allocate((size_t)ex->nprocs * sizeof *counts);
  int* displs = allocate((size_t)ex->nprocs * sizeof *displs);
  check(XMPI_Get_decomposition(ex->nprocs, n, counts, displs), "XMPI_Get_decomposition");
  ex->count = counts[ex->rank];
  ex->first_row = displs[ex->rank];
  ex->above = ex->count > 0 ? owner(ex->first_row - 1, ex->nprocs, counts, displs) : MPI_PROC_NULL;
  ex->below =
      ex->count > 0 ? owner(ex->first_row + ex->count, ex->nprocs, counts, displs) : MPI_PROC_NULL;
  free(counts);
  free(displs);
  free(ex->next);
  ex->next = allocate((size_t)ex->count * (size_t)n * sizeof *ex->next);
  ex->rebuilds += 1;
}

/* Sends my edge rows to the neighbours and receives theirs. */
static void exchange_halos(const Exchange* ex, int n, const double* u) {
  MPI_Request requests[4];
  const double* top = u;
  const double* bottom = u + (size_t)(ex->count > 0 ? ex->count - 1 : 0) * (size_t)n;
  MPI_Irecv(ex->halo_above, n, MPI_DOUBLE, ex->above, 1, XMPI_COMM_WORLD, &requests[0]);
  MPI_Irecv(ex->halo_below, n, MPI_DOUBLE, ex->below, 0, XMPI_COMM_WORLD, &requests[1]);
  MPI_Isend(top, n, MPI_DOUBLE, ex->above, 0, XMPI_COMM_WORLD, &requests[2]);
  MPI_Isend(bottom, n, MPI_DOUBLE, ex->below, 1, XMPI_COMM_WORLD, &requests[3]);
  MPI_Status statuses[4]; /* not MPI_STATUSES_IGNORE: GCC 12 misreads MPICH's */
  MPI_Waitall(4, requests, statuses);
}

/* One Jacobi sweep over my rows; the grid's border stays fixed. */
static void sweep(const Exchange* ex, int n, double* u) {
  for (int r = 0; r < ex->count; ++r) {
    const int i = ex->first_row + r;
    const double* row = u + (size_t)r * (size_t)n;
    const double* up = r > 0 ? row - n : ex->halo_above;
    const double* down = r + 1 < ex->count ? row + n : ex->halo_below;
    double* out = ex->next + (size_t)r * (size_t)n;
    if (i == 0 || i == n - 1) {
      memcpy(out, row, (size_t)n * sizeof *out);
      continue;
    }
    out[0] = row[0];
    out[n - 1] = row[n - 1];
    for (int j = 1; j < n - 1; ++j) out[j] = 0.25 * (up[j] + down[j] + row[j - 1] + row[j + 1]);
  }
  memcpy(u, ex->next, (size_t)ex->count * (size_t)n * sizeof *u);
}

/* An order-free checksum: the sum, modulo 2^64, of every cell's bits mixed
 * with its index, so that the blocks do not change it. */
static uint64_t checksum(const Exchange* ex, int n, const double* u) {
  uint64_t sum = 0;
  for (int r = 0; r < ex->count; ++r) {
    for (int j = 0; j < n; ++j) {
      uint64_t bits = 0;
      memcpy(&bits, &u[(size_t)r * (size_t)n + (size_t)j], sizeof bits);
      const uint64_t index = (uint64_t)(ex->first_row + r) * (uint64_t)n + (uint64_t)j;
      sum += (bits ^ (index * 0x9E3779B97F4A7C15ULL)) * 0xBF58476D1CE4E5B9ULL;
    }
  }
  return sum;
}

int main(int argc, char** argv) {
  int n = 256, iterations = 200, quiet = 0;
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--size") == 0 && a + 1 < argc) {
      n = atoi(argv[++a]);
    } else if (strcmp(argv[a], "--iterations") == 0 && a + 1 < argc) {
      iterations = atoi(argv[++a]);
    } else if (strcmp(argv[a], "--quiet") == 0) {
      quiet = 1;
    } else {
      fprintf(stderr, PROGRAM ": unknown argument '%s'\n", argv[a]);
      return 2;
    }
  }
  if (n < 3 || iterations < 1) {
    fprintf(stderr, PROGRAM ": expected --size >= 3 and --iterations >= 1\n");
    return 2;
  }

  MPI_Init(&argc, &argv);
  const int newcomer = XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED;
  Exchange ex = {0};
  ex.halo_above = allocate((size_t)n * sizeof *ex.halo_above);
  ex.halo_below = allocate((size_t)n * sizeof *ex.halo_below);
  rebuild_exchange(&ex, n);

  /* The grid's rows follow the decomposition: flexmpi reallocates u. */
  double* u = allocate((size_t)ex.count * (size_t)n * sizeof *u);
  for (int r = 0; r < ex.count; ++r) {
    for (int j = 0; j < n; ++j)
      u[(size_t)r * (size_t)n + (size_t)j] = initial(n, ex.first_row + r, j);
  }
  check(XMPI_Register_dense(&u, n, MPI_DOUBLE, XMPI_DISTRIBUTED), "XMPI_Register_dense(u)");

  /* Where the loop starts: 0; in a process spawned by a malleability policy,
   * where the others are, with its rows taken from them (XMPI_Get_data); in a
   * job restarted from a checkpoint (FLEXMPI_RESTART), after the checkpointed
   * iteration, with u read back. u is all the loop carries: nothing else to
   * save (XMPI_Register_record). */
  int first_iteration = 0;
  check(XMPI_Resume(&first_iteration), "XMPI_Resume");
  if (newcomer || first_iteration > 0) rebuild_exchange(&ex, n); /* the block u was given */

  int removed = 0;
  for (int k = first_iteration; k < iterations; ++k) {
    check(XMPI_Monitor_iter_begin(NULL), "XMPI_Monitor_iter_begin");
    exchange_halos(&ex, n, u);
    sweep(&ex, n, u);
    check(XMPI_Monitor_iter_end(NULL), "XMPI_Monitor_iter_end");
    /* The adaptation point: flexmpi may move rows (u follows) or change the
     * processes. Rebuild the exchange only when some block changed. */
    check(XMPI_Eval_reconfig(ex.rank, ex.nprocs, k, iterations, &ex.count, &ex.first_row, NULL,
                             NULL, NULL),
          "XMPI_Eval_reconfig");
    if (XMPI_Get_process_status() == XMPI_REMOVED) {
      removed = 1;
      break;
    }
    int changed = 0;
    check(XMPI_Get_blocks_changed(&changed), "XMPI_Get_blocks_changed");
    if (changed) rebuild_exchange(&ex, n);
  }

  if (!removed) {
    const uint64_t mine = checksum(&ex, n, u);
    uint64_t total = 0;
    MPI_Reduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, 0, XMPI_COMM_WORLD);
    if (ex.rank == 0) {
      printf(PROGRAM ": size=%d iterations=%d procs=%d checksum=%016llx\n", n, iterations,
             ex.nprocs, (unsigned long long)total);
    }
    if (!quiet) {
      printf(PROGRAM ": rank %d holds rows %d..%d, exchange rebuilt %d times\n", ex.rank,
             ex.first_row, ex.first_row + ex.count - 1, ex.rebuilds);
    }
  }
  free(ex.halo_above);
  free(ex.halo_below);
  free(ex.next);
  free(u);
  MPI_Finalize();
  return 0;
}
