/*
 * A program that manages its own processes, as some MPI programs do: it
 * spawns two copies of itself with MPI_Comm_spawn, talks to them over the
 * intercommunicator (MPI_ROOT / MPI_PROC_NULL roots), then opens a port and
 * has them MPI_Comm_connect to it. Run linked with flexmpi or with it
 * preloaded: flexmpi must leave these processes alone (they are not its
 * spawns) and its wrappers must pass every call through. Prints "own spawn ok"
 * on rank 0 of the parents.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int fail(const char* what) {
  fprintf(stderr, "own_spawn: %s\n", what);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

static int child(MPI_Comm parent) {
  int rank = 0, value = 0, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Bcast(&value, 1, MPI_INT, 0, parent); /* root: the parents' rank 0 */
  if (value != 42) return fail("child: wrong broadcast value");
  int mine = rank + 1;
  MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, 0, parent); /* to the parents' rank 0 */
  char port[MPI_MAX_PORT_NAME] = {0};
  MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, parent);
  MPI_Comm server;
  MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &server);
  int token = 0;
  if (rank == 0) MPI_Recv(&token, 1, MPI_INT, 0, 5, server, MPI_STATUS_IGNORE);
  MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (token != 7) return fail("child: wrong token over the connected communicator");
  MPI_Comm_disconnect(&server);
  MPI_Comm_disconnect(&parent);
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) {
    const int status = child(parent);
    MPI_Finalize();
    return status;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm children;
  int errors[2];
  MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children, errors);
  int value = 42, sum = 0, ignored = 0;
  MPI_Bcast(&value, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, children);
  MPI_Reduce(&ignored, &sum, 1, MPI_INT, MPI_SUM, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, children);
  if (rank == 0 && sum != 3) return fail("parent: wrong reduction from the children");
  char port[MPI_MAX_PORT_NAME] = {0};
  if (rank == 0) MPI_Open_port(MPI_INFO_NULL, port);
  MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, children);
  MPI_Comm client;
  MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &client);
  int token = 7;
  if (rank == 0) MPI_Send(&token, 1, MPI_INT, 0, 5, client);
  MPI_Comm_disconnect(&client);
  if (rank == 0) MPI_Close_port(port);
  MPI_Comm_disconnect(&children);
  if (rank == 0) printf("own spawn ok\n");
  MPI_Finalize();
  return 0;
}
