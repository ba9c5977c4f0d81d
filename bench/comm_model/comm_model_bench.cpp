// bench-comm-model: predicted vs measured time of MPI routines (thesis 6.3.2,
// Figs. 6.9-6.12): Send/Recv, Bcast, Gather, Allreduce and Alltoallv for
// message sizes 8 B .. 8 MiB on XMPI_COMM_WORLD.
//
//   mpiexec -n P bench-comm-model [--profile FILE] [--reps R] > results.csv
//
// The prediction is the model of the linked library (detected from
// MPI_Get_library_version) with the machine profile (FILE, else the
// documented defaults): once with alpha, beta, gamma only ("hockney") and
// once with the profile's per-collective fits ("fitted"). The measured time
// is the median over R repetitions of the slowest process (Send/Recv: half a
// ping-pong round trip between ranks 0 and 1). CSV on stdout, rank 0 only:
//   library,processes,routine,bytes,algorithm,measured,hockney,fitted
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "flexmpi.h"
#include "model/comm_model.hpp"
#include "model/machine_profile.hpp"
#include "util/statistics.hpp"

namespace {

using flexmpi::Routine;

int rank_ = 0, size_ = 1;

double slowest(double t) {
  double max = 0.0;
  MPI_Allreduce(&t, &max, 1, MPI_DOUBLE, MPI_MAX, XMPI_COMM_WORLD);
  return max;
}

double measure(Routine routine, int bytes, int reps, std::vector<char>& a, std::vector<char>& b) {
  std::vector<int> counts(size_), displs(size_);
  const int per = bytes / std::max(1, size_ - 1);  // alltoallv: `bytes` in total to the others
  for (int i = 0; i < size_; ++i) {
    counts[i] = i == rank_ ? 0 : per;
    displs[i] = i * per;
  }
  std::vector<double> samples;
  for (int r = 0; r <= reps; ++r) {  // the first is a warm-up
    MPI_Barrier(XMPI_COMM_WORLD);
    const double start = MPI_Wtime();
    switch (routine) {
      case Routine::send_recv:
        if (rank_ == 0) {
          MPI_Send(a.data(), bytes, MPI_BYTE, 1, 3, XMPI_COMM_WORLD);
          MPI_Recv(b.data(), bytes, MPI_BYTE, 1, 3, XMPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank_ == 1) {
          MPI_Recv(b.data(), bytes, MPI_BYTE, 0, 3, XMPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(a.data(), bytes, MPI_BYTE, 0, 3, XMPI_COMM_WORLD);
        }
        break;
      case Routine::bcast:
        MPI_Bcast(a.data(), bytes, MPI_BYTE, 0, XMPI_COMM_WORLD);
        break;
      case Routine::gather:
        MPI_Gather(a.data(), bytes, MPI_BYTE, b.data(), bytes, MPI_BYTE, 0, XMPI_COMM_WORLD);
        break;
      case Routine::allreduce:
        MPI_Allreduce(a.data(), b.data(), std::max(1, bytes / 8), MPI_DOUBLE, MPI_SUM,
                      XMPI_COMM_WORLD);
        break;
      case Routine::alltoallv:
        MPI_Alltoallv(a.data(), counts.data(), displs.data(), MPI_BYTE, b.data(), counts.data(),
                      displs.data(), MPI_BYTE, XMPI_COMM_WORLD);
        break;
      default:
        break;
    }
    double t = MPI_Wtime() - start;
    if (routine == Routine::send_recv) t /= 2;
    t = slowest(t);
    if (r > 0) samples.push_back(t);
  }
  return flexmpi::median(samples);
}

}  // namespace

int main(int argc, char** argv) {
  std::string profile_path;
  int reps = 30;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--profile") && i + 1 < argc) {
      profile_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--profile FILE] [--reps R]\n", argv[0]);
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank_);
  MPI_Comm_size(XMPI_COMM_WORLD, &size_);
  flexmpi::MachineProfile profile;
  try {
    profile = profile_path.empty() ? flexmpi::MachineProfile::defaults()
                                   : flexmpi::load_machine_profile(profile_path);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  const flexmpi::MpiLibrary library = flexmpi::detect_mpi_library(version);
  const flexmpi::Hockney h = profile.network(false);
  const flexmpi::CollectiveFits fits = profile.fits_for(library);

  const int largest = 8 << 20;
  std::vector<char> a(static_cast<std::size_t>(largest) * size_, 1);  // alltoallv displacements
  std::vector<char> b(static_cast<std::size_t>(largest) * size_, 0);
  if (rank_ == 0)
    std::printf("library,processes,routine,bytes,algorithm,measured,hockney,fitted\n");
  for (Routine routine : {Routine::send_recv, Routine::bcast, Routine::gather, Routine::allreduce,
                          Routine::alltoallv}) {
    for (int bytes = 8; bytes <= largest; bytes *= 4) {
      const int r = bytes >= (1 << 20) ? std::max(5, reps / 5) : reps;
      const double measured = measure(routine, bytes, r, a, b);
      const int p = routine == Routine::send_recv ? 2 : size_;
      const auto cost = flexmpi::collective_cost(library, routine, bytes, p);
      const double hockney = cost.terms.seconds(h);
      const double fitted = flexmpi::call_seconds(library, routine, bytes, p, h, fits);
      if (rank_ == 0) {
        std::printf("%s,%d,%s,%d,%s,%.9g,%.9g,%.9g\n",
                    std::string(flexmpi::library_name(library)).c_str(), size_,
                    std::string(flexmpi::routine_name(routine)).c_str(), bytes,
                    std::string(cost.algorithm).c_str(), measured, hockney, fitted);
        std::fflush(stdout);
      }
    }
  }
  MPI_Finalize();
  return 0;
}
