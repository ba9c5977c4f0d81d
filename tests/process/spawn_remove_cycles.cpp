// Repeated spawn/remove cycles (thesis 4.3, 4.5) with every kind of
// registered structure: distributed and replicated vectors, a distributed
// dense matrix, distributed and replicated CSR matrices. After every
// reconfiguration each process checks each of its rows, element by element,
// and the processes check the blocks tile the rows and the global checksums.
// The script (one reconfiguration per iteration, the same on every process):
//   it 0: spawn 1 (Alg. 1, the C API, this program by NULL command)
//   it 1: spawn 2 in one batch (Alg. 2, MPI_Info key XMPI_INFO_BATCH)
//   it 2: remove 2 (the newest: the batch pair, which must leave together)
//   it 3: spawn 2 one by one (C++ API, command = argv[0])
//   it 4: remove the process of rank 2 (C++ remove_ranks: the one of it 0)
//   it 5: reconfigure to 3 processes (removes the newest)
//   it 6: reconfigure to 5 processes (spawns 2)
//   it 7: reconfigure to 2 processes (back to the initial set)
// Built with CYCLES_IN_PLACE (process_spawn_remove_cycles_in_place), the
// distributed structures are XMPI_DISTRIBUTED_IN_PLACE: new processes place
// them at their (empty) block, removed ones get them back malloc'ed.
// Run on 2 processes. FLEXMPI_SAMPLING_INTERVAL=1: every iteration closes a
// sampling interval (a collective, which must stay aligned across the
// reconfigurations) and runs the load balancer (XMPI_Eval_lbalance), which may
// move the rows too: the measured speeds are also what removal and
// XMPI_Send_data split the rows by.
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "flexmpi.h"
#include "flexmpi/flexmpi.hpp"
#include "process_check.h"

