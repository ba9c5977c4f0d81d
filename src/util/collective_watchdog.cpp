#include "util/collective_watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"
#include "util/clock.hpp"

namespace flexmpi {
namespace {

constexpr int kArrivalTag = 4311;  // a rank's position, to rank 0
constexpr int kGoTag = 4312;       // rank 0: every rank arrived
constexpr int kReportTag = 4313;   // a rank that waited too long, to rank 0

using Arrival = std::array<std::int64_t, 2>;  // call, iteration
using Go = std::array<std::int64_t, 4>;       // ArrivalSpread: lowest, its rank, highest, its rank

// What usually brings ranks to different calls at a sampling interval's end.
constexpr const char* kIntervalEndCause =
    " (usually ranks that monitor different numbers of iterations: a program that opens "
    "iterations on some ranks only, or on two threads at once)";
constexpr const char* kSameCalls = "every rank must make the same flexmpi calls in the same order";

// The process's watchdog settings and the time between its guarded calls
// (under `lock`: two threads may be in flexmpi calls at once).
struct Pace {
  std::mutex lock;
  double floor = 0.0;            // FLEXMPI_COLLECTIVE_TIMEOUT; 0: no limit
  double last_end = -1.0;        // wall time of the last guarded call's end; < 0: none yet
  double longest_between = 0.0;  // the longest time between two ends so far
  RankNote note;
};

Pace& pace() {
  static Pace state;
  return state;
}

// A guarded call ended on every rank: the time since the last one is what
// a rank may legitimately be late by. The program's start up to the first
// call is not counted: it says nothing of the loop's pace.
void note_call_end() {
  Pace& p = pace();
  const double now = wall_seconds();
  const std::lock_guard<std::mutex> held(p.lock);
  if (p.last_end >= 0.0) p.longest_between = std::max(p.longest_between, now - p.last_end);
  p.last_end = now;
}

// Polls `done` until it holds (true) or `deadline` passes (false). The first
// millisecond spins: in a run that works, the others are about to arrive and
// a sleep would delay every interval. Later polls sleep, 100 us and after a
// second 1 ms, so that a rank waiting for a slow one does not take its core.
bool poll_until(double deadline, const std::function<bool()>& done) {
  const double start = wall_seconds();
  while (!done()) {
    const double now = wall_seconds();
    if (now >= deadline) return false;
    const double waited = now - start;
    if (waited < 1e-3) continue;
    const timespec pause{0, waited < 1.0 ? 100'000L : 1'000'000L};
    nanosleep(&pause, nullptr);
  }
  return true;
}

// "rank 2", "ranks 0-3, 5". Appended piece by piece: GCC 12 at -O3 reports a
// false -Wrestrict on a literal + std::string (GCC bug 105329).
std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank" : "ranks";
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t last = i;
    while (last + 1 < ranks.size() && ranks[last + 1] == ranks[last] + 1) ++last;
    text += i == 0 ? " " : ", ";
    text += std::to_string(ranks[i]);
    if (last > i) {
      text += '-';
      text += std::to_string(ranks[last]);
    }
    i = last + 1;
  }
  return text;
}

[[noreturn]] void abort_job(MPI_Comm comm, const std::string& message) {
  std::fprintf(stderr, "flexmpi: %s; aborting the job\n", message.c_str());
  std::fflush(stderr);
  PMPI_Abort(comm, kCollectiveTimeoutStatus);
  std::_Exit(kCollectiveTimeoutStatus);  // PMPI_Abort does not return; should it, end here
}

std::string waited_text(double limit) {
  Pace& p = pace();
  const std::lock_guard<std::mutex> held(p.lock);
  if (limit <= p.floor)
    return fmt::format("waited more than {:g} s (FLEXMPI_COLLECTIVE_TIMEOUT)", limit);
  return fmt::format(
      "waited more than {:.3g} s ({:g} x the longest {:.3g} s between two of flexmpi's collective "
      "calls so far; FLEXMPI_COLLECTIVE_TIMEOUT={:g})",
      limit, kPaceFactor, p.longest_between, p.floor);
}

// The process manager's calls agree on the operation themselves (an error
// on every rank); any other pair of different calls would go on into
// collectives that do not match.
bool agreeing_calls(const std::vector<Arrival>& arrivals) {
  const auto managed = [](std::int64_t call) {
    return call >= static_cast<std::int64_t>(CollectiveCall::spawn) &&
           call <= static_cast<std::int64_t>(CollectiveCall::reconfigure);
  };
  for (const Arrival& arrival : arrivals) {
    const bool same = arrival[0] == arrivals[0][0];
    if (!same && !(managed(arrival[0]) && managed(arrivals[0][0]))) return false;
  }
  return true;
}

// Rank 0's table: the arrived ranks grouped by position, the missing ones,
// then what the process manager knows of ranks (a newcomer that has not
// called XMPI_Get_data), which says more than "not arrived".
std::string arrival_table(MPI_Comm comm, const std::vector<Arrival>& arrivals,
                          const std::vector<bool>& arrived) {
  std::map<Arrival, std::vector<int>> groups;
  std::vector<int> missing;
  std::string notes;
  for (std::size_t r = 0; r < arrived.size(); ++r) {
    const int rank = static_cast<int>(r);
    // A newcomer in XMPI_Get_data has done its part.
    const bool handing_over =
        arrived[r] && arrivals[r][0] == static_cast<std::int64_t>(CollectiveCall::hand_over_data);
    const std::string note = pace().note && !handing_over ? pace().note(comm, rank) : std::string();
    if (!note.empty()) notes += fmt::format("; rank {} {}", rank, note);
    if (arrived[r]) {
      groups[arrivals[r]].push_back(rank);
    } else if (note.empty()) {
      missing.push_back(rank);
    }
  }
  std::string text;
  bool interval_end = false;
  for (const auto& [arrival, ranks] : groups) {
    const CollectivePosition position{static_cast<CollectiveCall>(arrival[0]), arrival[1]};
    interval_end = interval_end || position.call == CollectiveCall::interval_end;
    text += (text.empty() ? "" : "; ") + rank_list(ranks) + " in " + describe(position);
  }
  if (!missing.empty()) {
    text +=
        "; " + rank_list(missing) + " not arrived (elsewhere in the program: " + kSameCalls + ")";
  }
  text += notes;
  return interval_end ? text + kIntervalEndCause : text;
}

// The lowest and highest iteration of the arrivals, and the first rank at each.
Go spread_of(const std::vector<Arrival>& arrivals) {
  Go go = {arrivals[0][1], 0, arrivals[0][1], 0};
  for (std::size_t r = 1; r < arrivals.size(); ++r) {
    const std::int64_t iteration = arrivals[r][1];
    if (iteration < go[0]) go = {iteration, static_cast<std::int64_t>(r), go[2], go[3]};
    if (iteration > go[2]) go = {go[0], go[1], iteration, static_cast<std::int64_t>(r)};
  }
  return go;
}

Go await_at_root(MPI_Comm comm, int size, const CollectivePosition& here, double deadline,
                 double timeout_seconds) {
  std::vector<Arrival> arrivals(static_cast<std::size_t>(size));
  arrivals[0] = {static_cast<std::int64_t>(here.call), here.iteration};
  std::vector<bool> arrived(static_cast<std::size_t>(size), false);
  arrived[0] = true;
  std::vector<MPI_Request> requests(static_cast<std::size_t>(size - 1));
  for (int r = 1; r < size; ++r) {
    check_mpi(PMPI_Irecv(arrivals[static_cast<std::size_t>(r)].data(), 2, MPI_INT64_T, r,
                         kArrivalTag, comm, &requests[static_cast<std::size_t>(r - 1)]),
              "MPI_Irecv (collective watchdog)");
  }
  int remaining = size - 1;
  bool asked = false;
  std::vector<int> completed(requests.size());
  const bool everyone = poll_until(deadline, [&] {
    int count = 0;
    check_mpi(PMPI_Testsome(static_cast<int>(requests.size()), requests.data(), &count,
                            completed.data(), MPI_STATUSES_IGNORE),
              "MPI_Testsome (collective watchdog)");
    for (int i = 0; i < std::max(count, 0); ++i)
      arrived[static_cast<std::size_t>(completed[i] + 1)] = true;
    if (count != MPI_UNDEFINED) remaining -= count;
    if (remaining == 0) return true;
    int flag = 0;
    check_mpi(PMPI_Iprobe(MPI_ANY_SOURCE, kReportTag, comm, &flag, MPI_STATUS_IGNORE),
              "MPI_Iprobe (collective watchdog)");
    asked = flag != 0;
    return asked;
  });
  if (!everyone || asked) {
    abort_job(comm, "a flexmpi collective call " + waited_text(timeout_seconds) + ": " +
                        arrival_table(comm, arrivals, arrived));
  }
  if (!agreeing_calls(arrivals)) {
    abort_job(comm, std::string("the ranks are in different flexmpi collective calls (") +
                        kSameCalls + "): " + arrival_table(comm, arrivals, arrived));
  }
  const Go spread = spread_of(arrivals);
  std::vector<MPI_Request> go(requests.size());
  for (int r = 1; r < size; ++r) {
    check_mpi(PMPI_Isend(spread.data(), 4, MPI_INT64_T, r, kGoTag, comm,
                         &go[static_cast<std::size_t>(r - 1)]),
              "MPI_Isend (collective watchdog)");
  }
  check_mpi(PMPI_Waitall(static_cast<int>(go.size()), go.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall (collective watchdog)");
  return spread;
}

Go await_go(MPI_Comm comm, int rank, const CollectivePosition& here, double deadline,
            double timeout_seconds) {
  const Arrival arrival = {static_cast<std::int64_t>(here.call), here.iteration};
  MPI_Request sent = MPI_REQUEST_NULL, go = MPI_REQUEST_NULL;
  check_mpi(PMPI_Isend(arrival.data(), 2, MPI_INT64_T, 0, kArrivalTag, comm, &sent),
            "MPI_Isend (collective watchdog)");
  Go spread{};
  check_mpi(PMPI_Irecv(spread.data(), 4, MPI_INT64_T, 0, kGoTag, comm, &go),
            "MPI_Irecv (collective watchdog)");
  const auto arrived = [&] {
    int flag = 0;
    check_mpi(PMPI_Test(&go, &flag, MPI_STATUS_IGNORE), "MPI_Test (collective watchdog)");
    return flag != 0;
  };
  if (poll_until(deadline, arrived)) {
    check_mpi(PMPI_Wait(&sent, MPI_STATUS_IGNORE), "MPI_Wait (collective watchdog)");
    return spread;
  }
  // Rank 0 knows who arrived: if it waits in a flexmpi call too, it reports
  // and ends the job; it is given a grace period to.
  int nothing = 0;
  MPI_Request ask = MPI_REQUEST_NULL;
  check_mpi(PMPI_Isend(&nothing, 0, MPI_INT, 0, kReportTag, comm, &ask),
            "MPI_Isend (collective watchdog)");
  poll_until(wall_seconds() + std::min(timeout_seconds, 2.0), [&] {
    int flag = 0;
    PMPI_Test(&ask, &flag, MPI_STATUS_IGNORE);  // keeps the request moving; nothing to wait for
    return false;
  });
  abort_job(comm, fmt::format("rank {} in {} {}; rank 0 did not answer: it is not in a flexmpi "
                              "collective call ({}){}",
                              rank, describe(here), waited_text(timeout_seconds), kSameCalls,
                              here.call == CollectiveCall::interval_end ? kIntervalEndCause : ""));
}

}  // namespace

const char* call_name(CollectiveCall call) {
  switch (call) {
    case CollectiveCall::eval_lbalance:
      return "XMPI_Eval_lbalance";
    case CollectiveCall::eval_reconfig:
      return "XMPI_Eval_reconfig";
    case CollectiveCall::redistribute_data:
      return "XMPI_Redistribute_data";
    case CollectiveCall::spawn:
      return "XMPI_Spawn";
    case CollectiveCall::remove:
      return "XMPI_Remove";
    case CollectiveCall::hand_over_data:
      return "XMPI_Send_data/XMPI_Get_data";
    case CollectiveCall::reconfigure:
      return "flexmpi::reconfigure";
    case CollectiveCall::interval_end:
      return "the exchange at the end of a sampling interval (XMPI_Monitor_iter_end/si_init)";
    case CollectiveCall::checkpoint:
      return "XMPI_Checkpoint";
    case CollectiveCall::resume:
      return "XMPI_Resume";
    case CollectiveCall::checkpoint_poll:
      return "XMPI_Eval_*'s checkpoint poll (FLEXMPI_CHECKPOINT)";
    case CollectiveCall::ull_calibrate:
      return "ULL_MPI_calibrate(ULL_MPI_END)";
    case CollectiveCall::drum_create:
      return "DRUM_createMachineModel";
    case CollectiveCall::drum_compute_powers:
      return "DRUM_computePowers";
    case CollectiveCall::finalize:
      return "MPI_Finalize (the profile exchange)";
  }
  return "a flexmpi call";
}

std::string describe(const CollectivePosition& position) {
  const char* name = call_name(position.call);
  switch (position.call) {
    case CollectiveCall::eval_lbalance:
    case CollectiveCall::eval_reconfig:
    case CollectiveCall::checkpoint_poll:
    case CollectiveCall::ull_calibrate:
      return fmt::format("{} at iteration {}", name, position.iteration);
    case CollectiveCall::checkpoint:
      return fmt::format("{} with next_it {}", name, position.iteration);
    case CollectiveCall::drum_create:
      return name;
    case CollectiveCall::drum_compute_powers:
      return fmt::format("{} (call {})", name, position.iteration + 1);
    default:
      return fmt::format("{} after {} monitored iterations", name, position.iteration);
  }
}

void set_collective_timeout(double floor_seconds) {
  Pace& p = pace();
  const std::lock_guard<std::mutex> held(p.lock);
  p.floor = floor_seconds;
  p.last_end = -1.0;
  p.longest_between = 0.0;
}

double collective_time_limit() {
  Pace& p = pace();
  const std::lock_guard<std::mutex> held(p.lock);
  if (p.floor <= 0.0) return 0.0;
  return std::max(p.floor, kPaceFactor * p.longest_between);
}

void set_rank_note(RankNote note) {
  const std::lock_guard<std::mutex> held(pace().lock);
  pace().note = std::move(note);
}

void await_collective_request(MPI_Comm comm, MPI_Request& request, const CollectivePosition& here) {
  const double limit = collective_time_limit();
  const double deadline =
      limit > 0.0 ? wall_seconds() + limit : std::numeric_limits<double>::infinity();
  const bool done = poll_until(deadline, [&] {
    int flag = 0;
    check_mpi(PMPI_Test(&request, &flag, MPI_STATUS_IGNORE), "MPI_Test (collective watchdog)");
    return flag != 0;
  });
  if (!done) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    abort_job(comm, fmt::format("rank {} in {} {}; a rank of its communicator did not call it ({})",
                                rank, describe(here), waited_text(limit), kSameCalls));
  }
  note_call_end();
}

void await_same_iteration(MPI_Comm comm, const CollectivePosition& here, const char* argument,
                          const char* meaning) {
  const ArrivalSpread spread = await_every_rank(comm, here);
  if (!spread.same()) {
    throw Error(Errc::invalid_argument,
                fmt::format("{0} differs between the ranks: rank {1} passed {2}, rank {3} passed "
                            "{4}; every rank must pass the same {0} ({5}) to {6}",
                            argument, spread.lowest_rank, spread.lowest, spread.highest_rank,
                            spread.highest, meaning, call_name(here.call)));
  }
}

ArrivalSpread await_every_rank(MPI_Comm comm, const CollectivePosition& here) {
  int rank = 0, size = 1;
  if (comm != MPI_COMM_NULL) {
    check_mpi(PMPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    check_mpi(PMPI_Comm_size(comm, &size), "MPI_Comm_size");
  }
  if (size == 1) return {here.iteration, rank, here.iteration, rank};
  const double limit = here.call == CollectiveCall::finalize ? 0.0 : collective_time_limit();
  const double deadline =
      limit > 0.0 ? wall_seconds() + limit : std::numeric_limits<double>::infinity();
  const Go go = rank == 0 ? await_at_root(comm, size, here, deadline, limit)
                          : await_go(comm, rank, here, deadline, limit);
  note_call_end();
  return {go[0], static_cast<int>(go[1]), go[2], static_cast<int>(go[3])};
}

}  // namespace flexmpi
