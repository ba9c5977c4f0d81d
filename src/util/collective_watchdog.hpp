// The watchdog of flexmpi's collective calls (XMPI_Eval_*, XMPI_Redistribute_data,
// spawn, removal, data hand-over, the exchange at the end of every sampling
// interval). A call made by only some ranks would block every
// rank forever, without a word: each such call begins with an arrival check
// that ends the job, naming who arrived where, once it has waited
// FLEXMPI_COLLECTIVE_TIMEOUT seconds.
//
// The protocol (point to point on the library's communicator, so that rank 0
// knows exactly who arrived, which an unfinished collective cannot say):
//   - every other rank sends rank 0 its arrival (call, iteration) and waits for
//     rank 0's go;
//   - rank 0 receives the arrivals and, once it has them all, sends the go.
// On the deadline, a rank other than 0 asks rank 0 to report: if rank 0 waits
// in a flexmpi call too, it prints the table of arrivals and aborts the job;
// if it does not answer within a grace period, the asking rank says what it
// knows (its own call, and that rank 0 did not arrive) and aborts the job.
// Which call each rank is in is only reported: a mismatch of calls is the
// call's own check (the process manager's agreement, for instance). The go
// carries the lowest and highest iteration that arrived, so that a call
// whose iteration is an argument (XMPI_Eval_*) tells every rank when the
// ranks disagree, at no extra message.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

namespace flexmpi {

/// The collective calls the watchdog guards.
enum class CollectiveCall : std::int64_t {
  eval_lbalance = 1,
  eval_reconfig,
  redistribute_data,
  spawn,
  remove,
  hand_over_data,  ///< XMPI_Send_data on the running ranks, XMPI_Get_data on the new ones
  reconfigure,
  interval_end,  ///< the exchange of XMPI_Monitor_iter_end / si_init at a sampling interval's end
};

/// Where a rank is: the call, and the iteration (for XMPI_Eval_*, the `it`
/// the program passed; for the others, the iterations this process monitored).
struct CollectivePosition {
  CollectiveCall call = CollectiveCall::eval_lbalance;
  std::int64_t iteration = 0;
};

/// "XMPI_Eval_lbalance", "XMPI_Spawn", ...
const char* call_name(CollectiveCall call);

/// "XMPI_Eval_lbalance at iteration 9", "XMPI_Spawn after 40 monitored iterations".
std::string describe(const CollectivePosition& position);

/// The iterations the ranks arrived with: the lowest and the highest, and a
/// rank at each (the same everywhere when the ranks agree).
struct ArrivalSpread {
  std::int64_t lowest = 0;
  int lowest_rank = 0;
  std::int64_t highest = 0;
  int highest_rank = 0;
  [[nodiscard]] bool same() const { return lowest == highest; }
};

/// The exit status of a job the watchdog ended.
inline constexpr int kCollectiveTimeoutStatus = 4;

/// Collective over `comm`: returns once every rank of `comm` has called it,
/// with the spread of their iterations (the same on every rank); after
/// `timeout_seconds` (0: wait forever) prints who arrived and aborts the job
/// with kCollectiveTimeoutStatus.
ArrivalSpread await_every_rank(MPI_Comm comm, const CollectivePosition& here,
                               double timeout_seconds);

}  // namespace flexmpi
