// bench-halo-exchange: XMPI_Halo_exchange of a registered block against the
// hand-written exchange of the same rows, two MPI_Sendrecv calls (first
// rows up and the rows below from below, last rows down and the rows above
// from above), on the same block partition, in the same run.
//
//   mpiexec -n 2 build-dir/bench/halo_exchange/bench-halo-exchange [repetitions] [ghost rows]
//
// Rows of 16, 256, 4096 and 65536 doubles (128 B to 512 KiB a row), 64 rows
// a process, 1 ghost row unless the second argument says otherwise. Each
// repetition times one batch of exchanges of each kind back to back,
// alternating which goes first so that the drifts of a shared machine hit
// both alike; a batch's time is the slowest process's. "MPI_Sendrecv" goes
// through flexmpi's PMPI wrappers as an application's own call does;
// "PMPI_Sendrecv" is the MPI library alone. Prints the median time of an
// exchange of each kind and the median over the repetitions of the paired
// ratios halo / MPI_Sendrecv and halo / PMPI_Sendrecv.
//
// Results: docs/results.md, "Halo exchange against MPI_Sendrecv".
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "flexmpi.h"

namespace {

constexpr int kRowsPerProcess = 64;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

struct Layout {
  int rank = 0, nprocs = 1, count = 0, displ = 0, ghost = 1;
  long long width = 0;  // doubles a row
  [[nodiscard]] long long elements() const { return (count + 2LL * ghost) * width; }
  [[nodiscard]] int up() const { return rank > 0 ? rank - 1 : MPI_PROC_NULL; }
  [[nodiscard]] int down() const { return rank + 1 < nprocs ? rank + 1 : MPI_PROC_NULL; }
};

// The hand-written exchange; `sendrecv` is MPI_Sendrecv or PMPI_Sendrecv.
template <class Sendrecv>
void sendrecv_exchange(double* v, const Layout& l, Sendrecv sendrecv) {
  const int n = static_cast<int>(l.ghost * l.width);
  sendrecv(v + l.ghost * l.width, n, MPI_DOUBLE, l.up(), 0, v + (l.ghost + l.count) * l.width, n,
           MPI_DOUBLE, l.down(), 0, XMPI_COMM_WORLD, MPI_STATUS_IGNORE);
  sendrecv(v + l.count * l.width, n, MPI_DOUBLE, l.down(), 1, v, n, MPI_DOUBLE, l.up(), 1,
           XMPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

// A malloc'ed buffer: the block's rows hold their global row, ghost rows -1.
double* make_buffer(const Layout& l) {
  auto* v = static_cast<double*>(std::malloc(static_cast<std::size_t>(l.elements()) * 8));
  for (long long k = 0; k < l.elements(); ++k) {
    const long long row = k / l.width - l.ghost;
    v[k] = row >= 0 && row < l.count ? static_cast<double>(l.displ + row) : -1.0;
  }
  return v;
}

// Both exchanges filled the ghost rows with the neighbours' rows.
void check(const double* v, const Layout& l, const char* what) {
  const long long rows = static_cast<long long>(kRowsPerProcess) * l.nprocs;
  for (long long i = 0; i < l.count + 2LL * l.ghost; ++i) {
    const long long row = l.displ - l.ghost + i;
    const double expected = row >= 0 && row < rows ? static_cast<double>(row) : -1.0;
    if (v[i * l.width] != expected || v[i * l.width + l.width - 1] != expected) {
      std::fprintf(stderr, "rank %d, %s: buffer row %lld holds %g, expected %g\n", l.rank, what, i,
                   v[i * l.width], expected);
      MPI_Abort(XMPI_COMM_WORLD, 1);
    }
  }
}

// The slowest process's time of `batch` calls of `exchange`, per call.
template <class Exchange>
double timed(int batch, Exchange&& exchange) {
  PMPI_Barrier(XMPI_COMM_WORLD);
  const double start = PMPI_Wtime();
  for (int k = 0; k < batch; ++k) exchange();
  double elapsed = (PMPI_Wtime() - start) / batch;
  PMPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, XMPI_COMM_WORLD);
  return elapsed;
}

void run(Layout l, int repetitions) {
  const long long rows = static_cast<long long>(kRowsPerProcess) * l.nprocs;
  MPI_Comm_rank(XMPI_COMM_WORLD, &l.rank);
  XMPI_Get_wsize(l.rank, l.nprocs, static_cast<int>(rows), &l.count, &l.displ);
  double* u = make_buffer(l);
  double* v = make_buffer(l);
  if (XMPI_Register_rows(&u, rows, l.width, l.ghost, MPI_DOUBLE, XMPI_DISTRIBUTED) !=
      XMPI_SUCCESS) {
    std::fprintf(stderr, "XMPI_Register_rows: %s\n", XMPI_Last_error_message());
    MPI_Abort(XMPI_COMM_WORLD, 1);
  }
  const auto halo = [&] { XMPI_Halo_exchange(&u); };
  const auto wrapped = [&] { sendrecv_exchange(v, l, MPI_Sendrecv); };
  const auto bare = [&] { sendrecv_exchange(v, l, PMPI_Sendrecv); };
  halo();
  wrapped();
  check(u, l, "XMPI_Halo_exchange");
  check(v, l, "MPI_Sendrecv");
  // About 4 MiB a batch, at least 20 exchanges.
  const double row_bytes = static_cast<double>(l.width) * 8.0 * l.ghost;
  const int batch = static_cast<int>(std::clamp(4194304.0 / row_bytes, 20.0, 2000.0));
  std::vector<double> halo_times, wrapped_times, bare_times, to_wrapped, to_bare;
  for (int r = 0; r < repetitions + 2; ++r) {  // two warm-up repetitions
    double t_halo = 0.0, t_wrapped = 0.0, t_bare = 0.0;
    if (r % 2 == 0) {
      t_halo = timed(batch, halo);
      t_wrapped = timed(batch, wrapped);
      t_bare = timed(batch, bare);
    } else {
      t_bare = timed(batch, bare);
      t_wrapped = timed(batch, wrapped);
      t_halo = timed(batch, halo);
    }
    if (r < 2) continue;
    halo_times.push_back(t_halo);
    wrapped_times.push_back(t_wrapped);
    bare_times.push_back(t_bare);
    to_wrapped.push_back(t_halo / t_wrapped);
    to_bare.push_back(t_halo / t_bare);
  }
  if (l.rank == 0) {
    std::printf("%8d %9lld %6d %6d %12.2f %14.2f %15.2f %10.3f %10.3f\n", l.nprocs, l.width * 8,
                l.ghost, batch, median(halo_times) * 1e6, median(wrapped_times) * 1e6,
                median(bare_times) * 1e6, median(to_wrapped), median(to_bare));
  }
  XMPI_Unregister(&u);
  std::free(u);
  std::free(v);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 21;
  Layout layout;
  layout.ghost = argc > 2 ? std::clamp(std::atoi(argv[2]), 1, kRowsPerProcess) : 1;
  MPI_Comm_size(XMPI_COMM_WORLD, &layout.nprocs);
  int rank = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::printf("# median of %d repetitions; us per exchange; ratios: medians of paired ratios\n",
                repetitions);
    std::printf("%8s %9s %6s %6s %12s %14s %15s %10s %10s\n", "ranks", "row_bytes", "ghost",
                "batch", "halo_us", "MPI_Sendrecv", "PMPI_Sendrecv", "/MPI", "/PMPI");
  }
  for (const long long width : {16LL, 256LL, 4096LL, 65536LL}) {
    layout.width = width;
    run(layout, repetitions);
  }
  MPI_Finalize();
  return 0;
}
