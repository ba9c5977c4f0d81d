// The watchdog of flexmpi's collective calls: every call of flexmpi that is
// collective (XMPI_Eval_*, XMPI_Redistribute_data, spawn, removal, data
// hand-over, the exchange at the end of every sampling interval,
// XMPI_Checkpoint, XMPI_Resume, ULL_MPI_calibrate, DRUM's, the profile
// exchange of MPI_Finalize). A call made by only some ranks would block every
// rank forever, without a word: each such call begins with one arrival check
// that ends the job, naming who arrived where, once it has waited longer than
// the time limit (collective_time_limit below).
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
// Ranks that all arrived in different calls (other than the process
// manager's, which agree on the operation themselves) end the job at once:
// each would go on into collectives the others do not make. The go carries
// the lowest and highest iteration that arrived, so that a call whose
// iteration is an argument (XMPI_Eval_*) tells every rank when the ranks
// disagree, at no extra message.
//
// There is one watchdog per process, as there is one library communicator:
// its time limit and what it knows of newly spawned processes are the
// process's (set by the runtime and the process manager), so that every
// layer's collective, DRUM's included, uses the same ones.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
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
  checkpoint,    ///< XMPI_Checkpoint; the iteration is its next_it
  resume,        ///< XMPI_Resume on a restart
  checkpoint_poll,      ///< XMPI_Eval_*'s poll for a due checkpoint (FLEXMPI_CHECKPOINT)
  ull_calibrate,        ///< ULL_MPI_calibrate(ULL_MPI_END); the iteration is its argument
  drum_create,          ///< DRUM_createMachineModel
  drum_compute_powers,  ///< DRUM_computePowers; the iteration counts the model's earlier calls
  /// The profile exchange of MPI_Finalize. Waits without a time limit: ranks
  /// reach MPI_Finalize at very different times in programs that work (rank 0
  /// writing the results while the others are done); it is guarded so that a
  /// rank stuck in another flexmpi call is named.
  finalize,
};

/// Where a rank is: the call, and the iteration (the `it`, `next_it` or
/// `iteration` the program passed to XMPI_Eval_*, XMPI_Checkpoint and
/// ULL_MPI_calibrate; DRUM's count of calls; for the others, the iterations
/// this process monitored).
struct CollectivePosition {
  CollectiveCall call = CollectiveCall::eval_lbalance;
  std::int64_t iteration = 0;
};

/// "XMPI_Eval_lbalance", "XMPI_Spawn", ...
const char* call_name(CollectiveCall call);

/// "XMPI_Eval_lbalance at iteration 9", "XMPI_Spawn after 40 monitored iterations",
/// "XMPI_Checkpoint with next_it 10", "DRUM_computePowers (call 3)".
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

/// How many times the longest time between two successive guarded calls
/// the time limit is at least: a rank that is legitimately late (slower by a
/// whole interval, or once busy with its own output) is late by about one
/// such time, and ten leave room for a load that changes under the job.
inline constexpr double kPaceFactor = 10.0;

/// Sets the floor of the time limit, FLEXMPI_COLLECTIVE_TIMEOUT (0: no limit,
/// every call waits forever); the time between calls is measured from the
/// next call's end on.
void set_collective_timeout(double floor_seconds);

/// The time limit of the next guarded call: max(floor, kPaceFactor x the
/// longest time between the ends of two successive guarded calls so far);
/// 0 when the floor is 0.
/// The ends of a call are the same on every rank (the go), so the time
/// between two is the slowest rank's, and every rank has the same limit.
double collective_time_limit();

/// What the watchdog says of rank `rank` of `comm` that has not arrived or
/// arrived in another call ("was spawned after 5 monitored iterations and
/// has not called XMPI_Get_data"); "" when the usual words fit. Set by the
/// process manager, which knows the library's communicator.
using RankNote = std::function<std::string(MPI_Comm comm, int rank)>;
void set_rank_note(RankNote note);

/// Collective over `comm`: returns once every rank of `comm` has called it,
/// with the spread of their iterations (the same on every rank); past the
/// time limit (collective_time_limit, none for CollectiveCall::finalize)
/// prints who arrived where and aborts the job with kCollectiveTimeoutStatus.
ArrivalSpread await_every_rank(MPI_Comm comm, const CollectivePosition& here);

/// For a guarded call whose first collective is the duplication of a
/// program's communicator (DRUM's), which flexmpi sends no message on:
/// waits for `request`, that non-blocking collective over `comm`, and past
/// the time limit prints this rank's position and aborts the job.
void await_collective_request(MPI_Comm comm, MPI_Request& request, const CollectivePosition& here);

/// await_every_rank for a call whose iteration is the program's argument
/// (`argument`, what it means: "it", "the iteration just completed"): ranks
/// that passed different values are told, every one, before anything moves
/// (Error invalid_argument naming two ranks and their values).
void await_same_iteration(MPI_Comm comm, const CollectivePosition& here, const char* argument,
                          const char* meaning);

}  // namespace flexmpi
