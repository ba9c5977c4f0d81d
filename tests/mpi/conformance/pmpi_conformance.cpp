// Conformance of flexmpi's PMPI layer: the point-to-point, completion and
// collective functions it wraps, on an intracommunicator and an
// intercommunicator, in place and not, with zero counts, MPI_PROC_NULL,
// ignored arguments passed as NULL, derived datatypes, statuses ignored,
// nonblocking and persistent requests and freed communicator handles. Built twice:
//
//   pmpi_conformance_bare     plain MPI, no flexmpi: run as is and with
//                             libflexmpi preloaded (an unmodified program);
//   pmpi_conformance_profile  linked with flexmpi (FLEXMPI_CONFORMANCE_PROFILE):
//                             also checks, call by call, the calls and bytes
//                             the profile recorded (docs/reference/pmpi.md).
//
// Every run checks each result against its expected value and prints one
// digest of everything received per rank; the CTest driver compares the
// digests of the three runs. Runs on 1 to 4 processes.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#ifdef FLEXMPI_CONFORMANCE_PROFILE
#include "core/runtime.hpp"
#include "profiling/comm_profile.hpp"
#endif

namespace {

constexpr std::uint64_t kInt = sizeof(int);

/// What one case expects the profile to record for one operation.
struct Expected {
  std::string op;  // "MPI_Bcast"
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t calls = 1;
};

/// The communicator a case runs on, and what it needs to know of it.
struct Comm {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;         // in the local group
  int size = 0;         // local group
  int remote_size = 0;  // intercommunicator only
  bool inter = false;
  bool root_group = true;  // intercommunicator: the group holding the root (local rank 0)
  int world_rank = 0;
  [[nodiscard]] int peers() const { return inter ? remote_size : size; }
  /// The root argument of a rooted collective whose root is local rank 0 of
  /// the root group: MPI_ROOT / MPI_PROC_NULL there, 0 in the other group.
  [[nodiscard]] int root_argument() const {
    if (!inter) return 0;
    if (!root_group) return 0;
    return rank == 0 ? MPI_ROOT : MPI_PROC_NULL;
  }
  [[nodiscard]] bool is_root() const { return inter ? root_argument() == MPI_ROOT : rank == 0; }
  [[nodiscard]] bool is_idle() const { return inter && root_argument() == MPI_PROC_NULL; }
};

/// A value only (sender, index) gives: every received element is checked.
int value(int sender, int index) { return sender * 1000 + index + 1; }

class Suite {
 public:
  explicit Suite(int world_rank) : world_rank_(world_rank) {}

  void check(bool ok, const std::string& what) {
    if (ok) return;
    ++failures_;
    std::fprintf(stderr, "[rank %d] FAILED %s: %s\n", world_rank_, current_.c_str(), what.c_str());
  }
  void check_ints(const std::vector<int>& got, const std::vector<int>& want,
                  const std::string& what) {
    for (std::size_t i = 0; i < want.size() && i < got.size(); ++i) {
      if (got[i] != want[i]) {
        check(false, what + "[" + std::to_string(i) + "] = " + std::to_string(got[i]) +
                         ", expected " + std::to_string(want[i]));
        return;
      }
    }
    check(got.size() >= want.size(), what + ": too short");
    digest(got);
  }
  void digest(const std::vector<int>& data) {
    for (const int v : data) digest_ = (digest_ ^ static_cast<std::uint32_t>(v)) * 1099511628211ULL;
  }

  /// Runs one case; `body` makes the calls, checks the results and says what
  /// the profile must have recorded on this process.
  void run(const std::string& name, const Comm& comm,
           const std::function<std::vector<Expected>(const Comm&)>& body) {
    current_ = name + (comm.inter ? " (intercommunicator)" : " (intracommunicator)");
    PMPI_Barrier(MPI_COMM_WORLD);  // no message of one case is pending in the next
#ifdef FLEXMPI_CONFORMANCE_PROFILE
    const auto before = profile().records();
#endif
    const std::vector<Expected> expected = body(comm);
#ifdef FLEXMPI_CONFORMANCE_PROFILE
    compare(flexmpi::profile_difference(profile().records(), before), expected, comm);
#else
    (void)expected;
#endif
    ++cases_;
  }

  [[nodiscard]] int failures() const { return failures_; }
  [[nodiscard]] int cases() const { return cases_; }
  [[nodiscard]] std::uint64_t digest_value() const { return digest_; }

 private:
#ifdef FLEXMPI_CONFORMANCE_PROFILE
  static flexmpi::CommProfile& profile() {
    flexmpi::Runtime* runtime = flexmpi::Runtime::instance();
    if (runtime == nullptr) {
      std::fprintf(stderr, "flexmpi is not running\n");
      std::abort();
    }
    return runtime->comm_profile();
  }

