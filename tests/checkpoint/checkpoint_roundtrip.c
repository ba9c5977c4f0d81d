/*
 * checkpoint_roundtrip - every kind of registered structure through a
 * checkpoint and a restart on another number of processes, element by element.
 *
 *   checkpoint_roundtrip write ROWS ITERATION   (FLEXMPI_CHECKPOINT set)
 *       fills every structure from a formula of its global indices, moves the
 *       rows to uneven blocks (rank r gets a share r + 1), places the in-place
 *       sparse matrix, and writes a checkpoint resumed at ITERATION;
 *   checkpoint_roundtrip read ROWS ITERATION    (FLEXMPI_RESTART set)
 *       registers the same structures holding garbage (the sparse ones with
 *       no local nonzeros), calls XMPI_Resume and checks the iteration and
 *       every element it holds (every row of a replicated structure), then
 *       moves the rows to the block partition and checks again;
 *   checkpoint_roundtrip write-forever ROWS ITERATION
 *       as write, then writes checkpoints at ITERATION + 1, + 2, ... until
 *       it is killed (a kill in the middle of writing one);
 *   checkpoint_roundtrip refuse ROWS ITERATION  (FLEXMPI_RESTART set)
 *       as read, but XMPI_Resume must fail (the test gives other ROWS or other
 *       structures) and leave every buffer as it was; prints the message.
 * Exit status 0 when every process saw what it should, 1 otherwise.
 */
#include <flexmpi.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kHistory = 16 };

static int rows_of(int row) { return row % 5 + 1; } /* nonzeros of a sparse row */
static int column_of(int row, int k, int n) { return (row + 7 * k) % n; }
static double sparse_value(int row, int k) { return row * 1000.0 + k + 0.25; }
static double dense_value(long i, long j, long n) { return (double)(i * n + j) * 0.5; }

typedef struct {
  double* vector_distributed;
  int* vector_replicated;
  double* vector_in_place;
  double* triples; /* a contiguous type of 3 doubles per row: stored as opaque bytes */
  float* dense_distributed;
  double* dense_replicated;
  double* dense_in_place;
  int *csr_ia, *csr_ja;
  double* csr_a;
  int *rep_ia, *rep_ja;
  double* rep_a;
  int *inp_ia, *inp_ja;
  double* inp_a;
  double history[kHistory];
  int step;
} State;

static int failures = 0;
static void expect(int ok, const char* what, long where) {
  if (!ok && failures++ < 10)
    fprintf(stderr, "checkpoint_roundtrip: %s wrong at %ld\n", what, where);
}

static void check(int code, const char* call) {
  if (code == XMPI_SUCCESS) return;
  fprintf(stderr, "checkpoint_roundtrip: %s: %s\n", call, XMPI_Last_error_message());
  MPI_Abort(MPI_COMM_WORLD, 2);
}

static long global_nonzeros(int n) {
  long nnz = 0;
  for (int i = 0; i < n; ++i) nnz += rows_of(i);
  return nnz;
}

/* A CSR block of rows [first, first + count), correct (fill) or empty. */
static void make_csr(int n, int first, int count, int fill, int** ia, int** ja, double** a) {
  long nnz = 0;
  for (int r = 0; r < count && fill; ++r) nnz += rows_of(first + r);
  *ia = malloc((size_t)(count + 1) * sizeof **ia);
  *ja = malloc((size_t)(nnz + 1) * sizeof **ja);
  *a = malloc((size_t)(nnz + 1) * sizeof **a);
  (*ia)[0] = 0;
  for (int r = 0; r < count; ++r) {
    const int row = first + r, k0 = (*ia)[r];
    (*ia)[r + 1] = k0 + (fill ? rows_of(row) : 0);
    for (int k = 0; fill && k < rows_of(row); ++k) {
      (*ja)[k0 + k] = column_of(row, k, n);
      (*a)[k0 + k] = sparse_value(row, k);
    }
  }
}

