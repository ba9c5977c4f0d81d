/* An unmodified MPI program that calls one or two functions of each family
 * flexmpi wraps beyond plain point-to-point and collectives: matched probe
 * and receive, persistent requests, a neighbourhood collective, one-sided
 * communication and file I/O. Run on 2 processes with libflexmpi preloaded;
 * tests/profiling/CMakeLists.txt checks the profile's rows against what it does.
 * Usage: wrapped_families <directory for the file it writes> */
#include <mpi.h>
#include <stdio.h>

static int failures = 0;

static void expect(int condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "wrapped_families: %s\n", what);
    ++failures;
  }
}

/* Rank 0 sends 5 ints; rank 1 takes them with MPI_Mprobe and MPI_Mrecv. */
static void matched_probe(int rank) {
  int values[5] = {1, 2, 3, 4, 5};
  if (rank == 0) {
    MPI_Send(values, 5, MPI_INT, 1, 11, MPI_COMM_WORLD);
    return;
  }
  MPI_Message message;
  MPI_Status status;
  int received[5] = {0};
  MPI_Mprobe(0, 11, MPI_COMM_WORLD, &message, &status);
  MPI_Mrecv(received, 5, MPI_INT, &message, MPI_STATUS_IGNORE);
  expect(received[4] == 5, "MPI_Mrecv received the wrong values");
}

/* Rank 0 sends 4 doubles three times through one persistent request. */
static void persistent(int rank) {
  double values[4] = {0};
  MPI_Request request;
  if (rank == 0) {
    MPI_Send_init(values, 4, MPI_DOUBLE, 1, 12, MPI_COMM_WORLD, &request);
  } else {
    MPI_Recv_init(values, 4, MPI_DOUBLE, 0, 12, MPI_COMM_WORLD, &request);
  }
  for (int round = 1; round <= 3; ++round) {
    if (rank == 0) values[3] = round;
    MPI_Start(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect(values[3] == round, "the persistent receive got the wrong value");
  }
  MPI_Request_free(&request);
}

/* A periodic ring of two: each process has two neighbours, both the other. */
static void neighbourhood(int rank) {
  const int dims[1] = {2}, periods[1] = {1};
  MPI_Comm ring;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  int received[2] = {-1, -1};
  MPI_Neighbor_allgather(&rank, 1, MPI_INT, received, 1, MPI_INT, ring);
  expect(received[0] == 1 - rank && received[1] == 1 - rank, "MPI_Neighbor_allgather");
  MPI_Comm_free(&ring);
}

/* Rank 0 puts 2 ints into rank 1's window and gets 3 back. */
static void one_sided(int rank) {
  int exposed[4] = {7, 7, 7, 7}, put[2] = {3, 4}, got[3] = {0};
  MPI_Win window;
  MPI_Win_create(exposed, sizeof exposed, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &window);
  MPI_Win_fence(0, window);
  if (rank == 0) MPI_Put(put, 2, MPI_INT, 1, 0, 2, MPI_INT, window);
  MPI_Win_fence(0, window);
  if (rank == 0) MPI_Get(got, 3, MPI_INT, 1, 1, 3, MPI_INT, window);
  MPI_Win_fence(0, window);
  if (rank == 0) expect(got[0] == 4 && got[1] == 7, "MPI_Get got the wrong values");
  MPI_Win_free(&window);
}

/* Each process writes 10 ints at its own offset, then reads its block back. */
static void file_io(int rank, const char* directory) {
  char path[4096];
  snprintf(path, sizeof path, "%s/wrapped_families.bin", directory);
  int values[10], read_back[10] = {0};
  for (int i = 0; i < 10; ++i) values[i] = 100 * rank + i;
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file);
  const MPI_Offset offset = (MPI_Offset)rank * (MPI_Offset)sizeof values;
  MPI_File_write_at(file, offset, values, 10, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_read_at(file, offset, read_back, 10, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_close(&file);
  expect(read_back[9] == 100 * rank + 9, "MPI_File_read_at read the wrong values");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2 || argc != 2) {
    fprintf(stderr, "usage: mpiexec -n 2 wrapped_families <directory>\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  matched_probe(rank);
  persistent(rank);
  neighbourhood(rank);
  one_sided(rank);
  file_io(rank, argv[1]);
  if (failures == 0) printf("rank %d: results correct\n", rank);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