  void compare(const std::vector<flexmpi::OpRecord>& recorded,
               const std::vector<Expected>& expected, const Comm& comm) {
    std::map<std::string, Expected> got, want;
    for (const flexmpi::OpRecord& row : recorded) {
      Expected& e = got[std::string(flexmpi::mpi_op_name(row.op))];
      e.calls += row.stats.calls;
      e.sent += row.stats.bytes_sent;
      e.received += row.stats.bytes_received;
      const bool completion = row.comm_size == 0;
      check(completion || row.comm_size == comm.size,
            std::string(flexmpi::mpi_op_name(row.op)) + " recorded under communicator size " +
                std::to_string(row.comm_size) + ", expected " + std::to_string(comm.size));
    }
    for (auto& [op, e] : got) e.calls -= 1;  // operator[] started at 1
    for (const Expected& e : expected) {
      Expected& w = want[e.op];
      w.calls += e.calls;
      w.sent += e.sent;
      w.received += e.received;
    }
    for (auto& [op, w] : want) w.calls -= 1;
    for (const auto& [op, w] : want) {
      const auto it = got.find(op);
      if (it == got.end()) {
        check(false, op + " was not recorded");
        continue;
      }
      const Expected& g = it->second;
      check(g.calls == w.calls && g.sent == w.sent && g.received == w.received,
            op + " recorded calls/sent/received " + std::to_string(g.calls) + "/" +
                std::to_string(g.sent) + "/" + std::to_string(g.received) + ", expected " +
                std::to_string(w.calls) + "/" + std::to_string(w.sent) + "/" +
                std::to_string(w.received));
    }
    for (const auto& [op, g] : got) {
      if (want.find(op) == want.end()) check(false, op + " recorded but not called");
    }
  }
#endif

