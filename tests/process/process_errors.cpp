// Every error of dynamic process management (thesis 4.3, 4.4) returns a code
// and a message on every process, changes nothing, and the application goes
// on: the same XMPI_COMM_WORLD size, its data intact. Run on 2 processes;
// before MPI_Init each writes a hostfile naming this machine (class "local",
// 4 processing elements: two free) and another host (class "far") where no
// process ever runs. A failure of MPI_Comm_spawn itself is injected (a real
// one, e.g. on a host mpiexec does not know, breaks Open MPI 4.1's runtime:
// see process_manager.hpp).
//   a  XMPI_Remove(1) with nothing spawned              XMPI_ERR_ARG
//   b  removing a rank of the initial set (C++)         invalid_argument
//   c  XMPI_Spawn of a program that does not exist      XMPI_ERR_ARG
//   d  an unknown node class                            XMPI_ERR_ARG
//   e  3 processes on "local" (2 free PEs)              XMPI_ERR_ARG
//   f  MPI_Comm_spawn fails                             XMPI_ERR_MPI
//   g  2 processes, the second spawn fails: the first   XMPI_ERR_MPI
//      one is undone (it finalizes inside its MPI_Init)
//   h  rank 0 spawns while rank 1 removes               XMPI_ERR_STATE
//   i  XMPI_Get_data in a process of the initial set    XMPI_ERR_STATE
//   j  2 processes on "local": works; XMPI_Redistribute_data before
//      XMPI_Send_data                                   XMPI_ERR_STATE
//   k  another process on "local" (now full)            XMPI_ERR_ARG
//   l  XMPI_Remove(3) with 2 spawned                    XMPI_ERR_ARG
//   m  XMPI_Remove(1) on "far" (no spawned process)     XMPI_ERR_ARG
//   n  XMPI_Remove(2) on "local"                        success
//   o  on the removed processes, every call but the
//      status queries                                   XMPI_ERR_STATE
//   p  XMPI_Spawn("") (an empty command)                XMPI_ERR_ARG
#include <mpi.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "flexmpi.h"
#include "flexmpi/flexmpi.hpp"
#include "process/process_manager.hpp"
#include "process_check.h"

