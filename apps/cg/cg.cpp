// flexmpi-cg: preconditioned Conjugate Gradient (thesis Alg. 10, 6.1.1.2)
// on a CSR matrix distributed by row blocks, balanced by flexmpi's
// high-level API (XMPI_Monitor_si_init / XMPI_Eval_reconfig, thesis Fig. 5.14)
// and malleable: under a malleability policy (FLEXMPI_POLICY=smp|hpmp|amp)
// processes are spawned and removed while it iterates. With
// FLEXMPI_CHECKPOINT it writes checkpoints; FLEXMPI_RESTART resumes one on
// any number of processes (XMPI_Resume).
//
// The matrix is a real Matrix Market file (e.g. ../shared/matrices) or a
// generated SPD matrix with uneven row lengths. b = A * ones, so the exact
// solution is all ones; the program prints the relative residual, the
// maximum error and a checksum that do not depend on the partition beyond
// round-off of the dot products.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "flexmpi.h"
#include "flexmpi/flexmpi.hpp"
#include "sparse_input.hpp"

namespace {

struct Options {
  std::string matrix;
  std::int64_t generate = 20000;
  int max_row_length = 160;
  int iterations = 300;
  int sampling_interval = 0;
  std::string trace;
  bool static_mode = false;
  bool precondition = true;
  bool quiet = false;
};

// malloc'ed arrays: flexmpi reallocates registered buffers (flexmpi.h).
template <class T>
T* allocate(std::int64_t n) {
  void* p = std::malloc(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)) * sizeof(T));
  if (p == nullptr) {
    std::fprintf(stderr, "flexmpi-cg: out of memory\n");
    MPI_Abort(XMPI_COMM_WORLD, 1);
  }
  return static_cast<T*>(p);
}

void check(int code, const char* call) {
  if (code != XMPI_SUCCESS) {
    std::fprintf(stderr, "flexmpi-cg: %s: %s (%s)\n", call, XMPI_Error_string(code),
                 XMPI_Last_error_message());
    MPI_Abort(XMPI_COMM_WORLD, 1);
  }
}

// Every process's block, for MPI_Allgatherv of p: flexmpi knows them all
// without communication. Refreshed after every XMPI_Eval_reconfig, because
// another process's block can change while this one's stays the same, and
// the number of processes can change.
void current_partition(int nprocs, int n, std::vector<int>& counts, std::vector<int>& displs) {
  counts.resize(static_cast<std::size_t>(nprocs));
  displs.resize(counts.size());
  check(XMPI_Get_decomposition(nprocs, n, counts.data(), displs.data()), "XMPI_Get_decomposition");
}

// The scalars of the iteration that no registered structure carries: r.z
// and r.r from the residual, ||b||^2 from the rows (b = A * ones). After a
// spawn every process, old and new, computes them again together, so a new
// process needs nothing but its rows (XMPI_Get_data). A checkpoint saves
// them as they are (the record "cg.scalars"), so that a restart, on any
// number of processes, goes on with the values the interrupted run had.
struct Scalars {
  double rz = 0.0, rr = 0.0, bb = 0.0;
};
static_assert(sizeof(Scalars) == 3 * sizeof(double), "Scalars is saved as 3 doubles");