  int world_rank_;
  std::string current_;
  int failures_ = 0;
  int cases_ = 0;
  std::uint64_t digest_ = 1469598103934665603ULL;
};

std::vector<int> values_of(int sender, int count, int first = 0) {
  std::vector<int> v(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = value(sender, first + i);
  return v;
}

// ---- point-to-point ------------------------------------------------------------------

void point_to_point(Suite& s, const Comm& c) {
  const int count = 6;
  // A ring in the local group (intracommunicator) or across the groups.
  const int right = (c.rank + 1) % c.size;  // a ring in the local group

  if (!c.inter) {
    s.run("MPI_Send/MPI_Recv ring, status ignored", c, [&](const Comm& c) {
      const int left = (c.rank + c.size - 1) % c.size;
      std::vector<int> in(count + 2, 0);
      MPI_Request r;
      MPI_Irecv(in.data(), count + 2, MPI_INT, left, 1, c.comm, &r);
      MPI_Send(values_of(c.rank, count).data(), count, MPI_INT, right, 1, c.comm);
      MPI_Status status;
      MPI_Wait(&r, &status);
      int got = 0;
      MPI_Get_count(&status, MPI_INT, &got);
      s.check(got == count, "received count");
      in.resize(count);
      s.check_ints(in, values_of(left, count), "ring");
      return std::vector<Expected>{
          {"MPI_Irecv", 0, (count + 2) * kInt}, {"MPI_Send", count * kInt, 0}, {"MPI_Wait", 0, 0}};
    });
    s.run("MPI_Recv with MPI_STATUS_IGNORE and a larger buffer", c, [&](const Comm& c) {
      const int left = (c.rank + c.size - 1) % c.size;
      std::vector<int> in(count + 4, 0);
      MPI_Request r;
      const std::vector<int> out = values_of(c.rank, count);  // alive until the Wait
      MPI_Isend(out.data(), count, MPI_INT, right, 2, c.comm, &r);
      MPI_Recv(in.data(), count + 4, MPI_INT, left, 2, c.comm, MPI_STATUS_IGNORE);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      in.resize(count);
      s.check_ints(in, values_of(left, count), "recv");
      return std::vector<Expected>{
          {"MPI_Isend", count * kInt, 0}, {"MPI_Recv", 0, count * kInt}, {"MPI_Wait", 0, 0}};
    });
    s.run("MPI_Sendrecv and MPI_Sendrecv_replace", c, [&](const Comm& c) {
      const int left = (c.rank + c.size - 1) % c.size;
      std::vector<int> in(count, 0);
      MPI_Sendrecv(values_of(c.rank, count).data(), count, MPI_INT, right, 3, in.data(), count,
                   MPI_INT, left, 3, c.comm, MPI_STATUS_IGNORE);
      s.check_ints(in, values_of(left, count), "sendrecv");
      std::vector<int> buffer = values_of(c.rank, count);
      MPI_Sendrecv_replace(buffer.data(), count, MPI_INT, right, 4, left, 4, c.comm,
                           MPI_STATUS_IGNORE);
      s.check_ints(buffer, values_of(left, count), "sendrecv_replace");
      return std::vector<Expected>{{"MPI_Sendrecv", count * kInt, count * kInt},
                                   {"MPI_Sendrecv_replace", count * kInt, count * kInt}};
    });
    s.run("MPI_Ssend, MPI_Rsend, MPI_Bsend, MPI_Issend, MPI_Ibsend, MPI_Irsend", c,
          [&](const Comm& c) {
            const int left = (c.rank + c.size - 1) % c.size;
            std::vector<std::vector<int>> in(6, std::vector<int>(count, 0));
            std::vector<MPI_Request> recvs(6);
            for (int k = 0; k < 6; ++k) {
              MPI_Irecv(in[k].data(), count, MPI_INT, left, 10 + k, c.comm, &recvs[k]);
            }
            PMPI_Barrier(c.comm);  // the receives are posted: ready sends are legal
            std::vector<char> attached(6 * (count * sizeof(int) + MPI_BSEND_OVERHEAD));
            MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
            const std::vector<int> out = values_of(c.rank, count);
            MPI_Ssend(out.data(), count, MPI_INT, right, 10, c.comm);
            MPI_Rsend(out.data(), count, MPI_INT, right, 11, c.comm);
            MPI_Bsend(out.data(), count, MPI_INT, right, 12, c.comm);
            std::vector<MPI_Request> sends(3);
            MPI_Issend(out.data(), count, MPI_INT, right, 13, c.comm, &sends[0]);
            MPI_Ibsend(out.data(), count, MPI_INT, right, 14, c.comm, &sends[1]);
            MPI_Irsend(out.data(), count, MPI_INT, right, 15, c.comm, &sends[2]);
            MPI_Waitall(6, recvs.data(), MPI_STATUSES_IGNORE);
            MPI_Waitall(3, sends.data(), MPI_STATUSES_IGNORE);
            void* detached = nullptr;
            int detached_size = 0;
            MPI_Buffer_detach(&detached, &detached_size);
            for (int k = 0; k < 6; ++k) s.check_ints(in[k], values_of(left, count), "send mode");
            const std::uint64_t b = count * kInt;
            return std::vector<Expected>{{"MPI_Irecv", 0, 6 * b, 6}, {"MPI_Ssend", b, 0},
                                         {"MPI_Rsend", b, 0},        {"MPI_Bsend", b, 0},
                                         {"MPI_Issend", b, 0},       {"MPI_Ibsend", b, 0},
                                         {"MPI_Irsend", b, 0},       {"MPI_Waitall", 0, 0, 2}};
          });
    s.run("MPI_Probe, MPI_Iprobe, MPI_Test*, MPI_Wait*", c, [&](const Comm& c) {
      const int left = (c.rank + c.size - 1) % c.size;
      const std::vector<int> out = values_of(c.rank, count);
      std::vector<MPI_Request> sends(4);
      for (int k = 0; k < 4; ++k)
        MPI_Isend(out.data(), count, MPI_INT, right, 20 + k, c.comm, &sends[k]);
      MPI_Status status;
      MPI_Probe(left, 20, c.comm, &status);
      int flag = 0, iprobes = 0;
      while (!flag) {
        MPI_Iprobe(left, 21, c.comm, &flag, MPI_STATUS_IGNORE);
        ++iprobes;
      }
      std::vector<std::vector<int>> in(4, std::vector<int>(count, 0));
      std::vector<MPI_Request> recvs(4);
      for (int k = 0; k < 4; ++k)
        MPI_Irecv(in[k].data(), count, MPI_INT, left, 20 + k, c.comm, &recvs[k]);
      int index = -1, waitanys = 0;
      MPI_Waitany(4, recvs.data(), &index, MPI_STATUS_IGNORE);
      ++waitanys;
      int outcount = 0, waitsomes = 0;
      std::vector<int> indices(4);
      MPI_Waitsome(4, recvs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
      ++waitsomes;
      int testanys = 0, testsomes = 0, testalls = 0, tests = 0;
      flag = 0;
      MPI_Testany(4, recvs.data(), &index, &flag, MPI_STATUS_IGNORE);
      ++testanys;
      MPI_Testsome(4, recvs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE);
      ++testsomes;
      for (flag = 0; !flag; ++testalls) MPI_Testall(4, recvs.data(), &flag, MPI_STATUSES_IGNORE);
      for (MPI_Request& r : sends) {
        for (flag = 0; !flag; ++tests) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
      }
      for (int k = 0; k < 4; ++k) s.check_ints(in[k], values_of(left, count), "tested");
      return std::vector<Expected>{{"MPI_Isend", 4 * count * kInt, 0, 4},
                                   {"MPI_Probe", 0, 0},
                                   {"MPI_Iprobe", 0, 0, static_cast<std::uint64_t>(iprobes)},
                                   {"MPI_Irecv", 0, 4 * count * kInt, 4},
                                   {"MPI_Waitany", 0, 0, static_cast<std::uint64_t>(waitanys)},
                                   {"MPI_Waitsome", 0, 0, static_cast<std::uint64_t>(waitsomes)},
                                   {"MPI_Testany", 0, 0, static_cast<std::uint64_t>(testanys)},
                                   {"MPI_Testsome", 0, 0, static_cast<std::uint64_t>(testsomes)},
                                   {"MPI_Testall", 0, 0, static_cast<std::uint64_t>(testalls)},
                                   {"MPI_Test", 0, 0, static_cast<std::uint64_t>(tests)}};
    });
    s.run("a derived datatype (every other int)", c, [&](const Comm& c) {
      const int left = (c.rank + c.size - 1) % c.size;
      MPI_Datatype strided;
      MPI_Type_vector(count, 1, 2, MPI_INT, &strided);
      MPI_Type_commit(&strided);
      const std::vector<int> out = values_of(c.rank, 2 * count);
      std::vector<int> in(2 * count, 0);
      MPI_Sendrecv(out.data(), 1, strided, right, 5, in.data(), 1, strided, left, 5, c.comm,
                   MPI_STATUS_IGNORE);
      MPI_Type_free(&strided);
      std::vector<int> want(2 * count, 0);
      for (int i = 0; i < 2 * count; i += 2) want[i] = value(left, i);
      s.check_ints(in, want, "strided");
      return std::vector<Expected>{{"MPI_Sendrecv", count * kInt, count * kInt}};
    });
    s.run("persistent requests", c, [&](const Comm& c) {
      const int left = (c.rank + c.size - 1) % c.size;
      std::vector<int> out = values_of(c.rank, count), in(count, 0);
      MPI_Request requests[2];
      MPI_Send_init(out.data(), count, MPI_INT, right, 6, c.comm, &requests[0]);
      MPI_Recv_init(in.data(), count, MPI_INT, left, 6, c.comm, &requests[1]);
      for (int round = 0; round < 3; ++round) {
        MPI_Startall(2, requests);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
      }
      MPI_Request_free(&requests[0]);
      MPI_Request_free(&requests[1]);
      s.check_ints(in, values_of(left, count), "persistent");
      // The bytes are counted by each start, not by the *_init calls.
      return std::vector<Expected>{{"MPI_Send_init", 0, 0},
                                   {"MPI_Recv_init", 0, 0},
                                   {"MPI_Startall", 3 * count * kInt, 3 * count * kInt, 3},
                                   {"MPI_Waitall", 0, 0, 3}};
    });
  }
  s.run("MPI_PROC_NULL and zero counts", c, [&](const Comm& c) {
    std::vector<int> in(count, -7);
    MPI_Send(values_of(c.rank, count).data(), count, MPI_INT, MPI_PROC_NULL, 7, c.comm);
    MPI_Status status;
    MPI_Recv(in.data(), count, MPI_INT, MPI_PROC_NULL, 7, c.comm, &status);
    s.check(status.MPI_SOURCE == MPI_PROC_NULL, "status of a receive from MPI_PROC_NULL");
    MPI_Request r[2];
    MPI_Isend(in.data(), count, MPI_INT, MPI_PROC_NULL, 7, c.comm, &r[0]);
    MPI_Irecv(in.data(), count, MPI_INT, MPI_PROC_NULL, 7, c.comm, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    MPI_Sendrecv(in.data(), 0, MPI_INT, MPI_PROC_NULL, 8, in.data(), 0, MPI_INT, MPI_PROC_NULL, 8,
                 c.comm, MPI_STATUS_IGNORE);
    s.check_ints(in, std::vector<int>(count, -7), "untouched");
    return std::vector<Expected>{{"MPI_Send", 0, 0},    {"MPI_Recv", 0, 0},
                                 {"MPI_Isend", 0, 0},   {"MPI_Irecv", 0, 0},
                                 {"MPI_Waitall", 0, 0}, {"MPI_Sendrecv", 0, 0}};
  });
  if (c.inter) {
    s.run("MPI_Sendrecv across the groups", c, [&](const Comm& c) {
      // Local rank k talks to remote rank k % remote_size; pair the ones that match both ways.
      const int peer = c.rank % c.remote_size;
      const bool paired = c.rank < c.remote_size;  // remote rank `peer` also has us as partner
      std::vector<int> in(count, 0);
      if (paired) {
        MPI_Sendrecv(values_of(c.world_rank, count).data(), count, MPI_INT, peer, 9, in.data(),
                     count, MPI_INT, peer, 9, c.comm, MPI_STATUS_IGNORE);
        s.digest(in);
        return std::vector<Expected>{{"MPI_Sendrecv", count * kInt, count * kInt}};
      }
      return std::vector<Expected>{};
    });
  }
}

// ---- collectives ---------------------------------------------------------------------

void rooted(Suite& s, const Comm& c) {
  const int count = 5;
  // The root is local rank 0 of the root group: world rank 0 on both kinds.
  const int root = c.root_argument();
  const std::uint64_t b = count * kInt;

  for (const bool in_place : {false, true}) {
    if (in_place && c.inter) continue;
    const std::string how = in_place ? " in place" : "";
    s.run("MPI_Bcast", c, [&](const Comm& c) {
      std::vector<int> buffer = c.is_root() ? values_of(0, count) : std::vector<int>(count);
      MPI_Bcast(buffer.data(), count, MPI_INT, root, c.comm);
      if (!c.is_idle() && !c.is_root()) s.check_ints(buffer, values_of(0, count), "bcast");
      if (c.is_idle()) return std::vector<Expected>{{"MPI_Bcast", 0, 0}};
      return std::vector<Expected>{{"MPI_Bcast", c.is_root() ? b : 0, c.is_root() ? 0 : b}};
    });
    s.run("MPI_Reduce" + how, c, [&](const Comm& c) {
      std::vector<int> mine(count, 1), result(count, 0);
      const bool sends = !c.is_idle() && !(c.inter && c.is_root());
      if (in_place && c.is_root()) {
        MPI_Reduce(MPI_IN_PLACE, mine.data(), count, MPI_INT, MPI_SUM, root, c.comm);
        result = mine;
      } else {
        MPI_Reduce(mine.data(), result.data(), count, MPI_INT, MPI_SUM, root, c.comm);
      }
      if (c.is_root()) s.check_ints(result, std::vector<int>(count, c.peers()), "reduce");
      if (c.is_idle()) return std::vector<Expected>{{"MPI_Reduce", 0, 0}};
      return std::vector<Expected>{{"MPI_Reduce", sends ? b : 0, c.is_root() ? b : 0}};
    });
    s.run("MPI_Gather" + how, c, [&](const Comm& c) {
      std::vector<int> all(c.is_root() ? count * c.peers() : 0, 0);
      const std::vector<int> mine = values_of(c.world_rank, count);
      if (in_place && c.is_root()) {
        std::copy(mine.begin(), mine.end(), all.begin() + c.rank * count);
        // The send arguments are ignored: pass nonsense.
        MPI_Gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, all.data(), count, MPI_INT, root, c.comm);
      } else if (c.is_root() || c.is_idle()) {
        MPI_Gather(c.inter ? nullptr : mine.data(), c.inter ? 0 : count, MPI_INT, all.data(), count,
                   MPI_INT, root, c.comm);
      } else {  // the receive arguments are ignored: pass nonsense
        MPI_Gather(mine.data(), count, MPI_INT, nullptr, -1, MPI_DATATYPE_NULL, root, c.comm);
      }
      if (c.is_root()) s.digest(all);
      if (c.is_idle()) return std::vector<Expected>{{"MPI_Gather", 0, 0}};
      if (!c.is_root()) return std::vector<Expected>{{"MPI_Gather", b, 0}};
      return std::vector<Expected>{{"MPI_Gather", c.inter ? 0 : b, c.peers() * b}};
    });
    s.run("MPI_Gatherv" + how, c, [&](const Comm& c) {
      // Process k of the receiving side sends k + 1 ints.
      std::vector<int> counts, displs;
      int total = 0;
      for (int k = 0; k < c.peers(); ++k) {
        counts.push_back(k + 1);
        displs.push_back(total);
        total += k + 1;
      }
      const int mine_count = c.rank + 1;
      const std::vector<int> mine = values_of(c.world_rank, mine_count);
      std::vector<int> all(c.is_root() ? total : 0, 0);
      if (in_place && c.is_root()) {
        std::copy(mine.begin(), mine.end(), all.begin() + displs[c.rank]);
        MPI_Gatherv(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, all.data(), counts.data(), displs.data(),
                    MPI_INT, root, c.comm);
      } else if (c.is_root()) {
        MPI_Gatherv(c.inter ? nullptr : mine.data(), c.inter ? 0 : mine_count, MPI_INT, all.data(),
                    counts.data(), displs.data(), MPI_INT, root, c.comm);
      } else {  // NULL counts and displacements: ignored on a non-root
        MPI_Gatherv(c.is_idle() ? nullptr : mine.data(), c.is_idle() ? 0 : mine_count, MPI_INT,
                    nullptr, nullptr, nullptr, MPI_DATATYPE_NULL, root, c.comm);
      }
      if (c.is_root()) s.digest(all);
      if (c.is_idle()) return std::vector<Expected>{{"MPI_Gatherv", 0, 0}};
      if (!c.is_root()) return std::vector<Expected>{{"MPI_Gatherv", mine_count * kInt, 0}};
      return std::vector<Expected>{{"MPI_Gatherv", c.inter ? 0 : mine_count * kInt,
                                    static_cast<std::uint64_t>(total) * kInt}};
    });
    s.run("MPI_Scatter" + how, c, [&](const Comm& c) {
      std::vector<int> all;
      if (c.is_root()) {
        for (int k = 0; k < c.peers(); ++k) {
          const std::vector<int> part = values_of(k, count);
          all.insert(all.end(), part.begin(), part.end());
        }
      }
      std::vector<int> mine(count, 0);
      if (in_place && c.is_root()) {
        MPI_Scatter(all.data(), count, MPI_INT, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root, c.comm);
        mine.assign(all.begin() + c.rank * count, all.begin() + (c.rank + 1) * count);
      } else if (c.is_root()) {
        MPI_Scatter(all.data(), count, MPI_INT, c.inter ? nullptr : mine.data(),
                    c.inter ? 0 : count, MPI_INT, root, c.comm);
      } else {  // the send arguments are ignored
        MPI_Scatter(nullptr, -1, MPI_DATATYPE_NULL, c.is_idle() ? nullptr : mine.data(),
                    c.is_idle() ? 0 : count, MPI_INT, root, c.comm);
      }
      if (!c.is_idle() && !(c.inter && c.is_root()))
        s.check_ints(mine, values_of(c.rank, count), "scatter");
      if (c.is_idle()) return std::vector<Expected>{{"MPI_Scatter", 0, 0}};
      if (!c.is_root()) return std::vector<Expected>{{"MPI_Scatter", 0, b}};
      return std::vector<Expected>{{"MPI_Scatter", c.peers() * b, c.inter ? 0 : b}};
    });
    s.run("MPI_Scatterv" + how, c, [&](const Comm& c) {
      std::vector<int> counts, displs, all;
      for (int k = 0; k < c.peers(); ++k) {
        counts.push_back(k + 1);
        displs.push_back(static_cast<int>(all.size()));
        const std::vector<int> part = values_of(k, k + 1);
        all.insert(all.end(), part.begin(), part.end());
      }
      const int mine_count = c.rank + 1;
      std::vector<int> mine(mine_count, 0);
      if (in_place && c.is_root()) {
        MPI_Scatterv(all.data(), counts.data(), displs.data(), MPI_INT, MPI_IN_PLACE, -1,
                     MPI_DATATYPE_NULL, root, c.comm);
        mine.assign(all.begin() + displs[c.rank], all.begin() + displs[c.rank] + mine_count);
      } else if (c.is_root()) {
        MPI_Scatterv(all.data(), counts.data(), displs.data(), MPI_INT,
                     c.inter ? nullptr : mine.data(), c.inter ? 0 : mine_count, MPI_INT, root,
                     c.comm);
      } else {  // NULL send counts: ignored on a non-root
        MPI_Scatterv(nullptr, nullptr, nullptr, MPI_DATATYPE_NULL,
                     c.is_idle() ? nullptr : mine.data(), c.is_idle() ? 0 : mine_count, MPI_INT,
                     root, c.comm);
      }
      if (!c.is_idle() && !(c.inter && c.is_root()))
        s.check_ints(mine, values_of(c.rank, mine_count), "scatterv");
      if (c.is_idle()) return std::vector<Expected>{{"MPI_Scatterv", 0, 0}};
      if (!c.is_root()) return std::vector<Expected>{{"MPI_Scatterv", 0, mine_count * kInt}};
      return std::vector<Expected>{
          {"MPI_Scatterv", all.size() * kInt, c.inter ? 0 : mine_count * kInt}};
    });
  }
}

void all_to_all(Suite& s, const Comm& c) {
  const int count = 3;
  const std::uint64_t b = count * kInt;
  for (const bool in_place : {false, true}) {
    if (in_place && c.inter) continue;
    const std::string how = in_place ? " in place" : "";
    s.run("MPI_Barrier, MPI_Allreduce" + how, c, [&](const Comm& c) {
      MPI_Barrier(c.comm);
      std::vector<int> mine(count, 2), result(count, 0);
      if (in_place) {
        MPI_Allreduce(MPI_IN_PLACE, mine.data(), count, MPI_INT, MPI_SUM, c.comm);
        result = mine;
      } else {
        MPI_Allreduce(mine.data(), result.data(), count, MPI_INT, MPI_SUM, c.comm);
      }
      s.check_ints(result, std::vector<int>(count, 2 * c.peers()), "allreduce");
      return std::vector<Expected>{{"MPI_Barrier", 0, 0}, {"MPI_Allreduce", b, b}};
    });
    s.run("MPI_Allgather" + how, c, [&](const Comm& c) {
      std::vector<int> all(count * c.peers(), 0);
      const std::vector<int> mine = values_of(c.rank, count);
      if (in_place) {
        std::copy(mine.begin(), mine.end(), all.begin() + c.rank * count);
        MPI_Allgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, all.data(), count, MPI_INT, c.comm);
      } else {
        MPI_Allgather(mine.data(), count, MPI_INT, all.data(), count, MPI_INT, c.comm);
      }
      std::vector<int> want;
      for (int k = 0; k < c.peers(); ++k) {
        const std::vector<int> part = values_of(k, count);
        want.insert(want.end(), part.begin(), part.end());
      }
      s.check_ints(all, want, "allgather");
      return std::vector<Expected>{{"MPI_Allgather", b, c.peers() * b}};
    });
    s.run("MPI_Allgatherv" + how, c, [&](const Comm& c) {
      std::vector<int> counts, displs, want;
      for (int k = 0; k < c.peers(); ++k) {
        counts.push_back(k + 1);
        displs.push_back(static_cast<int>(want.size()));
        const std::vector<int> part = values_of(k, k + 1);
        want.insert(want.end(), part.begin(), part.end());
      }
      std::vector<int> all(want.size(), 0);
      const std::vector<int> mine = values_of(c.rank, c.rank + 1);
      if (in_place) {
        std::copy(mine.begin(), mine.end(), all.begin() + displs[c.rank]);
        MPI_Allgatherv(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, all.data(), counts.data(),
                       displs.data(), MPI_INT, c.comm);
      } else {
        MPI_Allgatherv(mine.data(), c.rank + 1, MPI_INT, all.data(), counts.data(), displs.data(),
                       MPI_INT, c.comm);
      }
      s.check_ints(all, want, "allgatherv");
      return std::vector<Expected>{{"MPI_Allgatherv", (c.rank + 1) * kInt, want.size() * kInt}};
    });
    s.run("MPI_Alltoall" + how, c, [&](const Comm& c) {
      // Block k of process p is value(p, k * count + i) wherever it goes.
      std::vector<int> out = values_of(c.rank + 100, count * c.peers());
      std::vector<int> in(count * c.peers(), 0);
      if (in_place) {
        MPI_Alltoall(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, out.data(), count, MPI_INT, c.comm);
        in = out;
      } else {
        MPI_Alltoall(out.data(), count, MPI_INT, in.data(), count, MPI_INT, c.comm);
      }
      std::vector<int> want;
      for (int k = 0; k < c.peers(); ++k) {
        const std::vector<int> part = values_of(k + 100, count, c.rank * count);
        want.insert(want.end(), part.begin(), part.end());
      }
      s.check_ints(in, want, "alltoall");
      return std::vector<Expected>{{"MPI_Alltoall", c.peers() * b, c.peers() * b}};
    });
    s.run("MPI_Alltoallv" + how, c, [&](const Comm& c) {
      // Process p sends (p + k + 1) ints to process k; zero-length blocks included.
      std::vector<int> scounts, sdispls, rcounts, rdispls;
      int stotal = 0, rtotal = 0;
      for (int k = 0; k < c.peers(); ++k) {
        scounts.push_back((c.rank + k) % 3);
        sdispls.push_back(stotal);
        stotal += scounts.back();
        rcounts.push_back((k + c.rank) % 3);
        rdispls.push_back(rtotal);
        rtotal += rcounts.back();
      }
      std::vector<int> out;
      for (int k = 0; k < c.peers(); ++k) {
        const std::vector<int> part = values_of(c.rank * 10 + k, scounts[k]);
        out.insert(out.end(), part.begin(), part.end());
      }
      std::vector<int> in(rtotal, 0);
      if (in_place) {
        // In place the send and receive layouts are one: symmetric counts here.
        MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, out.data(), rcounts.data(),
                      rdispls.data(), MPI_INT, c.comm);
        in = out;
      } else {
        MPI_Alltoallv(out.data(), scounts.data(), sdispls.data(), MPI_INT, in.data(),
                      rcounts.data(), rdispls.data(), MPI_INT, c.comm);
      }
      std::vector<int> want;
      for (int k = 0; k < c.peers(); ++k) {
        const std::vector<int> part = values_of(k * 10 + c.rank, rcounts[k]);
        want.insert(want.end(), part.begin(), part.end());
      }
      s.check_ints(in, want, "alltoallv");
      return std::vector<Expected>{
          {"MPI_Alltoallv", (in_place ? rtotal : stotal) * kInt, rtotal * kInt}};
    });
  }
  if (!c.inter) {
    s.run("MPI_Scan, MPI_Exscan", c, [&](const Comm& c) {
      std::vector<int> mine(count, c.rank + 1), scan(count, 0), exscan(count, -5);
      MPI_Scan(mine.data(), scan.data(), count, MPI_INT, MPI_SUM, c.comm);
      MPI_Exscan(mine.data(), exscan.data(), count, MPI_INT, MPI_SUM, c.comm);
      s.check_ints(scan, std::vector<int>(count, (c.rank + 1) * (c.rank + 2) / 2), "scan");
      if (c.rank > 0)
        s.check_ints(exscan, std::vector<int>(count, c.rank * (c.rank + 1) / 2), "exscan");
      return std::vector<Expected>{{"MPI_Scan", b, b}, {"MPI_Exscan", b, b}};
    });
    s.run("MPI_Reduce_scatter_block, MPI_Alltoallw", c, [&](const Comm& c) {
      std::vector<int> mine(count * c.size, 1), result(count, 0);
      MPI_Reduce_scatter_block(mine.data(), result.data(), count, MPI_INT, MPI_SUM, c.comm);
      s.check_ints(result, std::vector<int>(count, c.size), "reduce_scatter_block");
      std::vector<int> counts(c.size, 1), displs(c.size), out(c.size), in(c.size, 0);
      std::vector<MPI_Datatype> types(c.size, MPI_INT);
      for (int k = 0; k < c.size; ++k) {
        displs[k] = k * static_cast<int>(sizeof(int));
        out[k] = value(c.rank, k);
      }
      MPI_Alltoallw(out.data(), counts.data(), displs.data(), types.data(), in.data(),
                    counts.data(), displs.data(), types.data(), c.comm);
      std::vector<int> want(c.size);
      for (int k = 0; k < c.size; ++k) want[k] = value(k, c.rank);
      s.check_ints(in, want, "alltoallw");
      const std::uint64_t all = static_cast<std::uint64_t>(c.size);
      return std::vector<Expected>{{"MPI_Reduce_scatter_block", all * count * kInt, count * kInt},
                                   {"MPI_Alltoallw", all * kInt, all * kInt}};
    });
  }
  s.run("MPI_Ibarrier, MPI_Ibcast, MPI_Ireduce, MPI_Iallreduce", c, [&](const Comm& c) {
    const int root = c.root_argument();
    MPI_Request r[4];
    MPI_Ibarrier(c.comm, &r[0]);
    std::vector<int> buffer = c.is_root() ? values_of(7, count) : std::vector<int>(count, 0);
    MPI_Ibcast(buffer.data(), count, MPI_INT, root, c.comm, &r[1]);
    std::vector<int> ones(count, 1), reduced(count, 0), mine(count, 3), all(count, 0);
    MPI_Ireduce(ones.data(), reduced.data(), count, MPI_INT, MPI_SUM, root, c.comm, &r[2]);
    MPI_Iallreduce(mine.data(), all.data(), count, MPI_INT, MPI_SUM, c.comm, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    if (!c.is_idle() && !c.is_root()) s.check_ints(buffer, values_of(7, count), "ibcast");
    if (c.is_root()) s.check_ints(reduced, std::vector<int>(count, c.peers()), "ireduce");
    s.check_ints(all, std::vector<int>(count, 3 * c.peers()), "iallreduce");
    const Expected bcast = c.is_idle()   ? Expected{"MPI_Ibcast", 0, 0}
                           : c.is_root() ? Expected{"MPI_Ibcast", b, 0}
                                         : Expected{"MPI_Ibcast", 0, b};
    const bool reduce_sends = !c.is_idle() && !(c.inter && c.is_root());
    return std::vector<Expected>{{"MPI_Ibarrier", 0, 0},
                                 bcast,
                                 {"MPI_Ireduce", reduce_sends ? b : 0, c.is_root() ? b : 0},
                                 {"MPI_Iallreduce", b, b},
                                 {"MPI_Waitall", 0, 0}};
  });
}

// A freed handle may come back for another communicator: what flexmpi knew
// of the first must not be used for the second.
void freed_handles(Suite& s, const Comm& world) {
  for (int round = 0; round < 4; ++round) {
    MPI_Comm comm;
    // Alternately alone and all together: sizes 1 and n under possibly one handle.
    MPI_Comm_split(world.comm, round % 2 == 0 ? world.rank : 0, world.rank, &comm);
    Comm c;
    c.comm = comm;
    MPI_Comm_rank(comm, &c.rank);
    MPI_Comm_size(comm, &c.size);
    c.world_rank = world.world_rank;
    s.run("a communicator made and freed, round " + std::to_string(round), c, [&](const Comm& c) {
      int mine = 1, sum = 0;
      MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c.comm);
      s.check(sum == c.size, "allreduce over the new communicator");
      std::vector<int> all(c.size, 0);
      MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, c.comm);
      s.check_ints(all, std::vector<int>(c.size, 1), "allgather over the new communicator");
      return std::vector<Expected>{{"MPI_Allreduce", kInt, kInt},
                                   {"MPI_Allgather", kInt, c.size * kInt}};
    });
    MPI_Comm_free(&comm);
  }
}