static void allocate(State* s, int n, int first, int count, int fill) {
  const double garbage = -7.0;
  s->vector_distributed = malloc((size_t)(count + 1) * sizeof(double));
  s->vector_in_place = malloc((size_t)(count + 1) * sizeof(double));
  s->triples = malloc((size_t)(count + 1) * 3 * sizeof(double));
  s->dense_distributed = malloc(((size_t)count * n + 1) * sizeof(float));
  s->dense_in_place = malloc(((size_t)count * n + 1) * sizeof(double));
  s->vector_replicated = malloc((size_t)n * sizeof(int));
  s->dense_replicated = malloc((size_t)n * n * sizeof(double));
  for (int r = 0; r < count; ++r) {
    const long i = first + r;
    s->vector_distributed[r] = fill ? i * 0.5 : garbage;
    s->vector_in_place[r] = fill ? i * 0.25 + 3.0 : garbage;
    for (int k = 0; k < 3; ++k) s->triples[3 * r + k] = fill ? i * 10.0 + k : garbage;
    for (long j = 0; j < n; ++j) {
      s->dense_distributed[(size_t)r * n + j] = fill ? (float)(i + j) : (float)garbage;
      s->dense_in_place[(size_t)r * n + j] = fill ? dense_value(i, j, n) + 1.0 : garbage;
    }
  }
  for (long i = 0; i < n; ++i) {
    s->vector_replicated[i] = fill ? (int)(3 * i + 1) : -1;
    for (long j = 0; j < n; ++j)
      s->dense_replicated[i * n + j] = fill ? dense_value(i, j, n) : garbage;
  }
  make_csr(n, first, count, fill, &s->csr_ia, &s->csr_ja, &s->csr_a);
  make_csr(n, first, count, fill, &s->inp_ia, &s->inp_ja, &s->inp_a);
  /* Replicated: the whole pattern on every process; garbage values when not filled. */
  make_csr(n, 0, n, 1, &s->rep_ia, &s->rep_ja, &s->rep_a);
  if (!fill) {
    for (long k = 0; k < s->rep_ia[n]; ++k) s->rep_a[k] = garbage;
  }
  for (int h = 0; h < kHistory; ++h) s->history[h] = fill ? h * 1.5 : garbage;
  s->step = fill ? 42 : -1;
}

static void register_all(State* s, int n, MPI_Datatype triple) {
  const long long nnz = global_nonzeros(n);
  check(XMPI_Register_vector(&s->vector_distributed, n, MPI_DOUBLE, XMPI_DISTRIBUTED), "vector");
  check(XMPI_Register_vector(&s->vector_replicated, n, MPI_INT, XMPI_REPLICATED), "vector repl");
  check(XMPI_Register_vector(&s->vector_in_place, n, MPI_DOUBLE, XMPI_DISTRIBUTED_IN_PLACE),
        "vector in place");
  check(XMPI_Register_vector(&s->triples, n, triple, XMPI_DISTRIBUTED), "triples");
  check(XMPI_Register_dense(&s->dense_distributed, n, MPI_FLOAT, XMPI_DISTRIBUTED), "dense");
  check(XMPI_Register_dense(&s->dense_replicated, n, MPI_DOUBLE, XMPI_REPLICATED), "dense repl");
  check(XMPI_Register_dense(&s->dense_in_place, n, MPI_DOUBLE, XMPI_DISTRIBUTED_IN_PLACE),
        "dense in place");
  check(
      XMPI_Register_sparse(&s->csr_ia, &s->csr_ja, &s->csr_a, n, nnz, MPI_DOUBLE, XMPI_DISTRIBUTED),
      "csr");
  check(
      XMPI_Register_sparse(&s->rep_ia, &s->rep_ja, &s->rep_a, n, nnz, MPI_DOUBLE, XMPI_REPLICATED),
      "csr repl");
  check(XMPI_Register_sparse(&s->inp_ia, &s->inp_ja, &s->inp_a, n, nnz, MPI_DOUBLE,
                             XMPI_DISTRIBUTED_IN_PLACE),
        "csr in place");
  check(XMPI_Register_record("history", s->history, kHistory, MPI_DOUBLE), "record history");
  check(XMPI_Register_record("step", &s->step, 1, MPI_INT), "record step");
}

static void verify_csr(const int* ia, const int* ja, const double* a, int first, int count, int n,
                       const char* what) {
  expect(ia[0] == 0, what, first);
  for (int r = 0; r < count; ++r) {
    const int row = first + r;
    expect(ia[r + 1] - ia[r] == rows_of(row), what, row);
    for (int k = 0; k < rows_of(row) && ia[r + 1] - ia[r] == rows_of(row); ++k) {
      expect(ja[ia[r] + k] == column_of(row, k, n), what, row);
      expect(a[ia[r] + k] == sparse_value(row, k), what, row);
    }
  }
}