namespace {

constexpr int kRows = 20;
double* x = nullptr;  // registered, distributed: x[i] = 7 * global row

int world_size() {
  int size = 0;
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  return size;
}

// The application is intact: `expected` processes, rows tiled, values right.
void check_intact(const char* step, int expected) {
  int rank = 0, size = world_size(), count = 0, displ = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  CHECK(size == expected, "%s: %d processes, expected %d", step, size, expected);
  CHECK_CODE(XMPI_Get_wsize(rank, size, kRows, &count, &displ), XMPI_SUCCESS);
  int bad = 0;
  for (int i = 0; i < count; ++i) bad += x[i] != 7.0 * (displ + i);
  int total = count;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
  CHECK(total == kRows && bad == 0, "%s: %d rows held, %d wrong", step, total, bad);
}

// `call` returned `code` and its message contains `text`.
void expect_error(const char* step, int result, int code, const char* text) {
  CHECK(result == code, "%s: returned %d (%s), expected %d", step, result,
        XMPI_Last_error_message(), code);
  CHECK(std::strstr(XMPI_Last_error_message(), text) != nullptr, "%s: message '%s' lacks '%s'",
        step, XMPI_Last_error_message(), text);
}

// The steps from j on, for the initial set and for the process spawned in j.
void from_k_on(char* local[], char* far[]) {
  // k: "local" is full now (4 PEs, 4 processes).
  expect_error("k", XMPI_Spawn(nullptr, nullptr, 1, MPI_INFO_NULL, local), XMPI_ERR_ARG,
               "no free processing element");
  check_intact("k", 4);
  expect_error("l", XMPI_Remove(3, nullptr), XMPI_ERR_ARG, "only 2 were spawned");
  check_intact("l", 4);
  expect_error("m", XMPI_Remove(1, far), XMPI_ERR_ARG, "no spawned process");
  check_intact("m", 4);
  CHECK_CODE(XMPI_Remove(2, local), XMPI_SUCCESS);  // n
}

// o: a removed process may only ask its status (and its totals, and whether
// its blocks changed) and call MPI_Finalize; every other call is refused.
void removed_calls_refused() {
  const char* removed = "was removed (XMPI_REMOVED)";
  int count = 0, displ = 0, counts[1] = {}, displs[1] = {}, it = 0, changed = 0;
  double work = 1.0, record = 0.0;
  auto* spare = static_cast<double*>(std::malloc(sizeof(double) * kRows));
  long long iterations = 0;
  expect_error("o", XMPI_Monitor_iter_begin(nullptr), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Monitor_iter_end(nullptr), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Monitor_si_init(), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Set_work(work), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Get_wsize(0, 1, kRows, &count, &displ), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Get_decomposition(1, kRows, counts, displs), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Register_vector(&spare, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED),
               XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Unregister(&x), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Redistribute_data(0, 0, 0, 0), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Eval_lbalance(0, 1, 0, 10, &count, &displ, nullptr), XMPI_ERR_STATE,
               removed);
  expect_error("o", XMPI_Eval_reconfig(0, 1, 0, 10, &count, &displ, nullptr, nullptr, nullptr),
               XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Spawn(nullptr, nullptr, 1, MPI_INFO_NULL, nullptr), XMPI_ERR_STATE,
               removed);
  expect_error("o", XMPI_Remove(1, nullptr), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Get_data(&it), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Send_data(0, &count, &displ), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Resume(&it), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Checkpoint(0), XMPI_ERR_STATE, removed);
  expect_error("o", XMPI_Register_record("r", &record, 1, MPI_DOUBLE), XMPI_ERR_STATE, removed);
  CHECK_CODE(XMPI_Get_monitor_totals(&iterations, nullptr, nullptr, nullptr, nullptr),
             XMPI_SUCCESS);
  CHECK_CODE(XMPI_Get_blocks_changed(&changed), XMPI_SUCCESS);
  std::free(spare);
}

}  // namespace

