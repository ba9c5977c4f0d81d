// redistribute() against a bare MPI_Alltoallv of the same bytes.
//
//   mpiexec -n 2 build/bench/bench-redistribution [elements] [runs] [nonzeros per CSR row]
//
// One distributed vector of `elements` doubles (default 4 Mi = 32 MiB) goes
// back and forth between two decompositions; each run is one change of
// decomposition, timed as the slowest process between two barriers. The
// baseline moves exactly the bytes that change owner with PMPI_Alltoallv
// between buffers allocated once. redistribute() also allocates the new
// block (or shrinks the old one in place), copies the rows a process keeps
// and agrees on the arguments first, so the ratio is the whole price of
// doing it safely and transparently. "Alg. 4" is what thesis Algorithm 4
// does instead: one MPI_Alltoallv of every row, the kept ones included
// (MPI copies them to self), into a fresh buffer. "Floor" adds to the bare
// exchange what a contiguous block that keeps rows must also do when its
// first row changes: shift the rows it keeps by one memmove (timed apart, on
// a warm buffer). The registered array starts with the block's first row and
// is the user's malloc'ed memory, so no method avoids that shift. "In place"
// is the same vector registered with Scheme::distributed_in_place: the block
// lives at its global offset in a window of the whole vector, so kept rows
// do not move at all and the floor is the bare exchange itself. The window
// asks for 2 MiB pages, which also speed up Open MPI's single-copy transport,
// so "bare 2M" times the bare exchange between buffers with that advice
// too: the fair floor of the in-place scheme.
// "CSR in place" is a CSR matrix on the same rows, 2 nonzeros a row unless
// the third argument says otherwise, registered in place too (its column indices and values in
// windows of all nonzeros, ia per block), set against a bare MPI_Alltoallv of the bytes that change
// owner (the rows' nonzeros and row pointers) between buffers with 2 MiB pages. Prints the median
// of `runs` runs (default 20) of each, and the ratios.
//
// Results: docs/results.md, "Redistribution against a bare MPI_Alltoallv".
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "redistribution/address_window.hpp"
#include "redistribution/data_registry.hpp"

namespace {

using flexmpi::Decomposition;
using flexmpi::RowBlock;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The slowest process's time of `work`, between barriers.
template <class Work>
double timed(MPI_Comm comm, Work&& work) {
  PMPI_Barrier(comm);
  const double start = PMPI_Wtime();
  work();
  double elapsed = PMPI_Wtime() - start;
  PMPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, comm);
  return elapsed;
}

std::int64_t overlap(const RowBlock& a, const RowBlock& b) {
  return std::max<std::int64_t>(
      0, std::min(a.displ + a.count, b.displ + b.count) - std::max(a.displ, b.displ));
}

struct Result {
  double registry = 0.0, in_place = 0.0, bare = 0.0, bare_huge = 0.0, algorithm4 = 0.0, floor = 0.0;
  double csr_in_place = 0.0, csr_bare_huge = 0.0;
  std::uint64_t bytes_moved = 0;
};

// Bytes that change owner with a CSR row: its nonzeros (column indices and
// values) and its entry of the row pointers (the receiver must learn the
// row's length; at 2 nonzeros a row a sixth of the row).
int csr_row_bytes(int per_row) {
  return per_row * static_cast<int>(sizeof(int) + sizeof(double)) + static_cast<int>(sizeof(int));
}

// A registry of one vector of global row values, on block `mine`.
struct Registered {
  double* x = nullptr;
  flexmpi::DataRegistry registry;

  Registered(const RowBlock& mine, std::int64_t rows, flexmpi::Scheme scheme)
      : x(static_cast<double*>(std::malloc(std::max<std::int64_t>(mine.count, 1) * 8))) {
    for (std::int64_t k = 0; k < mine.count; ++k) x[k] = static_cast<double>(mine.displ + k);
    registry.set_local_block(mine);
    registry.register_vector(reinterpret_cast<void**>(&x), rows, MPI_DOUBLE, scheme);
  }
  Registered(const Registered&) = delete;
  Registered& operator=(const Registered&) = delete;
  ~Registered() {
    registry.clear();  // an in-place vector comes back malloc'ed
    std::free(x);
  }

