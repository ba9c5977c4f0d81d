/* An N x M grid (N != M) through the C API, as a stencil code holds it:
 * XMPI_Register_pair of two swapped buffers with one ghost row before and
 * after the block, in the scheme named by argv[1] (distributed, in_place,
 * replicated: no ghost rows). The blocks change four times
 * (XMPI_Redistribute_data, uneven blocks); after each change every element of
 * both buffers is checked, the ghost rows are written (AddressSanitizer: the
 * buffer holds them), and the global checksums are compared with the serial
 * ones. First, the registration that overflowed the row mover, the grid as
 * a square N x N dense matrix, must be refused with XMPI_ERR_ARG. */
#include <flexmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kRows = 61, kWidth = 37, kRounds = 4 };

static double value(int row, int column, int round, int which) {
  return 1000.0 * row + column + 0.25 * round + 1e6 * which;
}

/* Round r's block of `rank`: sizes in proportion to 1 + (p + r) % 3. */
static void block_of(int rank, int size, int round, int* count, int* displ) {
  int weights = 0, before = 0;
  for (int p = 0; p < size; ++p) weights += 1 + (p + round) % 3;
  for (int p = 0; p < rank; ++p) before += 1 + (p + round) % 3;
  const int mine = 1 + (rank + round) % 3;
  *displ = (int)((long long)kRows * before / weights);
  *count = (int)((long long)kRows * (before + mine) / weights) - *displ;
}

/* Element (row, column) of a buffer whose first held row is `first`. */
static double* at(double* buffer, int ghosts, int first, int row, int column) {
  return &buffer[(long long)(ghosts + row - first) * kWidth + column];
}

static int check(const char* what, int code) {
  if (code == XMPI_SUCCESS) return 0;
  fprintf(stderr, "%s: %s\n", what, XMPI_Last_error_message());
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, count = 0, displ = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  const char* name = argc > 1 ? argv[1] : "distributed";
  const XMPI_Scheme scheme = strcmp(name, "in_place") == 0     ? XMPI_DISTRIBUTED_IN_PLACE
                             : strcmp(name, "replicated") == 0 ? XMPI_REPLICATED
                                                               : XMPI_DISTRIBUTED;
  const int replicated = scheme == XMPI_REPLICATED, ghosts = replicated ? 0 : 1;
  if (check("get_wsize", XMPI_Get_wsize(rank, size, kRows, &count, &displ))) return 2;

  /* The reported mistake: an N x M grid registered as N x N. */
  double* square = malloc(sizeof *square * (size_t)(count > 0 ? count : 1) * kWidth);
  if (count > 0 &&
      XMPI_Register_dense(&square, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED) != XMPI_ERR_ARG) {
    fprintf(stderr, "rank %d: an N x M buffer registered as N x N was accepted\n", rank);
    return 1;
  }
  free(square);

  const int held = replicated ? kRows : count;
  const size_t elements = (size_t)(held + 2 * ghosts) * kWidth;
  double* u = malloc(sizeof *u * elements);
  double* unew = malloc(sizeof *unew * elements);
  if (check("register_pair",
            XMPI_Register_pair(&u, &unew, kRows, kWidth, ghosts, MPI_DOUBLE, scheme)))
    return 2;
  int wrong = 0;
  for (int round = 0; round < kRounds && !wrong; ++round) {
    const int old_base = replicated ? 0 : displ; /* the first row a buffer holds */
    for (int i = displ; i < displ + count; ++i) {
      for (int j = 0; j < kWidth; ++j) {
        *at(u, ghosts, old_base, i, j) = value(i, j, round, 0);
        *at(unew, ghosts, old_base, i, j) = value(i, j, round, 1);
      }
    }
    double* swap = u; /* a time step's swap */
    u = unew;
    unew = swap;
    int new_count = 0, new_displ = 0;
    block_of(rank, size, round, &new_count, &new_displ);
    if (check("redistribute", XMPI_Redistribute_data(count, displ, new_count, new_displ))) return 2;
    count = new_count;
    displ = new_displ;
    const int base = replicated ? 0 : displ;
    double sums[2] = {0.0, 0.0}, totals[2] = {0.0, 0.0};
    for (int i = displ; i < displ + count; ++i) {
      for (int j = 0; j < kWidth; ++j) {
        /* u points at what unew was filled with, and the other way round. */
        wrong += *at(u, ghosts, base, i, j) != value(i, j, round, 1);
        wrong += *at(unew, ghosts, base, i, j) != value(i, j, round, 0);
        sums[0] += *at(u, ghosts, base, i, j);
        sums[1] += *at(unew, ghosts, base, i, j);
      }
    }
    for (int k = 0; count > 0 && k < ghosts * kWidth; ++k) {
      u[k] = unew[k] = -1.0;
      u[(ghosts + count) * kWidth + k] = unew[(ghosts + count) * kWidth + k] = -1.0;
    }
    MPI_Allreduce(sums, totals, 2, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    double expected[2] = {0.0, 0.0};
    for (int i = 0; i < kRows; ++i) {
      for (int j = 0; j < kWidth; ++j) {
        expected[0] += value(i, j, round, 1);
        expected[1] += value(i, j, round, 0);
      }
    }
    /* Replicated too: each process sums the rows of its own block. */
    if (totals[0] != expected[0] || totals[1] != expected[1]) {
      fprintf(stderr, "rank %d round %d: checksums %.17g %.17g, expected %.17g %.17g\n", rank,
              round, totals[0], totals[1], expected[0], expected[1]);
      wrong += 1;
    }
  }
  if (wrong) fprintf(stderr, "rank %d (%s): %d wrong elements\n", rank, name, wrong);
  if (check("unregister", XMPI_Unregister(&u))) return 2;
  free(u);
  free(unew);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