int main(int argc, char** argv) {
  // The hostfile names this host as mpiexec knows it (its hostname).
  // Every process of the run, spawned ones too, writes the same file (atomically)
  // under a name of the run (Open MPI's session directory); a spawned process
  // then gets its parents' FLEXMPI_* settings, this file included.
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string hostfile;
  if (std::getenv("FLEXMPI_HOSTFILE") == nullptr) {
    const char* session = std::getenv("OMPI_MCA_orte_jobfam_session_dir");
    const std::string run = session != nullptr ? std::to_string(std::hash<std::string>{}(session))
                                               : std::to_string(getpid());
    hostfile = "/tmp/flexmpi_process_errors." + run + ".hosts";
    const std::string temporary = hostfile + "." + std::to_string(getpid());
    std::ofstream(temporary) << host << ":local:4\nghost:far:4\n";
    std::rename(temporary.c_str(), hostfile.c_str());
    setenv("FLEXMPI_HOSTFILE", hostfile.c_str(), 1);
  }
  MPI_Init(&argc, &argv);
  char local_name[] = "local", far_name[] = "far", octo_name[] = "octo";
  char* local[] = {local_name, local_name, local_name};
  char* far[] = {far_name};
  char* octo[] = {octo_name};

  int rank = 0, size = 0, count = 0, displ = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  CHECK_CODE(XMPI_Get_wsize(rank, size, kRows, &count, &displ), XMPI_SUCCESS);
  x = static_cast<double*>(std::malloc(sizeof(double) * (count > 0 ? count : 1)));
  for (int i = 0; i < count; ++i) x[i] = 7.0 * (displ + i);
  CHECK_CODE(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);

  if (XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED) {  // spawned in step j
    int it = 0;
    CHECK_CODE(XMPI_Get_data(&it), XMPI_SUCCESS);
    CHECK(it == 42, "XMPI_Get_data gave iteration %d, expected 42", it);
    check_intact("j", 4);
    from_k_on(local, far);
    CHECK(XMPI_Get_process_status() == XMPI_REMOVED, "the spawned processes should be removed");
    removed_calls_refused();
    std::free(x);
    MPI_Finalize();
    return process_check_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
  }

  CHECK(size == 2, "run this test on 2 processes, not %d", size);
  expect_error("a", XMPI_Remove(1, nullptr), XMPI_ERR_ARG, "only 0 were spawned");
  check_intact("a", 2);
  try {
    const int initial[1] = {1};
    flexmpi::remove_ranks(initial);
    CHECK(false, "b: removing rank 1 of the initial set succeeded");
  } catch (const flexmpi::Error& e) {
    CHECK(e.code() == flexmpi::Errc::invalid_argument, "b: code %d", static_cast<int>(e.code()));
    CHECK(std::strstr(e.what(), "initial set") != nullptr, "b: message '%s'", e.what());
  }
  check_intact("b", 2);
  expect_error(
      "c", XMPI_Spawn("/nonexistent/flexmpi_no_such_program", nullptr, 1, MPI_INFO_NULL, nullptr),
      XMPI_ERR_ARG, "no executable file");
  check_intact("c", 2);
  expect_error("d", XMPI_Spawn(nullptr, nullptr, 1, MPI_INFO_NULL, octo), XMPI_ERR_ARG,
               "'octo' matches no node");
  check_intact("d", 2);
  expect_error("e", XMPI_Spawn(nullptr, nullptr, 3, MPI_INFO_NULL, local), XMPI_ERR_ARG,
               "no free processing element");
  check_intact("e", 2);
  flexmpi::ProcessManager::inject_spawn_failure_for_testing(0);
  expect_error("f", XMPI_Spawn(nullptr, nullptr, 1, MPI_INFO_NULL, local), XMPI_ERR_MPI,
               "injected failure");
  check_intact("f", 2);
  flexmpi::ProcessManager::inject_spawn_failure_for_testing(1);
  expect_error("g", XMPI_Spawn(nullptr, nullptr, 2, MPI_INFO_NULL, local), XMPI_ERR_MPI,
               "injected failure");
  check_intact("g", 2);
  expect_error(
      "h",
      rank == 0 ? XMPI_Spawn(nullptr, nullptr, 1, MPI_INFO_NULL, local) : XMPI_Remove(1, nullptr),
      XMPI_ERR_STATE, "different operations");
  check_intact("h", 2);
  int it = 0;
  expect_error("i", XMPI_Get_data(&it), XMPI_ERR_STATE, "newly spawned");
  check_intact("i", 2);
  expect_error("p", XMPI_Spawn("", nullptr, 1, MPI_INFO_NULL, nullptr), XMPI_ERR_ARG,
               "command is an empty string");
  check_intact("p", 2);

  // j: a spawn that works; the data go to the new processes with XMPI_Send_data.
  CHECK_CODE(XMPI_Spawn(nullptr, nullptr, 2, MPI_INFO_NULL, local), XMPI_SUCCESS);
  CHECK(world_size() == 4, "j: %d processes after the spawn", world_size());
  expect_error("j", XMPI_Redistribute_data(count, displ, count, displ), XMPI_ERR_STATE,
               "XMPI_Send_data");
  CHECK_CODE(XMPI_Send_data(42, &count, &displ), XMPI_SUCCESS);
  check_intact("j", 4);
  from_k_on(local, far);
  CHECK(XMPI_Get_process_status() == XMPI_RUNNING, "rank %d: status %d at the end", rank,
        XMPI_Get_process_status());
  check_intact("n", 2);

  MPI_Allreduce(MPI_IN_PLACE, &process_check_failures, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
  if (rank == 0 && process_check_failures == 0) std::printf("process_errors: all checks passed\n");
  MPI_Barrier(XMPI_COMM_WORLD);
  if (rank == 0 && !hostfile.empty()) std::remove(hostfile.c_str());
  std::free(x);
  MPI_Finalize();
  return process_check_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