  // Moves the vector; returns the bytes this process sent.
  std::uint64_t move(const Decomposition& from, const Decomposition& to, MPI_Comm comm) {
    return registry.redistribute(from, to, comm).bytes_sent;
  }
  void check(const RowBlock& mine, int rank, MPI_Comm comm) const {
    for (std::int64_t k = 0; k < mine.count; ++k) {
      if (x[k] != static_cast<double>(mine.displ + k)) {
        std::fprintf(stderr, "rank %d: wrong value at %lld\n", rank, static_cast<long long>(k));
        PMPI_Abort(comm, 1);
      }
    }
  }
};

// A CSR matrix of `per_row` nonzeros a row registered in place, on block
// `mine`: row r holds columns r, r + 1, ... (mod rows) with values r, r + 0.5, ...
struct RegisteredCsr {
  int per_row;
  int* ia = nullptr;
  int* ja = nullptr;
  double* values = nullptr;
  flexmpi::DataRegistry registry;

  RegisteredCsr(const RowBlock& mine, std::int64_t rows, int nonzeros_per_row)
      : per_row(nonzeros_per_row),
        ia(static_cast<int*>(std::malloc((mine.count + 1) * sizeof(int)))),
        ja(static_cast<int*>(
            std::malloc(std::max<std::int64_t>(mine.count, 1) * per_row * sizeof(int)))),
        values(static_cast<double*>(
            std::malloc(std::max<std::int64_t>(mine.count, 1) * per_row * sizeof(double)))) {
    for (std::int64_t k = 0; k <= mine.count; ++k) ia[k] = static_cast<int>(k * per_row);
    for (std::int64_t k = 0; k < mine.count; ++k) {
      for (int j = 0; j < per_row; ++j) {
        ja[k * per_row + j] = static_cast<int>((mine.displ + k + j) % rows);
        values[k * per_row + j] = static_cast<double>(mine.displ + k) + 0.5 * j;
      }
    }
    registry.set_local_block(mine);
    registry.register_sparse(&ia, &ja, reinterpret_cast<void**>(&values), rows, rows * per_row,
                             MPI_DOUBLE, flexmpi::Scheme::distributed_in_place);
  }
  RegisteredCsr(const RegisteredCsr&) = delete;
  RegisteredCsr& operator=(const RegisteredCsr&) = delete;
  ~RegisteredCsr() {
    registry.clear();  // the nonzeros come back malloc'ed
    std::free(ia);
    std::free(ja);
    std::free(values);
  }

  void check(const RowBlock& mine, int rank, MPI_Comm comm) const {
    for (std::int64_t k = 0; k < mine.count; ++k) {
      const double row = static_cast<double>(mine.displ + k);
      if (ia[k] != k * per_row || values[k * per_row] != row ||
          values[k * per_row + per_row - 1] != row + 0.5 * (per_row - 1)) {
        std::fprintf(stderr, "rank %d: wrong CSR row %lld\n", rank, static_cast<long long>(k));
        PMPI_Abort(comm, 1);
      }
    }
  }
};

