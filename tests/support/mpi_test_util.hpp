// Helpers shared by the multi-process tests: the calling process's rank and
// size in XMPI_COMM_WORLD, the runtime, and exact checks of what the PMPI
// wrappers recorded between two snapshots of the communication profile.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "core/runtime.hpp"
#include "emulation/speed_emulator.hpp"
#include "flexmpi.h"
#include "profiling/comm_profile.hpp"
#include "util/clock.hpp"

namespace flexmpi::test {

inline int world_rank() {
  int rank = -1;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = -1;
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  return size;
}

inline Runtime& runtime() {
  Runtime* runtime = Runtime::instance();
  if (runtime == nullptr) throw std::logic_error("flexmpi is not running: MPI_Init not wrapped?");
  return *runtime;
}

/// For calls that are collective at interval ends: if one fails on one rank
/// only, the others would wait forever in the interval exchange, so the
/// whole job stops (a failed test) instead of hanging until the timeout.
inline void must(int code, const char* call) {
  if (code == XMPI_SUCCESS) return;
  std::fprintf(stderr, "[rank %d] %s failed: %s (%s)\n", world_rank(), call,
               XMPI_Error_string(code), XMPI_Last_error_message());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/// What a core emulated at relative `speed` takes for iterations whose work
/// used `work_cpu_seconds` of CPU time and really took `work_seconds` (one
/// entry per iteration): SpeedEmulator's target, the CPU time over the
/// speed, or the real time where that is longer (a wait for a core that the
/// emulation cannot hide).
inline std::vector<double> emulated_seconds(const std::vector<double>& work_seconds,
                                            double work_cpu_seconds, double speed) {
  std::vector<double> emulated;
  for (const double seconds : work_seconds) {
    emulated.push_back(std::max(seconds, work_cpu_seconds / speed));
  }
  return emulated;
}

/// One monitored iteration around `body`.
template <class Body>
void monitored_iteration(Body body) {
  must(XMPI_Monitor_iter_begin(nullptr), "XMPI_Monitor_iter_begin");
  body();
  must(XMPI_Monitor_iter_end(nullptr), "XMPI_Monitor_iter_end");
}

inline std::vector<OpRecord> snapshot() { return runtime().comm_profile().records(); }

/// One row the profile must have gained: calls, bytes sent and received.
struct Expected {
  MpiOp op;
  int comm_size;
  std::uint64_t calls;
  std::uint64_t sent;
  std::uint64_t received;
};

inline std::string describe(const std::vector<OpRecord>& rows) {
  std::ostringstream out;
  for (const OpRecord& r : rows) {
    out << "  " << mpi_op_name(r.op) << " comm_size=" << r.comm_size << " calls=" << r.stats.calls
        << " sent=" << r.stats.bytes_sent << " received=" << r.stats.bytes_received << "\n";
  }
  return rows.empty() ? "  (nothing)\n" : out.str();
}

/// The profile gained exactly `expected` since `before`: no other row, no
/// other call (so a wrapper that counts twice or an extra call is caught).
inline void expect_recorded(const std::vector<OpRecord>& before,
                            const std::vector<Expected>& expected) {
  const std::vector<OpRecord> diff = profile_difference(snapshot(), before);
  const std::string recorded =
      "recorded on rank " + std::to_string(world_rank()) + ":\n" + describe(diff);
  EXPECT_EQ(diff.size(), expected.size()) << recorded;
  for (const Expected& e : expected) {
    const OpRecord* row = nullptr;
    for (const OpRecord& r : diff) {
      if (r.op == e.op && r.comm_size == e.comm_size) row = &r;
    }
    if (row == nullptr) {
      ADD_FAILURE() << "no " << mpi_op_name(e.op) << " row for comm size " << e.comm_size << "; "
                    << recorded;
      continue;
    }
    EXPECT_EQ(row->stats.calls, e.calls) << mpi_op_name(e.op) << "; " << recorded;
    EXPECT_EQ(row->stats.bytes_sent, e.sent) << mpi_op_name(e.op) << " bytes sent; " << recorded;
    EXPECT_EQ(row->stats.bytes_received, e.received)
        << mpi_op_name(e.op) << " bytes received; " << recorded;
    EXPECT_GE(row->stats.seconds, 0.0);
  }
}

}  // namespace flexmpi::test