Scalars global_scalars(int count, const int* ia, const double* a, const double* r,
                       const double* d) {
  double sums[3] = {0.0, 0.0, 0.0};
  for (int i = 0; i < count; ++i) {
    double b = 0.0;
    for (int k = ia[i]; k < ia[i + 1]; ++k) b += a[k];
    sums[0] += r[i] * r[i] / d[i];
    sums[1] += r[i] * r[i];
    sums[2] += b * b;
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
  return {sums[0], sums[1], sums[2]};
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App cli{"flexmpi-cg: Conjugate Gradient balanced by flexmpi (thesis Alg. 10)"};
  cli.add_option("--matrix", options.matrix, "Matrix Market file (SPD); default: generated")
      ->check(CLI::ExistingFile);
  cli.add_option("--generate", options.generate, "rows of the generated matrix")
      ->check(CLI::Range(2, 50'000'000));
  cli.add_option("--max-row-length", options.max_row_length, "longest generated row")
      ->check(CLI::Range(2, 100'000));
  cli.add_option("--iterations", options.iterations, "CG iterations")
      ->check(CLI::Range(1, 100'000'000));
  cli.add_option("--sampling-interval", options.sampling_interval, "sets FLEXMPI_SAMPLING_INTERVAL")
      ->check(CLI::Range(1, 1'000'000));
  cli.add_option("--trace", options.trace, "sets FLEXMPI_TRACE");
  cli.add_flag("--static", options.static_mode, "no balancing (FLEXMPI_POLICY=none): same code");
  cli.add_flag("!--no-precondition", options.precondition,
               "plain CG instead of Jacobi-preconditioned");
  cli.add_flag("--quiet", options.quiet, "print only the result line");
  CLI11_PARSE(cli, argc, argv);
  if (options.sampling_interval > 0) {
    setenv("FLEXMPI_SAMPLING_INTERVAL", std::to_string(options.sampling_interval).c_str(), 1);
  }
  if (!options.trace.empty()) setenv("FLEXMPI_TRACE", options.trace.c_str(), 1);
  if (options.static_mode) setenv("FLEXMPI_POLICY", "none", 1);
  setenv("FLEXMPI_LB_MODEL", "nnz", 0);  // CG's work follows the nonzeros (thesis 5.2)

  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  // A process spawned by a malleability policy reads the input too, for its
  // size and nonzero count only; its rows come from the others (XMPI_Get_data).
  const bool newcomer = XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED;

  flexmpi_cg::SparseRows matrix;
  try {
    matrix = options.matrix.empty()
                 ? flexmpi_cg::generate_uneven_spd(options.generate, options.max_row_length, 2024)
                 : flexmpi_cg::read_matrix_market(options.matrix);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "flexmpi-cg: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }
  const int n = static_cast<int>(matrix.size);
  const long long total_nnz = matrix.nonzeros();

  int count = 0, displ = 0;
  if (!newcomer) check(XMPI_Get_wsize(rank, nprocs, n, &count, &displ), "XMPI_Get_wsize");
  // Local CSR block, diagonal, iterate, residual; p is replicated because
  // the matrix-vector product reads all of it.
  std::int64_t local_nnz = 0;
  for (int i = displ; i < displ + count; ++i)
    local_nnz += static_cast<std::int64_t>(matrix.rows[i].size());
  int* ia = allocate<int>(count + 1);
  int* ja = allocate<int>(local_nnz);
  double* a = allocate<double>(local_nnz);
  double* x = allocate<double>(count);
  double* r = allocate<double>(count);
  double* d = allocate<double>(count);
  double* p = allocate<double>(n);
  ia[0] = 0;
  for (int i = 0; i < count; ++i) {
    const auto& row = matrix.rows[displ + i];
    double row_sum = 0.0;
    d[i] = 1.0;
    for (std::size_t k = 0; k < row.size(); ++k) {
      ja[ia[i] + k] = row[k].first;
      a[ia[i] + k] = row[k].second;
      row_sum += row[k].second;
      if (row[k].first == displ + i && options.precondition) d[i] = row[k].second;
    }
    ia[i + 1] = ia[i] + static_cast<int>(row.size());
    x[i] = 0.0;
    r[i] = row_sum;  // b = A * ones and x0 = 0, so r0 = b
  }
  matrix.rows.clear();
  matrix.rows.shrink_to_fit();

  check(XMPI_Register_sparse(&ia, &ja, &a, n, static_cast<int>(total_nnz), MPI_DOUBLE,
                             XMPI_DISTRIBUTED),
        "XMPI_Register_sparse");
  check(XMPI_Register_vector(&x, n, MPI_DOUBLE, XMPI_DISTRIBUTED), "XMPI_Register_vector(x)");
  check(XMPI_Register_vector(&r, n, MPI_DOUBLE, XMPI_DISTRIBUTED), "XMPI_Register_vector(r)");
  check(XMPI_Register_vector(&d, n, MPI_DOUBLE, XMPI_DISTRIBUTED), "XMPI_Register_vector(d)");
  check(XMPI_Register_vector(&p, n, MPI_DOUBLE, XMPI_REPLICATED), "XMPI_Register_vector(p)");

  Scalars scalars;
  check(XMPI_Register_record("cg.scalars", &scalars, 3, MPI_DOUBLE), "XMPI_Register_record");

  // Where the loop starts: 0; in a process spawned by a malleability policy,
  // where the others are, with its rows taken from them (XMPI_Get_data); in
  // a job restarted from a checkpoint (FLEXMPI_RESTART), after the
  // checkpointed iteration, with the rows, p and the scalars read back.
  int first_iteration = 0;
  check(XMPI_Resume(&first_iteration), "XMPI_Resume");
  const bool restarted = !newcomer && first_iteration > 0;
  if (newcomer || restarted) {  // the block the data were given
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
    check(XMPI_Get_wsize(rank, nprocs, n, &count, &displ), "XMPI_Get_wsize");
  } else {
    for (int i = 0; i < count; ++i) p[displ + i] = r[i] / d[i];  // p0 = z0 = M^-1 r0
  }
  std::vector<int> counts, displs;
  current_partition(nprocs, n, counts, displs);
  if (!newcomer && !restarted) {
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, p, counts.data(), displs.data(), MPI_DOUBLE,
                   XMPI_COMM_WORLD);
  }
  if (!restarted) scalars = global_scalars(count, ia, a, r, d);
  // ||r|| <= 1e-13 ||b|| is as converged as doubles get. The remaining
  // iterations still do the same work (product, dot products, exchanges), so
  // a run is a fixed-work benchmark, but no longer update x, r and p: going
  // on would drive r into denormals (slow arithmetic on some rows only,
  // which looks like a load change) and then rz = 0, alpha = 0/0.
  double converged_rr = 1e-26 * scalars.bb;
  double norms[2] = {0.0, 0.0};  // r.z, r.r
  std::vector<double> q;
  bool removed = false;

  const double start = MPI_Wtime();
  for (int it = first_iteration; it < options.iterations; ++it) {
    check(XMPI_Monitor_si_init(), "XMPI_Monitor_si_init");
    q.assign(count, 0.0);
    double pq = 0.0;
    for (int i = 0; i < count; ++i) {
      double sum = 0.0;
      for (int k = ia[i]; k < ia[i + 1]; ++k) sum += a[k] * p[ja[k]];
      q[i] = sum;
      pq += p[displ + i] * sum;
    }
    MPI_Allreduce(MPI_IN_PLACE, &pq, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    const bool converged = scalars.rr <= converged_rr;
    const double alpha = converged ? 0.0 : scalars.rz / pq;
    norms[0] = norms[1] = 0.0;
    for (int i = 0; i < count; ++i) {
      x[i] += alpha * p[displ + i];
      r[i] -= alpha * q[i];
      norms[0] += r[i] * r[i] / d[i];
      norms[1] += r[i] * r[i];
    }
    MPI_Allreduce(MPI_IN_PLACE, norms, 2, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
    if (!converged) {
      const double beta = norms[0] / scalars.rz;
      scalars.rz = norms[0];
      scalars.rr = norms[1];
      for (int i = 0; i < count; ++i) p[displ + i] = r[i] / d[i] + beta * p[displ + i];
    }
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, p, counts.data(), displs.data(), MPI_DOUBLE,
                   XMPI_COMM_WORLD);
    check(XMPI_Eval_reconfig(rank, nprocs, it, options.iterations, &count, &displ, nullptr, nullptr,
                             nullptr),
          "XMPI_Eval_reconfig");
    if (XMPI_Get_process_status() == XMPI_REMOVED) {  // its rows went to the others
      removed = true;
      break;
    }
    const int old_nprocs = nprocs;
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
    current_partition(nprocs, n, counts, displs);
    // New processes compute the scalars with the others (see global_scalars);
    // after a removal every process still has them.
    if (nprocs > old_nprocs) {
      scalars = global_scalars(count, ia, a, r, d);
      converged_rr = 1e-26 * scalars.bb;
    }
  }
  // The registered buffers (flexmpi may have reallocated them: free the current ones).
  const auto free_buffers = [&] {
    for (void* buffer : {static_cast<void*>(ia), static_cast<void*>(ja), static_cast<void*>(a),
                         static_cast<void*>(x), static_cast<void*>(r), static_cast<void*>(d),
                         static_cast<void*>(p)})
      std::free(buffer);
  };
  if (removed) {
    free_buffers();
    MPI_Finalize();
    return 0;
  }
  double elapsed = MPI_Wtime() - start;
  MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, XMPI_COMM_WORLD);

  // True residual ||b - A x|| / ||b|| with x gathered whole, error against ones.
  std::vector<double> x_all(n);
  MPI_Allgatherv(x, count, MPI_DOUBLE, x_all.data(), counts.data(), displs.data(), MPI_DOUBLE,
                 XMPI_COMM_WORLD);
  double sums[2] = {0.0, 0.0};  // ||b - Ax||^2, sum of x
  double max_error = 0.0;
  for (int i = 0; i < count; ++i) {
    double ax = 0.0, b = 0.0;
    for (int k = ia[i]; k < ia[i + 1]; ++k) {
      ax += a[k] * x_all[ja[k]];
      b += a[k];
    }
    sums[0] += (b - ax) * (b - ax);
    sums[1] += x[i];
    max_error = std::max(max_error, std::abs(x[i] - 1.0));
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &max_error, 1, MPI_DOUBLE, MPI_MAX, XMPI_COMM_WORLD);

  long long iterations = 0;
  double computation = 0.0, cpu = 0.0, mpi = 0.0;
  check(XMPI_Get_monitor_totals(&iterations, nullptr, &cpu, &mpi, &computation),
        "XMPI_Get_monitor_totals");
  const double mine[5] = {static_cast<double>(count), static_cast<double>(ia[count]), computation,
                          cpu, mpi};
  std::vector<double> all(5 * static_cast<std::size_t>(nprocs));
  MPI_Gather(mine, 5, MPI_DOUBLE, all.data(), 5, MPI_DOUBLE, 0, XMPI_COMM_WORLD);
  if (rank == 0) {
    std::printf(
        "flexmpi-cg: n=%d nnz=%lld iterations=%d mode=%s procs=%d relative_residual=%.3e "
        "max_error=%.3e checksum=%.10f time=%.3f s\n",
        n, total_nnz, options.iterations, options.static_mode ? "static" : "balanced", nprocs,
        std::sqrt(sums[0] / scalars.bb), max_error, sums[1], elapsed);
    if (!options.quiet) {
      std::printf("%5s %10s %12s %14s %10s %10s\n", "rank", "rows", "nonzeros", "computation s",
                  "cpu s", "mpi s");
      for (int q_rank = 0; q_rank < nprocs; ++q_rank) {
        const double* v = &all[5 * static_cast<std::size_t>(q_rank)];
        std::printf("%5d %10.0f %12.0f %14.3f %10.3f %10.3f\n", q_rank, v[0], v[1], v[2], v[3],
                    v[4]);
      }
    }
  }
  free_buffers();
  MPI_Finalize();
  return 0;
}