Comm describe(MPI_Comm comm, int world_rank, bool root_group) {
  Comm c;
  c.comm = comm;
  c.world_rank = world_rank;
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.size);
  int inter = 0;
  MPI_Comm_test_inter(comm, &inter);
  c.inter = inter != 0;
  if (c.inter) MPI_Comm_remote_size(comm, &c.remote_size);
  c.root_group = root_group;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_rank = 0, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  Suite suite(world_rank);

  MPI_Comm intra;
  MPI_Comm_dup(MPI_COMM_WORLD, &intra);
  const Comm intra_comm = describe(intra, world_rank, true);
  point_to_point(suite, intra_comm);
  rooted(suite, intra_comm);
  all_to_all(suite, intra_comm);
  freed_handles(suite, intra_comm);

  if (world_size >= 2) {
    // Even and odd world ranks, joined by an intercommunicator; the even group holds the roots.
    const int color = world_rank % 2;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, color, world_rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 77, &inter);
    const Comm inter_comm = describe(inter, world_rank, color == 0);
    point_to_point(suite, inter_comm);
    rooted(suite, inter_comm);
    all_to_all(suite, inter_comm);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
  }
  MPI_Comm_free(&intra);

  int failures = suite.failures(), total = 0;
  PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  std::printf("digest rank %d: %016llx\n", world_rank,
              static_cast<unsigned long long>(suite.digest_value()));
  if (world_rank == 0) {
    std::printf("pmpi conformance: %d cases per process on %d processes, %d failures\n",
                suite.cases(), world_size, total);
  }
  MPI_Finalize();
  return total == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
