// bench-comm-model: predicted vs measured time of MPI routines (thesis 6.3.2,
// Figs. 6.9-6.12): Send/Recv, Bcast, Gather, Allreduce and Alltoallv on
// XMPI_COMM_WORLD.
//
//   mpiexec -n P bench-comm-model [--profile FILE] [--sizes grid|offset]
//                                 [--rounds R] [--reps K] > results.csv
//
// Sizes: "grid" 8 B .. 8 MiB in x4 steps (the sizes flexmpi-calibrate fits the
// collectives at), "offset" 12 B .. 3 MiB in x4 steps (between the calibrated
// sizes: what interpolation is worth). Measured exactly as calibration does
// (tools/flexmpi-calibrate/routine_timing.hpp: interleaved sizes, R rounds of
// K calls, median of the per-round minima of the slowest process); `spread`
// is (largest - smallest round minimum) / measured, the noise. Predicted by
// the model of the linked library with the machine profile (FILE, else the
// defaults): "hockney" with one alpha/beta/gamma and no fit (the thesis's
// model), "predicted" with the message-size bands and the per-collective fits.
// CSV on stdout, rank 0 only:
//   library,processes,routine,bytes,algorithm,measured,spread,hockney,predicted
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "flexmpi.h"
#include "model/comm_model.hpp"
#include "model/machine_profile.hpp"
#include "routine_timing.hpp"

namespace {

using flexmpi::Routine;

struct Options {
  std::string profile;
  std::string sizes = "grid";
  int rounds = 15;
  int reps = 10;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const bool value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--profile") && value) {
      o.profile = argv[++i];
    } else if (!std::strcmp(argv[i], "--sizes") && value) {
      o.sizes = argv[++i];
    } else if (!std::strcmp(argv[i], "--rounds") && value) {
      o.rounds = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--reps") && value) {
      o.reps = std::atoi(argv[++i]);
    } else {
      return false;
    }
  }
  return (o.sizes == "grid" || o.sizes == "offset") && o.rounds > 0 && o.reps > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: %s [--profile FILE] [--sizes grid|offset] [--rounds R>0] [--reps K>0]\n",
                 argv[0]);
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  flexmpi::MachineProfile profile;
  try {
    profile = options.profile.empty() ? flexmpi::MachineProfile::defaults()
                                      : flexmpi::load_machine_profile(options.profile);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  const flexmpi::MpiLibrary library = flexmpi::detect_mpi_library(version);
  const flexmpi::Hockney h = profile.network(false);
  const flexmpi::PiecewiseLink link = profile.link(false);
  const flexmpi::CollectiveFits fits = profile.fits_for(library);

  std::vector<int> sizes;
  const int first = options.sizes == "grid" ? 8 : 12,
            largest = options.sizes == "grid" ? 8 << 20 : 3 << 20;
  for (int n = first; n <= largest; n *= 4) sizes.push_back(n);
  flexmpi_timing::Buffers buffers(static_cast<std::size_t>(largest), size);
  if (rank == 0) {
    std::printf("library,processes,routine,bytes,algorithm,measured,spread,hockney,predicted\n");
  }
  for (Routine routine : {Routine::send_recv, Routine::bcast, Routine::gather, Routine::allreduce,
                          Routine::alltoallv}) {
    const auto measured = flexmpi_timing::time_sizes(routine, sizes, options.rounds, options.reps,
                                                     buffers, XMPI_COMM_WORLD);
    const int p = routine == Routine::send_recv ? 2 : size;
    for (std::size_t i = 0; i < sizes.size() && rank == 0; ++i) {
      const auto cost = flexmpi::collective_cost(library, routine, sizes[i], p);
      std::printf("%s,%d,%s,%d,%s,%.9g,%.4f,%.9g,%.9g\n",
                  std::string(flexmpi::library_name(library)).c_str(), size,
                  std::string(flexmpi::routine_name(routine)).c_str(), sizes[i],
                  std::string(cost.algorithm).c_str(), measured[i].seconds, measured[i].spread,
                  cost.terms.seconds(h),
                  flexmpi::call_seconds(library, routine, sizes[i], p, link, fits));
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
