// A C++ application on the installed flexmpi: the C++ API (flexmpi/flexmpi.hpp)
// with an RAII iteration scope. Usage: consumer_cxx [--iterations N]
#include <flexmpi.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <flexmpi/flexmpi.hpp>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int iterations = 20;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::atoi(argv[i + 1]);
  }
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  try {
    const flexmpi::Partition part = flexmpi::get_wsize(rank, nprocs, 1000);
    std::vector<double> x(static_cast<std::size_t>(part.count), 1.0);
    double sum = 0.0;
    for (int it = 0; it < iterations; ++it) {
      flexmpi::IterationScope scope;
      double local = 0.0;
      for (double& value : x) local += (value = 0.5 * value + 0.25);
      MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
      scope.finish();
    }
    if (rank == 0) std::printf("consumer_cxx: %d ranks, sum %.3f\n", nprocs, sum);
  } catch (const flexmpi::Error& e) {
    std::fprintf(stderr, "consumer_cxx: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}
