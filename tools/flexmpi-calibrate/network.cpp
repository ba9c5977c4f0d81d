// flexmpi-calibrate's network phase (main.cpp): ping-pong links, gamma and
// the per-collective fits of the model (thesis 6.3.1).
#include <mpi.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "calibrate.hpp"
#include "flexmpi.h"
#include "model/calibration.hpp"
#include "routine_timing.hpp"
#include "util/statistics.hpp"

namespace flexmpi_calibrate {

namespace {

using flexmpi::Routine;

// How much is measured: sizes, rounds (interleaved) and repetitions per round.
struct Plan {
  std::vector<int> link_sizes;        // ping-pong: 8 B .. 8 MiB, x2
  std::vector<int> collective_sizes;  // collectives: 8 B .. 8 MiB, x2
  int rounds;                         // ping-pong: rounds of interleaved sizes
  int reps;                           // and timed calls per size and round
  int collective_rounds;              // collectives: fewer (9 routines x each communicator size)
  int collective_reps;
};

Plan network_plan(bool quick) {
  Plan plan{{}, {}, quick ? 3 : 15, quick ? 2 : 10, quick ? 3 : 9, quick ? 2 : 5};
  for (int n = 8; n <= (8 << 20); n *= quick ? 4 : 2) plan.link_sizes.push_back(n);
  for (int n = 8; n <= (8 << 20); n *= quick ? 16 : 2) plan.collective_sizes.push_back(n);
  return plan;
}

// Where the copy changes regime: the data caches (a message larger than a
// cache is copied from the next level). The eager/rendezvous switch of the
// transport is found by the band split (fit_link_bands), as any other break.
std::vector<double> cache_edges() {
  std::vector<double> edges;
  for (int name : {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE}) {
    const long bytes = sysconf(name);
    if (bytes > 0) edges.push_back(static_cast<double>(bytes));
  }
  return edges;
}

// A barrier that sleeps while it waits: ranks left out of a measurement on a
// sub-communicator must not take the cores of the ranks being measured (an
// MPI barrier polls, even with mpi_yield_when_idle).
void sleeping_barrier(MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(comm, &request);
  for (int done = 0; MPI_Test(&request, &done, MPI_STATUS_IGNORE), !done;) usleep(200);
}

std::vector<double> as_doubles(const std::vector<int>& sizes) {
  return {sizes.begin(), sizes.end()};
}

// One-way times between ranks 0 and `peer` of XMPI_COMM_WORLD at the plan's
// sizes, fitted as one Hockney pair (alpha = the smallest size's time, beta by
// relative least squares over all: the thesis's model, kept for comparison)
// and as message-size bands.
flexmpi::LinkParameters calibrate_link(int peer, const Plan& plan) {
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(XMPI_COMM_WORLD, rank == 0 || rank == peer ? 0 : MPI_UNDEFINED, rank, &pair);
  std::vector<double> seconds(plan.link_sizes.size());
  if (pair != MPI_COMM_NULL) {
    flexmpi_timing::Buffers buffers(static_cast<std::size_t>(plan.link_sizes.back()), 2);
    const auto times = flexmpi_timing::time_sizes(Routine::send_recv, plan.link_sizes, plan.rounds,
                                                  plan.reps, buffers, pair);
    for (std::size_t i = 0; i < times.size(); ++i) seconds[i] = times[i].seconds;
    MPI_Comm_free(&pair);
  }
  sleeping_barrier(XMPI_COMM_WORLD);
  MPI_Bcast(seconds.data(), int(seconds.size()), MPI_DOUBLE, 0, XMPI_COMM_WORLD);
  const std::vector<double> bytes = as_doubles(plan.link_sizes);
  const flexmpi::LinkBand one = flexmpi::fit_hockney(bytes, seconds);
  flexmpi::LinkParameters link{seconds.front(), one.beta, {}};
  link.bands = flexmpi::fit_link_bands(bytes, seconds, cache_edges(), 0.03);
  for (const flexmpi::LinkBand& band : link.bands) {
    progress("[network]   band up to %9.0f B: alpha %7.3f us, beta %.4f ns/B", band.up_to,
             1e6 * band.alpha, 1e9 * band.beta);
  }
  return link;
}

double measure_gamma(bool quick) {
  const int n = 1 << 17;  // 1 MiB of doubles
  std::vector<double> in(n, 1.0), inout(n, 2.0);
  std::vector<std::vector<double>> rounds;
  for (int r = 0; r < (quick ? 3 : 7); ++r) {
    rounds.emplace_back();
    for (int rep = 0; rep < 5; ++rep) {
      const double start = MPI_Wtime();
      MPI_Reduce_local(in.data(), inout.data(), n, MPI_DOUBLE, MPI_SUM);
      rounds.back().push_back((MPI_Wtime() - start) / (n * sizeof(double)));
    }
  }
  double gamma = flexmpi::median_of_minima(rounds).seconds, slowest = 0.0;
  MPI_Allreduce(&gamma, &slowest, 1, MPI_DOUBLE, MPI_MAX, XMPI_COMM_WORLD);
  return slowest;
}

// The remote peer of rank 0 (first rank on another host), or -1.
int remote_peer() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> names(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, XMPI_COMM_WORLD);
  for (int r = 1; r < size; ++r) {
    if (std::strcmp(&names[r * MPI_MAX_PROCESSOR_NAME], names.data()) != 0) return r;
  }
  return -1;
}

// Per-collective fits of the linked library's model on the first k ranks,
// for every k from 2 to the processes launched (a fit per communicator size).
void calibrate_collectives(flexmpi::MachineProfile& profile, const Plan& plan,
                           flexmpi::MpiLibrary library) {
  const std::vector<Routine> routines = {
      Routine::bcast,     Routine::scatter,    Routine::gather,
      Routine::allgather, Routine::allgatherv, Routine::reduce,
      Routine::allreduce, Routine::alltoall,   Routine::alltoallv};
  const flexmpi::PiecewiseLink link = profile.link(false);
  const std::vector<double> bytes = as_doubles(plan.collective_sizes);
  profile.collectives.clear();
  for (int k = 2; k <= size; ++k) {
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_split(XMPI_COMM_WORLD, rank < k ? 0 : MPI_UNDEFINED, rank, &comm);
    progress("[network] collectives on %d processes, %zu sizes 8 B .. %d B", k, bytes.size(),
             plan.collective_sizes.back());
    for (Routine routine : routines) {
      std::vector<double> seconds(bytes.size());
      if (comm != MPI_COMM_NULL) {
        flexmpi_timing::Buffers buffers(static_cast<std::size_t>(plan.collective_sizes.back()), k);
        const auto times =
            flexmpi_timing::time_sizes(routine, plan.collective_sizes, plan.collective_rounds,
                                       plan.collective_reps, buffers, comm);
        for (std::size_t i = 0; i < times.size(); ++i) seconds[i] = times[i].seconds;
      }
      sleeping_barrier(XMPI_COMM_WORLD);
      MPI_Bcast(seconds.data(), int(seconds.size()), MPI_DOUBLE, 0, XMPI_COMM_WORLD);
      profile.collectives[routine].push_back(
          flexmpi::fit_collective(library, routine, k, bytes, seconds, link));
    }
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
}
}  // namespace

void calibrate_network(flexmpi::MachineProfile& profile, const Options& options,
                       flexmpi::MpiLibrary library) {
  const Plan plan = network_plan(options.quick);
  if (!options.link_from.empty()) {
    // The links of a 2-process calibration: ranks 0 and 1 alone on the cores
    // (with more ranks launched on 2 cores, even sleeping ones slow the ping-pong).
    const flexmpi::MachineProfile links = flexmpi::load_machine_profile(options.link_from);
    profile.intra_node = links.intra_node;
    profile.inter_node = links.inter_node;
    profile.inter_node_measured = links.inter_node_measured;
    profile.gamma = links.gamma;
    progress("[network] links and gamma from %s", options.link_from.c_str());
    calibrate_collectives(profile, plan, library);
    return;
  }
  progress("[network] ping-pong rank 0 <-> 1, %zu sizes 8 B .. %d B, %d rounds x %d",
           plan.link_sizes.size(), plan.link_sizes.back(), plan.rounds, plan.reps);
  profile.intra_node = calibrate_link(1, plan);
  const int remote = remote_peer();
  if (remote > 0) {
    progress("[network] ping-pong rank 0 <-> %d (another host)", remote);
    profile.inter_node = calibrate_link(remote, plan);
    profile.inter_node_measured = true;
  } else {
    progress("[network]   one host: inter_node = intra_node (not measured)");
    profile.inter_node = profile.intra_node;
    profile.inter_node_measured = false;
  }
  profile.gamma = measure_gamma(options.quick);
  progress("[network]   gamma %.3g ns/B (MPI_Reduce_local, MPI_SUM of doubles)",
           1e9 * profile.gamma);

  calibrate_collectives(profile, plan, library);
}

}  // namespace flexmpi_calibrate