static void verify(const State* s, int n, int first, int count) {
  for (int r = 0; r < count; ++r) {
    const long i = first + r;
    expect(s->vector_distributed[r] == i * 0.5, "vector", i);
    expect(s->vector_in_place[r] == i * 0.25 + 3.0, "vector in place", i);
    for (int k = 0; k < 3; ++k) expect(s->triples[3 * r + k] == i * 10.0 + k, "triples", i);
    for (long j = 0; j < n; ++j) {
      expect(s->dense_distributed[(size_t)r * n + j] == (float)(i + j), "dense", i);
      expect(s->dense_in_place[(size_t)r * n + j] == dense_value(i, j, n) + 1.0, "dense in place",
             i);
    }
  }
  for (long i = 0; i < n; ++i) {
    expect(s->vector_replicated[i] == 3 * i + 1, "vector repl", i);
    for (long j = 0; j < n; ++j)
      expect(s->dense_replicated[i * n + j] == dense_value(i, j, n), "dense repl", i);
  }
  verify_csr(s->csr_ia, s->csr_ja, s->csr_a, first, count, n, "csr");
  verify_csr(s->inp_ia, s->inp_ja, s->inp_a, first, count, n, "csr in place");
  verify_csr(s->rep_ia, s->rep_ja, s->rep_a, 0, n, n, "csr repl");
  for (int h = 0; h < kHistory; ++h) expect(s->history[h] == h * 1.5, "record history", h);
  expect(s->step == 42, "record step", 0);
}

/* Uneven blocks: rank r gets a share r + 1 of the rows. */
static void uneven_block(int rank, int nprocs, int n, int* count, int* displ) {
  const long total = (long)nprocs * (nprocs + 1) / 2;
  long before = 0;
  for (int p = 0; p < rank; ++p) before += p + 1;
  *displ = (int)(n * before / total);
  *count = (int)(n * (before + rank + 1) / total) - *displ;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: checkpoint_roundtrip write|write-forever|read|refuse ROWS ITERATION\n");
    return 2;
  }
  const char* mode = argv[1];
  const int n = atoi(argv[2]), iteration = atoi(argv[3]);
  MPI_Init(&argc, &argv);
  int rank, nprocs, count, displ;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  MPI_Datatype triple;
  MPI_Type_contiguous(3, MPI_DOUBLE, &triple);
  MPI_Type_commit(&triple);
  check(XMPI_Get_wsize(rank, nprocs, n, &count, &displ), "XMPI_Get_wsize");
  State s;
  const int forever = strcmp(mode, "write-forever") == 0;
  const int writing = strcmp(mode, "write") == 0 || forever;
  allocate(&s, n, displ, count, writing);
  register_all(&s, n, triple);
  if (writing) {
    int new_count, new_displ;
    uneven_block(rank, nprocs, n, &new_count, &new_displ);
    check(XMPI_Redistribute_data(count, displ, new_count, new_displ), "XMPI_Redistribute_data");
    check(XMPI_Checkpoint(iteration), "XMPI_Checkpoint");
    for (int next = iteration + 1; forever; ++next) check(XMPI_Checkpoint(next), "XMPI_Checkpoint");
  } else if (strcmp(mode, "read") == 0) {
    int resumed = -1;
    check(XMPI_Resume(&resumed), "XMPI_Resume");
    expect(resumed == iteration, "iteration", resumed);
    check(XMPI_Get_wsize(rank, nprocs, n, &count, &displ), "XMPI_Get_wsize");
    verify(&s, n, displ, count);
    /* The restored structures move as any others. */
    const int old_count = count, old_displ = displ;
    count = n / nprocs + (rank < n % nprocs);
    displ = rank * (n / nprocs) + (rank < n % nprocs ? rank : n % nprocs);
    check(XMPI_Redistribute_data(old_count, old_displ, count, displ), "XMPI_Redistribute_data");
    verify(&s, n, displ, count);
  } else {
    int resumed = -1;
    const int code = XMPI_Resume(&resumed);
    expect(code != XMPI_SUCCESS, "XMPI_Resume succeeded", code);
    if (rank == 0) printf("refused: %s (%s)\n", XMPI_Error_string(code), XMPI_Last_error_message());
    /* Nothing touched: still the garbage it registered. */
    for (int r = 0; r < count; ++r) expect(s.vector_distributed[r] == -7.0, "untouched vector", r);
    for (int r = 0; r <= count; ++r) expect(s.csr_ia[r] == 0, "untouched csr", r);
    expect(s.step == -1, "untouched record", 0);
  }
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
  if (rank == 0)
    printf("%s on %d processes: %s\n", mode, nprocs, all_failures == 0 ? "ok" : "WRONG");
  MPI_Type_free(&triple);
  MPI_Finalize(); /* registered structures are freed by flexmpi or stay the program's */
  return all_failures == 0 ? 0 : 1;
}