namespace {

constexpr int kRows = 60;
constexpr int kSteps = 9;
#ifdef CYCLES_IN_PLACE
constexpr XMPI_Scheme kDistributed = XMPI_DISTRIBUTED_IN_PLACE;
#else
constexpr XMPI_Scheme kDistributed = XMPI_DISTRIBUTED;
#endif

double vector_value(int row) { return 1000.0 + row; }
double replicated_value(int row) { return -3.0 * row; }
double dense_value(int row, int col) { return row * 100.0 + col; }
int csr_row_nnz(int row) { return row % 4 + 1; }
int csr_col(int row, int k) { return (row * 7 + k * 13) % kRows; }
double csr_value(int row, int k) { return row + 0.25 * k; }
double csr_replicated_value(int row, int k) { return 2.0 * row - k; }

int csr_total_nnz() {
  int nnz = 0;
  for (int r = 0; r < kRows; ++r) nnz += csr_row_nnz(r);
  return nnz;
}

struct Data {
  double* x = nullptr;  // vector, distributed
  double* y = nullptr;  // vector, replicated
  double* a = nullptr;  // dense kRows x kRows, distributed
  int* ia = nullptr;    // CSR, distributed
  int* ja = nullptr;
  double* values = nullptr;
  int* ria = nullptr;  // CSR, replicated (whole matrix on every process)
  int* rja = nullptr;
  double* rvalues = nullptr;
};

template <class T>
T* allocate(std::size_t n) {
  return static_cast<T*>(std::malloc(sizeof(T) * (n == 0 ? 1 : n)));
}

// The structures for the block (count, displ); `fill`: with their values
// (initial set), else empty distributed parts and zeroed values (a spawned
// process, which gets them from XMPI_Get_data).
Data make_data(int count, int displ, bool fill) {
  Data d;
  d.x = allocate<double>(count);
  d.y = allocate<double>(kRows);
  d.a = allocate<double>(static_cast<std::size_t>(count) * kRows);
  d.ia = allocate<int>(count + 1);
  d.ia[0] = 0;
  for (int i = 0; i < count; ++i) d.ia[i + 1] = d.ia[i] + csr_row_nnz(displ + i);
  d.ja = allocate<int>(d.ia[count]);
  d.values = allocate<double>(d.ia[count]);
  d.ria = allocate<int>(kRows + 1);
  d.ria[0] = 0;
  for (int r = 0; r < kRows; ++r) d.ria[r + 1] = d.ria[r] + csr_row_nnz(r);
  d.rja = allocate<int>(d.ria[kRows]);
  d.rvalues = allocate<double>(d.ria[kRows]);
  for (int r = 0; r < kRows; ++r) {
    d.y[r] = 0.0;
    for (int k = 0; k < csr_row_nnz(r); ++k) {
      d.rja[d.ria[r] + k] = csr_col(r, k);  // the pattern is the same everywhere
      d.rvalues[d.ria[r] + k] = 0.0;
    }
  }
  if (!fill) return d;
  for (int i = 0; i < count; ++i) {
    const int row = displ + i;
    d.x[i] = vector_value(row);
    d.y[row] = replicated_value(row);
    for (int c = 0; c < kRows; ++c)
      d.a[static_cast<std::size_t>(i) * kRows + c] = dense_value(row, c);
    for (int k = 0; k < csr_row_nnz(row); ++k) {
      d.ja[d.ia[i] + k] = csr_col(row, k);
      d.values[d.ia[i] + k] = csr_value(row, k);
      d.rvalues[d.ria[row] + k] = csr_replicated_value(row, k);
    }
  }
  return d;
}

void register_data(Data& d) {
  CHECK_CODE(XMPI_Register_vector(&d.x, kRows, MPI_DOUBLE, kDistributed), XMPI_SUCCESS);
  CHECK_CODE(XMPI_Register_vector(&d.y, kRows, MPI_DOUBLE, XMPI_REPLICATED), XMPI_SUCCESS);
  CHECK_CODE(XMPI_Register_dense(&d.a, kRows, MPI_DOUBLE, kDistributed), XMPI_SUCCESS);
  CHECK_CODE(XMPI_Register_sparse(&d.ia, &d.ja, &d.values, kRows, csr_total_nnz(), MPI_DOUBLE,
                                  kDistributed),
             XMPI_SUCCESS);
  CHECK_CODE(XMPI_Register_sparse(&d.ria, &d.rja, &d.rvalues, kRows, csr_total_nnz(), MPI_DOUBLE,
                                  XMPI_REPLICATED),
             XMPI_SUCCESS);
}

// Every process checks its rows; together they check tiling and checksums.
void verify(const Data& d, int it) {
  int rank = 0, size = 0, count = 0, displ = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  CHECK_CODE(XMPI_Get_wsize(rank, size, kRows, &count, &displ), XMPI_SUCCESS);
  std::vector<int> blocks(2 * static_cast<std::size_t>(size));
  const int mine[2] = {count, displ};
  MPI_Allgather(mine, 2, MPI_INT, blocks.data(), 2, MPI_INT, XMPI_COMM_WORLD);
  int next = 0;
  for (int p = 0; p < size; ++p) {
    CHECK(blocks[2 * p + 1] == next, "it %d: block of rank %d starts at %d, expected %d", it, p,
          blocks[2 * p + 1], next);
    next += blocks[2 * p];
  }
  CHECK(next == kRows, "it %d: the blocks cover %d rows", it, next);
  double sums[5] = {0, 0, 0, 0, 0};
  int bad = 0;
  for (int i = 0; i < count; ++i) {
    const int row = displ + i;
    sums[0] += d.x[i];
    sums[1] += d.y[row];
    bad += d.x[i] != vector_value(row);
    bad += d.y[row] != replicated_value(row);
    for (int c = 0; c < kRows; ++c) {
      const double v = d.a[static_cast<std::size_t>(i) * kRows + c];
      sums[2] += v;
      bad += v != dense_value(row, c);
    }
    bad += d.ia[i + 1] - d.ia[i] != csr_row_nnz(row);
    for (int k = 0; k < csr_row_nnz(row); ++k) {
      sums[3] += d.values[d.ia[i] + k];
      sums[4] += d.rvalues[d.ria[row] + k];
      bad += d.ja[d.ia[i] + k] != csr_col(row, k);
      bad += d.values[d.ia[i] + k] != csr_value(row, k);
      bad += d.rvalues[d.ria[row] + k] != csr_replicated_value(row, k);
    }
  }
  CHECK(bad == 0, "it %d, rank %d (rows %d..%d): %d wrong elements", it, rank, displ,
        displ + count - 1, bad);
  MPI_Allreduce(MPI_IN_PLACE, sums, 5, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
  double expected[5] = {0, 0, 0, 0, 0};
  for (int r = 0; r < kRows; ++r) {
    expected[0] += vector_value(r);
    expected[1] += replicated_value(r);
    for (int c = 0; c < kRows; ++c) expected[2] += dense_value(r, c);
    for (int k = 0; k < csr_row_nnz(r); ++k) {
      expected[3] += csr_value(r, k);
      expected[4] += csr_replicated_value(r, k);
    }
  }
  for (int s = 0; s < 5; ++s) {
    CHECK(sums[s] == expected[s], "it %d: checksum of structure %d is %g, expected %g", it, s,
          sums[s], expected[s]);
  }
}

// Some work per row, monitored, then the load balancer (thesis Fig. 5.14).
void monitored_iteration(const Data& d, int it, int& count, int& displ) {
  int rank = 0, size = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  CHECK_CODE(XMPI_Monitor_si_init(), XMPI_SUCCESS);
  volatile double sink = 0.0;
  for (int i = 0; i < count; ++i) {
    for (int k = 0; k < 2000; ++k) sink = sink + d.x[i] * 1e-9 * k;
  }
  CHECK_CODE(XMPI_Eval_lbalance(rank, size, it, kSteps, &count, &displ, nullptr), XMPI_SUCCESS);
}

int size_now() {
  int size = 0;
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  return size;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, count = 0, displ = 0, it = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  CHECK_CODE(XMPI_Get_wsize(rank, size, kRows, &count, &displ), XMPI_SUCCESS);
  const bool spawned = XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED;
  if (spawned) CHECK(count == 0, "a new process owns %d rows before XMPI_Get_data", count);
  Data d = make_data(count, displ, !spawned);
  register_data(d);
  if (spawned) {
    CHECK_CODE(XMPI_Get_data(&it), XMPI_SUCCESS);
    CHECK(XMPI_Get_process_status() == XMPI_RUNNING, "status after XMPI_Get_data");
    // A replicated structure is held whole, not only the new process's rows.
    int missing = 0;
    for (int row = 0; row < kRows; ++row) {
      missing += d.y[row] != replicated_value(row);
      for (int k = 0; k < csr_row_nnz(row); ++k) {
        missing += d.rja[d.ria[row] + k] != csr_col(row, k);
        missing += d.rvalues[d.ria[row] + k] != csr_replicated_value(row, k);
      }
    }
    CHECK(missing == 0, "a new process misses %d elements of the replicated structures", missing);
  }
  const std::vector<std::string> no_args;
  for (; it < kSteps; ++it) {
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Comm_size(XMPI_COMM_WORLD, &size);
    CHECK_CODE(XMPI_Get_wsize(rank, size, kRows, &count, &displ), XMPI_SUCCESS);
    verify(d, it);
    monitored_iteration(d, it, count, displ);
    verify(d, it);
    const int before = size_now();
    int expected = before;
    try {
      switch (it) {
        case 0:
          CHECK_CODE(XMPI_Spawn(nullptr, nullptr, 1, MPI_INFO_NULL, nullptr), XMPI_SUCCESS);
          CHECK_CODE(XMPI_Send_data(it + 1, &count, &displ), XMPI_SUCCESS);
          expected = 3;
          break;
        case 1: {
          MPI_Info info;
          MPI_Info_create(&info);
          MPI_Info_set(info, XMPI_INFO_BATCH, "true");
          CHECK_CODE(XMPI_Spawn(argv[0], nullptr, 2, info, nullptr), XMPI_SUCCESS);
          MPI_Info_free(&info);
          CHECK_CODE(XMPI_Send_data(it + 1, &count, &displ), XMPI_SUCCESS);
          expected = 5;
          break;
        }
        case 2:
          CHECK_CODE(XMPI_Remove(2, nullptr), XMPI_SUCCESS);
          expected = 3;
          break;
        case 3:
          flexmpi::spawn_processes(argv[0], no_args, 2);
          flexmpi::send_data(it + 1);
          expected = 5;
          break;
        case 4: {
          const int victim[1] = {2};
          flexmpi::remove_ranks(victim);
          expected = 4;
          break;
        }
        case 5:
          flexmpi::reconfigure({{"", 3}}, it + 1);
          expected = 3;
          break;
        case 6:
          flexmpi::reconfigure({{"", 5}}, it + 1);
          expected = 5;
          break;
        case 7:
          flexmpi::reconfigure({{"", 2}}, it + 1);
          expected = 2;
          break;
        default:
          break;
      }
    } catch (const flexmpi::Error& e) {
      CHECK(false, "it %d: %s", it, e.what());
    }
    if (XMPI_Get_process_status() == XMPI_REMOVED) break;
    CHECK(size_now() == expected, "it %d: %d processes, expected %d", it, size_now(), expected);
  }
  if (XMPI_Get_process_status() != XMPI_REMOVED) {
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    CHECK(spawned == false, "a spawned process is still here at the end (rank %d)", rank);
    MPI_Allreduce(MPI_IN_PLACE, &process_check_failures, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
    if (rank == 0 && process_check_failures == 0)
      std::printf("spawn_remove_cycles: all checks passed\n");
  }
  // After MPI_Finalize: in place, it hands the blocks back malloc'ed.
  MPI_Finalize();
  for (void* p :
       {static_cast<void*>(d.x), static_cast<void*>(d.y), static_cast<void*>(d.a),
        static_cast<void*>(d.ia), static_cast<void*>(d.ja), static_cast<void*>(d.values),
        static_cast<void*>(d.ria), static_cast<void*>(d.rja), static_cast<void*>(d.rvalues)}) {
    std::free(p);
  }
  return process_check_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
