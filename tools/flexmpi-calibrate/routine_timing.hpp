// Timing of MPI routines for calibration and for bench/comm_model: the same
// calls and the same statistic on both sides, so that what the model is
// fitted to is what it is judged against.
//
// One sample is the slowest process's time of one call (Send/Recv: half of a
// ping-pong between ranks 0 and 1). Sizes are interleaved: every round visits
// every size once (warm-up call, then `reps` timed calls), in an order that
// rotates between rounds, so that a slow phase of the shared machine hits
// every size a little instead of one size a lot. The result per size is the
// median over rounds of each round's minimum (model/calibration.hpp).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "model/calibration.hpp"
#include "model/comm_model.hpp"

namespace flexmpi_timing {

using flexmpi::Routine;

/// Send and receive buffers for calls of up to `largest` bytes per block on
/// `processes` ranks, and the count/displacement arrays of the v-variants.
struct Buffers {
  Buffers(std::size_t largest, int processes)
      : send(largest * static_cast<std::size_t>(processes) + 64, 1),
        receive(send.size(), 0),
        counts(static_cast<std::size_t>(processes)),
        displs(static_cast<std::size_t>(processes)) {}
  std::vector<char> send, receive;
  std::vector<int> counts, displs;
};

/// Sets counts/displacements: `block` bytes for every rank, or (alltoallv)
/// `bytes` in total to the others, split evenly, nothing to oneself.
inline void set_counts(Buffers& b, Routine routine, int bytes, int rank, int p) {
  const int per = routine == Routine::alltoallv ? bytes / std::max(1, p - 1) : bytes;
  for (int i = 0; i < p; ++i) {
    b.counts[i] = routine == Routine::alltoallv && i == rank ? 0 : per;
    b.displs[i] = i * per;
  }
}

/// One call of `routine` with `bytes` in the model's convention
/// (comm_model.hpp) on `comm`; reductions on doubles with MPI_SUM.
inline void run_routine(Routine routine, int bytes, Buffers& b, MPI_Comm comm) {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  char* s = b.send.data();
  char* r = b.receive.data();
  const int doubles = std::max(1, bytes / 8);
  switch (routine) {
    case Routine::send_recv:
      if (rank == 0) {
        MPI_Send(s, bytes, MPI_BYTE, 1, 3, comm);
        MPI_Recv(r, bytes, MPI_BYTE, 1, 3, comm, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(r, bytes, MPI_BYTE, 0, 3, comm, MPI_STATUS_IGNORE);
        MPI_Send(s, bytes, MPI_BYTE, 0, 3, comm);
      }
      break;
    case Routine::barrier:
      MPI_Barrier(comm);
      break;
    case Routine::bcast:
      MPI_Bcast(s, bytes, MPI_BYTE, 0, comm);
      break;
    case Routine::scatter:
      MPI_Scatter(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, 0, comm);
      break;
    case Routine::gather:
      MPI_Gather(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, 0, comm);
      break;
    case Routine::allgather:
      MPI_Allgather(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, comm);
      break;
    case Routine::reduce:
      MPI_Reduce(s, r, doubles, MPI_DOUBLE, MPI_SUM, 0, comm);
      break;
    case Routine::allreduce:
      MPI_Allreduce(s, r, doubles, MPI_DOUBLE, MPI_SUM, comm);
      break;
    case Routine::alltoall:
      MPI_Alltoall(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, comm);
      break;
    case Routine::allgatherv:
    case Routine::alltoallv:
      set_counts(b, routine, bytes, rank, p);
      if (routine == Routine::allgatherv) {
        MPI_Allgatherv(s, bytes, MPI_BYTE, r, b.counts.data(), b.displs.data(), MPI_BYTE, comm);
      } else {
        MPI_Alltoallv(s, b.counts.data(), b.displs.data(), MPI_BYTE, r, b.counts.data(),
                      b.displs.data(), MPI_BYTE, comm);
      }
      break;
  }
}

/// Timed calls at each of `sizes` (see the top of this file): per size the
/// median of the round minima and the spread of those minima. Repetitions
/// shrink to a quarter (at least 2) from 1 MiB, where one call is long enough.
inline std::vector<flexmpi::RobustTime> time_sizes(Routine routine, const std::vector<int>& sizes,
                                                   int rounds, int reps, Buffers& b,
                                                   MPI_Comm comm) {
  const std::size_t n = sizes.size();
  std::vector<std::vector<std::vector<double>>> samples(n);
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < n; ++k) {
      // Rotated by 3 per round, reversed on odd rounds: every size meets every phase.
      const std::size_t j = (round % 2 == 0 ? k : n - 1 - k) + 3 * static_cast<std::size_t>(round);
      const std::size_t i = j % n;
      const int r = sizes[i] >= (1 << 20) ? std::max(2, reps / 4) : reps;
      std::vector<double> times;
      run_routine(routine, sizes[i], b, comm);  // warm-up: buffers and connections
      for (int rep = 0; rep < r; ++rep) {
        MPI_Barrier(comm);
        const double start = MPI_Wtime();
        run_routine(routine, sizes[i], b, comm);
        double t = MPI_Wtime() - start, slowest = 0.0;
        if (routine == Routine::send_recv) t /= 2;
        MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
        times.push_back(slowest);
      }
      samples[i].push_back(std::move(times));
    }
  }
  std::vector<flexmpi::RobustTime> result;
  for (const auto& rounds_of_size : samples) {
    result.push_back(flexmpi::median_of_minima(rounds_of_size));
  }
  return result;
}

}  // namespace flexmpi_timing