// Each iteration changes the decomposition once with each method, in the
// same direction, so that all of them see the same machine load (this machine
// is shared: a run of one method after the other would compare two loads).
Result run(const Decomposition& a, const Decomposition& b, int runs, int csr_per_row,
           MPI_Comm comm) {
  int rank = 0, nprocs = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nprocs);
  const std::int64_t rows = a.back().displ + a.back().count;
  Result result;
  Registered malloced(a[rank], rows, flexmpi::Scheme::distributed);
  Registered in_place(a[rank], rows, flexmpi::Scheme::distributed_in_place);
  RegisteredCsr csr(a[rank], rows, csr_per_row);
  const int row_bytes = csr_row_bytes(csr_per_row);

  std::int64_t max_block = 0;
  for (const Decomposition* d : {&a, &b}) {
    for (const RowBlock& block : *d) max_block = std::max(max_block, block.count);
  }
  std::vector<double> send_buffer(max_block + 1, 1.0), receive_buffer(max_block + 1, 0.0);
  const flexmpi::redistribution::AddressWindow huge_send((max_block + 1) * 8, "bench"),
      huge_receive((max_block + 1) * 8, "bench");
  std::memset(huge_send.at(0), 1, huge_send.bytes());  // warm, like the vectors
  std::memset(huge_receive.at(0), 0, huge_receive.bytes());
  const flexmpi::redistribution::AddressWindow csr_send((max_block + 1) * row_bytes, "bench"),
      csr_receive((max_block + 1) * row_bytes, "bench");
  std::memset(csr_send.at(0), 1, csr_send.bytes());
  std::memset(csr_receive.at(0), 0, csr_receive.bytes());
  std::vector<double> shift_buffer(2 * max_block + 1, 2.0);
  auto* old_block = static_cast<double*>(std::calloc(std::max<std::int64_t>(a[rank].count, 1), 8));

  std::vector<double> registry_times, in_place_times, bare_times, bare_huge_times, algorithm4_times,
      floor_times, csr_times, csr_bare_times;
  for (int i = 0; i < runs + 2; ++i) {  // two warm-up iterations
    const Decomposition& from = i % 2 == 0 ? a : b;
    const Decomposition& to = i % 2 == 0 ? b : a;

    // 1. DataRegistry::redistribute, of a malloc'ed and of an in-place vector.
    std::uint64_t sent = 0;
    const double t1 = timed(comm, [&] { sent = malloced.move(from, to, comm); });
    const double t5 = timed(comm, [&] { in_place.move(from, to, comm); });
    PMPI_Allreduce(MPI_IN_PLACE, &sent, 1, MPI_UINT64_T, MPI_SUM, comm);
    result.bytes_moved = sent;
    malloced.check(to[rank], rank, comm);
    in_place.check(to[rank], rank, comm);
    const double t7 = timed(comm, [&] { csr.registry.redistribute(from, to, comm); });
    csr.check(to[rank], rank, comm);

    // 2. Bare MPI_Alltoallv of the rows that change owner, preallocated buffers.
    // 3. Algorithm 4: MPI_Alltoallv of every row (self included) into a fresh block.
    std::vector<int> scounts(nprocs), sdispls(nprocs), rcounts(nprocs), rdispls(nprocs);
    std::vector<int> all_scounts(nprocs), all_sdispls(nprocs), all_rcounts(nprocs),
        all_rdispls(nprocs);
    int soffset = 0, roffset = 0;
    for (int p = 0; p < nprocs; ++p) {
      const int out = static_cast<int>(overlap(from[rank], to[p]));
      const int in = static_cast<int>(overlap(to[rank], from[p]));
      all_scounts[p] = out;
      all_rcounts[p] = in;
      all_sdispls[p] = static_cast<int>(std::max(from[rank].displ, to[p].displ) - from[rank].displ);
      all_rdispls[p] = static_cast<int>(std::max(to[rank].displ, from[p].displ) - to[rank].displ);
      scounts[p] = p == rank ? 0 : out;
      rcounts[p] = p == rank ? 0 : in;
      sdispls[p] = soffset;
      rdispls[p] = roffset;
      soffset += scounts[p];
      roffset += rcounts[p];
    }
    const double t2 = timed(comm, [&] {
      PMPI_Alltoallv(send_buffer.data(), scounts.data(), sdispls.data(), MPI_DOUBLE,
                     receive_buffer.data(), rcounts.data(), rdispls.data(), MPI_DOUBLE, comm);
    });
    const double t6 = timed(comm, [&] {
      PMPI_Alltoallv(huge_send.at(0), scounts.data(), sdispls.data(), MPI_DOUBLE,
                     huge_receive.at(0), rcounts.data(), rdispls.data(), MPI_DOUBLE, comm);
    });
    std::vector<int> csr_scounts(nprocs), csr_sdispls(nprocs), csr_rcounts(nprocs),
        csr_rdispls(nprocs);
    for (int p = 0; p < nprocs; ++p) {
      csr_scounts[p] = scounts[p] * row_bytes;
      csr_sdispls[p] = sdispls[p] * row_bytes;
      csr_rcounts[p] = rcounts[p] * row_bytes;
      csr_rdispls[p] = rdispls[p] * row_bytes;
    }
    const double t8 = timed(comm, [&] {
      PMPI_Alltoallv(csr_send.at(0), csr_scounts.data(), csr_sdispls.data(), MPI_BYTE,
                     csr_receive.at(0), csr_rcounts.data(), csr_rdispls.data(), MPI_BYTE, comm);
    });
    const double t3 = timed(comm, [&] {
      auto* new_block =
          static_cast<double*>(std::malloc(std::max<std::int64_t>(to[rank].count, 1) * 8));
      PMPI_Alltoallv(old_block, all_scounts.data(), all_sdispls.data(), MPI_DOUBLE, new_block,
                     all_rcounts.data(), all_rdispls.data(), MPI_DOUBLE, comm);
      std::free(old_block);
      old_block = new_block;
    });
    // The shift of the kept rows where the block's first row moves.
    const std::int64_t kept = overlap(from[rank], to[rank]);
    const std::int64_t shift = std::abs(from[rank].displ - to[rank].displ);
    const double t4 = timed(comm, [&] {
      if (kept > 0 && shift > 0) {
        std::memmove(shift_buffer.data() + (i % 2 == 0 ? shift : 0),
                     shift_buffer.data() + (i % 2 == 0 ? 0 : shift), kept * sizeof(double));
      }
    });
    if (i >= 2) {
      floor_times.push_back(t2 + t4);
      registry_times.push_back(t1);
      in_place_times.push_back(t5);
      bare_times.push_back(t2);
      bare_huge_times.push_back(t6);
      algorithm4_times.push_back(t3);
      csr_times.push_back(t7);
      csr_bare_times.push_back(t8);
    }
  }
  std::free(old_block);
  result.registry = median(registry_times);
  result.in_place = median(in_place_times);
  result.bare = median(bare_times);
  result.bare_huge = median(bare_huge_times);
  result.algorithm4 = median(algorithm4_times);
  result.floor = median(floor_times);
  result.csr_in_place = median(csr_times);
  result.csr_bare_huge = median(csr_bare_times);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : std::int64_t{4} << 20;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 20;
  const int csr_per_row = argc > 3 ? std::max(1, std::atoi(argv[3])) : 2;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank = 0, nprocs = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nprocs);

  // Scenarios: even -> a quarter of the rows shift to the last process (load
  // balancing), and everything from the first to the last process (spawn).
  const Decomposition even = flexmpi::block_decomposition(n, nprocs);
  Decomposition shifted = even;
  const std::int64_t shift = even[0].count / 2;
  shifted[0].count -= shift;
  for (int p = 1; p < nprocs; ++p) shifted[p].displ -= shift;
  shifted[nprocs - 1].count += shift;
  if (nprocs == 1) shifted = even;
  Decomposition first(nprocs, RowBlock{0, n}), last(nprocs, RowBlock{0, 0});
  first[0] = {n, 0};
  last[nprocs - 1] = {n, 0};

  struct Scenario {
    const char* name;
    const Decomposition* a;
    const Decomposition* b;
  };
  const Scenario scenarios[] = {{"rebalance (1/4 of a block moves)", &even, &shifted},
                                {"everything moves", &first, &last}};
  if (rank == 0) {
    std::printf("%d processes, %lld doubles (%.1f MiB), CSR %d nonzeros a row, median of %d runs\n",
                nprocs, static_cast<long long>(n), n * 8.0 / (1 << 20), csr_per_row, runs);
  }
  for (const Scenario& scenario : scenarios) {
    const Result r = run(*scenario.a, *scenario.b, runs, csr_per_row, comm);
    if (rank == 0) {
      std::printf(
          "%-34s moved %7.2f MiB  redistribute %8.3f ms  bare Alltoallv %8.3f ms  ratio %.2f  "
          "| in place %8.3f ms  ratio %.2f  bare 2M %8.3f ms  ratio %.2f  "
          "| floor %8.3f ms  ratio %.2f  | Alg. 4 Alltoallv %8.3f ms  ratio %.2f  "
          "| CSR in place %8.3f ms  bare 2M %8.3f ms  ratio %.2f\n",
          scenario.name, r.bytes_moved / double(1 << 20), r.registry * 1e3, r.bare * 1e3,
          r.registry / r.bare, r.in_place * 1e3, r.in_place / r.bare, r.bare_huge * 1e3,
          r.in_place / r.bare_huge, r.floor * 1e3, r.registry / r.floor, r.algorithm4 * 1e3,
          r.registry / r.algorithm4, r.csr_in_place * 1e3, r.csr_bare_huge * 1e3,
          r.csr_in_place / r.csr_bare_huge);
    }
  }
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
