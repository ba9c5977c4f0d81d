// Two threads of each rank blocked in MPI at the same time (MPI_THREAD_MULTIPLE):
// the rank's MPI time is the time at least one thread was inside MPI, so
// about the wait, not twice it, never above the wall time, and the
// computation is never negative; the per-operation rows keep each call's
// own time (docs/reference/pmpi.md). Runs on 2 processes; prints
// "threads MPI time ok" on success.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "core/runtime.hpp"
#include "flexmpi.h"

namespace {

constexpr double kWait = 0.3;  // how long the receiving threads wait for the message

bool check(bool condition, int rank, const char* what, double value, double bound) {
  if (!condition)
    std::fprintf(stderr, "rank %d: %s: %.4f against %.4f\n", rank, what, value, bound);
  return condition;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  if (provided != MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "rank %d: MPI_THREAD_MULTIPLE not provided\n", rank);
    MPI_Abort(XMPI_COMM_WORLD, 1);
  }
  const int peer = 1 - rank;
  const flexmpi::CommProfile& profile = flexmpi::Runtime::get().comm_profile();

  MPI_Barrier(XMPI_COMM_WORLD);
  XMPI_Monitor_iter_begin(nullptr);
  const double mpi_start = profile.mpi_seconds();
  const double rows_start = profile.totals().seconds;
  const double wall_start = MPI_Wtime();
  // Two threads wait in MPI_Recv while this one sleeps, then sends to the peer's
  // two; each thread notes when its call began and ended.
  double began[2] = {}, ended[2] = {};
  auto receive = [&](int tag) {
    int value = 0;
    began[tag] = MPI_Wtime();
    MPI_Recv(&value, 1, MPI_INT, peer, tag, XMPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ended[tag] = MPI_Wtime();
  };
  std::thread first(receive, 0), second(receive, 1);
  std::this_thread::sleep_for(std::chrono::duration<double>(kWait));
  int value = rank;
  MPI_Send(&value, 1, MPI_INT, peer, 0, XMPI_COMM_WORLD);
  MPI_Send(&value, 1, MPI_INT, peer, 1, XMPI_COMM_WORLD);
  first.join();
  second.join();
  const double wall = MPI_Wtime() - wall_start;
  const double mpi = profile.mpi_seconds() - mpi_start;
  const double rows = profile.totals().seconds - rows_start;
  XMPI_Monitor_iter_end(nullptr);

  // The receives' union, as the threads saw it (a thread the loaded machine
  // starts late waits less); the two sends fall inside it.
  const double both = (ended[0] - began[0]) + (ended[1] - began[1]);
  const double overlap = std::max(0.0, std::min(ended[0], ended[1]) - std::max(began[0], began[1]));
  const double union_seconds = both - overlap;
  constexpr double kSlack = 0.02;  // the timers' and the sends' share
  bool ok = check(mpi <= wall, rank, "MPI time above the wall time", mpi, wall);
  ok &= check(mpi >= union_seconds - kSlack, rank, "MPI time below the receives' union", mpi,
              union_seconds);
  ok &= check(mpi <= union_seconds + kSlack, rank, "MPI time counts the threads' overlap twice",
              mpi, union_seconds);
  ok &= check(overlap >= 0.5 * kWait, rank, "the receives barely overlapped", overlap, kWait);
  ok &= check(rows >= both - kSlack, rank, "the rows' time below the calls' sum", rows, both);
  const auto& report = flexmpi::Runtime::get().last_interval();
  if (!report || report->processes.size() != 2) {
    std::fprintf(stderr, "rank %d: no interval of 2 processes reported\n", rank);
    MPI_Abort(XMPI_COMM_WORLD, 1);
  }
  const flexmpi::ProcessInterval& mine = report->processes[static_cast<std::size_t>(rank)];
  ok &= check(mine.mpi <= mine.wall, rank, "interval MPI time above its wall time", mine.mpi,
              mine.wall);
  ok &= check(mine.computation() >= 0.0, rank, "interval computation negative", mine.computation(),
              0.0);
  ok &= check(mine.mpi >= union_seconds - kSlack, rank, "interval MPI time below the union",
              mine.mpi, union_seconds);

  int all_ok = ok ? 1 : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, XMPI_COMM_WORLD);
  if (rank == 0 && all_ok == 1) std::printf("threads MPI time ok\n");
  MPI_Finalize();
  return all_ok == 1 ? 0 : 1;
}
