// Placement across hosts (thesis 4.4): two "hosts" fxhosta (node class a)
// and fxhostb (class b), 2 processing elements each, are network namespaces
// with their own hostnames (netns_hosts.sh builds them and runs this program
// on fxhosta with 2 processes). The scheduler must put the processes
// spawned on class b on fxhostb (MPI_Info "host"), the data must reach them
// over TCP, class a must be full, and removal by class must pick them.
// Then flexmpi::reconfigure moves the application to 2 PEs of class a + 1 of
// class b (a spawn on fxhostb), and back to class a only (a removal).
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "flexmpi.h"
#include "flexmpi/flexmpi.hpp"
#include "process_check.h"

namespace {

constexpr int kRows = 1000;
double* x = nullptr;

std::string processor() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return std::string(name, length);
}

// Every process: its rows hold their values; the blocks cover the rows.
void check_data(const char* step) {
  int rank = 0, size = 0, count = 0, displ = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  CHECK_CODE(XMPI_Get_wsize(rank, size, kRows, &count, &displ), XMPI_SUCCESS);
  int bad = 0;
  for (int i = 0; i < count; ++i) bad += x[i] != 0.5 * (displ + i);
  int totals[2] = {count, bad};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
  CHECK(totals[0] == kRows && totals[1] == 0, "%s: %d rows, %d wrong", step, totals[0], totals[1]);
}

// Rank 0 checks where every process runs.
void check_hosts(const char* step, const std::vector<std::string>& expected) {
  int rank = 0, size = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  CHECK(size == static_cast<int>(expected.size()), "%s: %d processes, expected %zu", step, size,
        expected.size());
  std::string name = processor();
  name.resize(MPI_MAX_PROCESSOR_NAME, '\0');
  std::vector<char> all(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Gather(name.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
             MPI_CHAR, 0, XMPI_COMM_WORLD);
  if (rank != 0) return;
  for (int p = 0; p < size && p < static_cast<int>(expected.size()); ++p) {
    const char* host = all.data() + static_cast<std::size_t>(p) * MPI_MAX_PROCESSOR_NAME;
    CHECK(expected[p] == host, "%s: rank %d runs on %s, expected %s", step, p, host,
          expected[p].c_str());
  }
}

// Phase 1: XMPI_Spawn on class b (iteration 5 for the new processes), a full
// class, removal by class and without.
void spawn_and_remove() {
  char a_name[] = "a", b_name[] = "b";
  char* class_a[] = {a_name};
  check_hosts("spawn", {"fxhosta", "fxhosta", "fxhostb", "fxhostb"});
  check_data("spawn");
  // Class a: 2 PEs, 2 processes.
  const int full = XMPI_Spawn(nullptr, nullptr, 1, MPI_INFO_NULL, class_a);
  CHECK(full == XMPI_ERR_ARG && std::strstr(XMPI_Last_error_message(), "no free") != nullptr,
        "a spawn on the full class a returned %d (%s)", full, XMPI_Last_error_message());
  char* class_b[] = {b_name};
  CHECK_CODE(XMPI_Remove(1, class_b), XMPI_SUCCESS);
  if (XMPI_Get_process_status() == XMPI_REMOVED) return;
  check_hosts("remove b", {"fxhosta", "fxhosta", "fxhostb"});
  check_data("remove b");
  CHECK_CODE(XMPI_Remove(1, nullptr), XMPI_SUCCESS);
  if (XMPI_Get_process_status() == XMPI_REMOVED) return;
  check_hosts("remove", {"fxhosta", "fxhosta"});
  check_data("remove");
}

// Phase 2, after reconfigure({{"a", 2}, {"b", 1}}, 7) (the new process joins here).
void reconfigured() {
  check_hosts("reconfigure a:2 b:1", {"fxhosta", "fxhosta", "fxhostb"});
  check_data("reconfigure a:2 b:1");
  try {
    flexmpi::reconfigure({{"a", 2}, {"b", 0}}, 9);  // removes it
  } catch (const flexmpi::Error& e) {
    CHECK(false, "reconfigure to a:2 b:0: %s", e.what());
  }
  if (XMPI_Get_process_status() == XMPI_REMOVED) return;
  check_hosts("reconfigure a:2 b:0", {"fxhosta", "fxhosta"});
  check_data("reconfigure a:2 b:0");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  char b_name[] = "b";
  char* class_b[] = {b_name, b_name};
  int rank = 0, size = 0, count = 0, displ = 0, it = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  CHECK_CODE(XMPI_Get_wsize(rank, size, kRows, &count, &displ), XMPI_SUCCESS);
  x = static_cast<double*>(std::malloc(sizeof(double) * (count > 0 ? count : 1)));
  for (int i = 0; i < count; ++i) x[i] = 0.5 * (displ + i);
  CHECK_CODE(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);

  if (XMPI_Get_process_status() == XMPI_RUNNING) {
    CHECK(processor() == "fxhosta", "an initial process runs on %s", processor().c_str());
    CHECK_CODE(XMPI_Spawn(nullptr, nullptr, 2, MPI_INFO_NULL, class_b), XMPI_SUCCESS);
    CHECK_CODE(XMPI_Send_data(5, &count, &displ), XMPI_SUCCESS);
    spawn_and_remove();
    try {
      flexmpi::reconfigure({{"a", 2}, {"b", 1}}, 7);  // spawns 1 on class b
    } catch (const flexmpi::Error& e) {
      CHECK(false, "reconfigure to a:2 b:1: %s", e.what());
    }
    reconfigured();
  } else {
    CHECK(processor() == "fxhostb", "a process spawned on class b runs on %s", processor().c_str());
    CHECK_CODE(XMPI_Get_data(&it), XMPI_SUCCESS);
    CHECK(it == 5 || it == 7, "XMPI_Get_data: iteration %d", it);
    if (it == 5) spawn_and_remove();
    if (it == 7) reconfigured();
    CHECK(XMPI_Get_process_status() == XMPI_REMOVED, "a spawned process is still here");
  }
  if (XMPI_Get_process_status() != XMPI_REMOVED) {
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Allreduce(MPI_IN_PLACE, &process_check_failures, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
    if (rank == 0 && process_check_failures == 0) std::printf("two_hosts: all checks passed\n");
  }
  std::free(x);
  MPI_Finalize();
  return process_check_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
