// bench-pmpi-overhead: the time flexmpi's PMPI wrappers (thesis 4.2.2, Fig. 4.5)
// add to one MPI call, measured as MPI_X (flexmpi's wrapper) minus PMPI_X (the
// MPI library itself) on the same call in the same run; plus the bookkeeping
// cost of one monitored iteration (XMPI_Monitor_iter_begin + end, thesis 4.2).
// Beside it, the floor: two reads of the wrappers' timer (IntervalTimer), which
// a wrapped call cannot do without; "x floor" is the added cost over it.
//
// Each repetition times one batch of calls through MPI_X and one through
// PMPI_X back to back, alternating which goes first so slow drifts of a shared
// machine hit both alike; every figure is a median over the repetitions. Plain
// std::chrono rather than Google Benchmark: Google Benchmark picks the
// iteration count per process, and the two-rank ping-pong needs both ranks to
// make exactly the same calls.
//
// Run under `mpiexec -n 1` (MPI_COMM_SELF calls) and `-n 2` (adds Send/Recv).
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "flexmpi.h"
#include "util/clock.hpp"

#ifdef FLEXMPI_BENCH_FORTRAN
// pmpi_overhead_fortran.f90: n MPI_SEND (wrapped != 0) or PMPI_SEND to MPI_PROC_NULL.
extern "C" void fortran_send_proc_null(int n, int wrapped);
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int repetitions = 301;
  int batch = 1000;  // calls per timed batch (round trips: batch / 10)
};

struct Summary {
  double mpi_ns = 0;    // median time of one MPI_X op
  double pmpi_ns = 0;   // median time of one PMPI_X op
  double added_ns = 0;  // median over repetitions of (MPI_X - PMPI_X), paired
  double added_p25 = 0, added_p75 = 0;
};

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

// ns per op of `calls` ops done by body(calls).
template <class Body>
double time_batch(int calls, Body&& body) {
  const auto start = Clock::now();
  body(calls);
  const std::chrono::duration<double, std::nano> elapsed = Clock::now() - start;
  return elapsed.count() / calls;
}

// Interleaved A/B measurement of the wrapped and the unwrapped form of one op.
template <class Wrapped, class Unwrapped>
Summary compare(const Options& options, int calls, Wrapped&& wrapped, Unwrapped&& unwrapped) {
  wrapped(calls);  // warm-up: first-touch of the profile table, caches, MPI paths
  unwrapped(calls);
  std::vector<double> mpi, pmpi, added;
  for (int r = 0; r < options.repetitions; ++r) {
    double a = 0, b = 0;
    if (r % 2 == 0) {
      a = time_batch(calls, wrapped);
      b = time_batch(calls, unwrapped);
    } else {
      b = time_batch(calls, unwrapped);
      a = time_batch(calls, wrapped);
    }
    mpi.push_back(a);
    pmpi.push_back(b);
    added.push_back(a - b);
  }
  return {quantile(mpi, 0.5), quantile(pmpi, 0.5), quantile(added, 0.5), quantile(added, 0.25),
          quantile(added, 0.75)};
}

int parse_positive(std::string_view option, std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 1) {
    std::fprintf(
        stderr, "bench-pmpi-overhead: %.*s '%.*s' is invalid: expected a whole number >= 1\n",
        static_cast<int>(option.size()), option.data(), static_cast<int>(text.size()), text.data());
    std::exit(2);
  }
  return value;
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int a = 1; a < argc; ++a) {
    const std::string_view arg = argv[a];
    if ((arg == "--repetitions" || arg == "--batch") && a + 1 < argc) {
      (arg == "--batch" ? options.batch : options.repetitions) = parse_positive(arg, argv[++a]);
    } else {
      std::fprintf(stderr,
                   "usage: mpiexec -n {1,2} bench-pmpi-overhead [--repetitions N (301)] "
                   "[--batch N (1000)]\n");
      std::exit(arg == "--help" ? 0 : 2);
    }
  }
  return options;
}

// Which object MPI_Barrier resolves to: flexmpi's wrapper or the MPI library.
// Printed so a reader can see that the MPI_X column really went through flexmpi.
std::string barrier_provider() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&MPI_Barrier), &info) == 0 || info.dli_fname == nullptr) {
    return "unknown";
  }
  return info.dli_fname;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);

  // One slot per measured operation; a rank sends -1 for what it did not run
  // (only ranks 0 and 1 run the ping-pong).
  enum Slot {
    kFloor,
    kBarrier,
    kAllreduce,
    kSendProcNull,
    kTestNull,
    kFortranSend,
    kPingPong,
    kMonitor,
    kSlots
  };
  struct RowInfo {
    const char* name;
    int wrapped_calls;  // wrapped MPI calls per timed op
  };
  static constexpr RowInfo kRows[kSlots] = {
      {"two timer reads (the floor)", 1},      {"MPI_Barrier(MPI_COMM_SELF)", 1},
      {"MPI_Allreduce(1 int, SELF)", 1},       {"MPI_Send(MPI_PROC_NULL)", 1},
      {"MPI_Test(MPI_REQUEST_NULL)", 1},       {"Fortran MPI_SEND(MPI_PROC_NULL)", 1},
      {"MPI_Send+MPI_Recv 8 B round trip", 4}, {"XMPI_Monitor_iter_begin+end", 1}};
  constexpr int kFields = 5;
  std::vector<double> mine(kSlots * kFields, -1.0);
  auto store = [&](Slot slot, const Summary& s) {
    const double fields[kFields] = {s.mpi_ns, s.pmpi_ns, s.added_ns, s.added_p25, s.added_p75};
    std::copy(fields, fields + kFields, mine.begin() + slot * kFields);
  };
  const int calls = options.batch;
  int value = 1, result = 0;

  // The floor: the wrappers' two timer reads against an empty loop.
  const flexmpi::IntervalTimer timer;
  store(kFloor, compare(
                    options, calls,
                    [&](int n) {
                      for (int i = 0; i < n; ++i) {
                        std::uint64_t start = timer.now(), end = timer.now();
                        asm volatile("" : "+r"(start), "+r"(end)::"memory");
                      }
                    },
                    [](int n) {
                      for (int i = 0; i < n; ++i) asm volatile("" ::: "memory");
                    }));
  // One wrapped call of each kind against its PMPI_X.
  auto store_call = [&](Slot slot, auto&& call) {
    PMPI_Barrier(XMPI_COMM_WORLD);
    store(slot, compare(
                    options, calls,
                    [&](int n) {
                      for (int i = 0; i < n; ++i) call(true);
                    },
                    [&](int n) {
                      for (int i = 0; i < n; ++i) call(false);
                    }));
  };
  store_call(kBarrier, [](bool wrapped) {
    return wrapped ? MPI_Barrier(MPI_COMM_SELF) : PMPI_Barrier(MPI_COMM_SELF);
  });
  store_call(kAllreduce, [&](bool wrapped) {
    return wrapped ? MPI_Allreduce(&value, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF)
                   : PMPI_Allreduce(&value, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
  });
  store_call(kSendProcNull, [&](bool wrapped) {
    return wrapped ? MPI_Send(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF)
                   : PMPI_Send(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF);
  });
  store_call(kTestNull, [](bool wrapped) {
    MPI_Request request = MPI_REQUEST_NULL;
    int done = 0;
    return wrapped ? MPI_Test(&request, &done, MPI_STATUS_IGNORE)
                   : PMPI_Test(&request, &done, MPI_STATUS_IGNORE);
  });

#ifdef FLEXMPI_BENCH_FORTRAN
  // From Fortran: the batch's loop runs in Fortran, so the two columns differ by the wrapper only.
  PMPI_Barrier(XMPI_COMM_WORLD);
  store(kFortranSend, compare(
                          options, calls, [](int n) { fortran_send_proc_null(n, 1); },
                          [](int n) { fortran_send_proc_null(n, 0); }));
#endif

  const int trips = std::max(1, calls / 10);
  PMPI_Barrier(XMPI_COMM_WORLD);
  if (size >= 2 && rank < 2) {
    // Ping-pong of 8 bytes between ranks 0 and 1; both ranks run the same
    // sequence, so a wrapped round trip has all four calls wrapped.
    char buffer[8] = {};
    const int peer = 1 - rank;
    auto round_trips = [&](bool wrapped, int n) {
      for (int i = 0; i < n; ++i) {
        if (rank == 0) {
          if (wrapped) {
            MPI_Send(buffer, 8, MPI_BYTE, peer, 0, XMPI_COMM_WORLD);
            MPI_Recv(buffer, 8, MPI_BYTE, peer, 0, XMPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else {
            PMPI_Send(buffer, 8, MPI_BYTE, peer, 0, XMPI_COMM_WORLD);
            PMPI_Recv(buffer, 8, MPI_BYTE, peer, 0, XMPI_COMM_WORLD, MPI_STATUS_IGNORE);
          }
        } else if (wrapped) {
          MPI_Recv(buffer, 8, MPI_BYTE, peer, 0, XMPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buffer, 8, MPI_BYTE, peer, 0, XMPI_COMM_WORLD);
        } else {
          PMPI_Recv(buffer, 8, MPI_BYTE, peer, 0, XMPI_COMM_WORLD, MPI_STATUS_IGNORE);
          PMPI_Send(buffer, 8, MPI_BYTE, peer, 0, XMPI_COMM_WORLD);
        }
      }
    };
    store(kPingPong, compare(
                         options, trips, [&](int n) { round_trips(true, n); },
                         [&](int n) { round_trips(false, n); }));
  }

  // Monitoring bookkeeping of one empty iteration, including the collective
  // interval exchange every FLEXMPI_SAMPLING_INTERVAL iterations (so all ranks
  // run it). Its baseline (the PMPI_X column) is an empty loop.
  PMPI_Barrier(XMPI_COMM_WORLD);
  store(kMonitor, compare(
                      options, calls,
                      [](int n) {
                        for (int i = 0; i < n; ++i) {
                          XMPI_Monitor_iter_begin(nullptr);
                          XMPI_Monitor_iter_end(nullptr);
                        }
                      },
                      [](int n) {
                        for (int i = 0; i < n; ++i) asm volatile("" ::: "memory");
                      }));

  std::vector<double> all(rank == 0 ? static_cast<std::size_t>(size) * mine.size() : 0);
  PMPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
              static_cast<int>(mine.size()), MPI_DOUBLE, 0, XMPI_COMM_WORLD);
  if (rank == 0) {
    std::printf(
        "bench-pmpi-overhead: %d process(es), %d repetitions of %d calls (%d round trips), "
        "medians\n",
        size, options.repetitions, calls, trips);
    std::printf("MPI_Barrier resolves to %s\n", barrier_provider().c_str());
    std::printf("%-34s %4s %10s %10s %10s %17s %9s %8s\n", "operation", "rank", "MPI_X ns",
                "PMPI_X ns", "added ns", "added p25..p75", "per call", "x floor");
    for (int slot = 0; slot < kSlots; ++slot) {
      for (int p = 0; p < size; ++p) {
        const double* v = &all[(static_cast<std::size_t>(p) * kSlots + slot) * kFields];
        if (v[0] < 0) continue;
        const double floor = all[static_cast<std::size_t>(p) * kSlots * kFields + 2];
        const double per_call = v[2] / kRows[slot].wrapped_calls;
        std::printf("%-34s %4d %10.1f %10.1f %10.1f %8.1f..%-8.1f %9.1f %8.2f\n", kRows[slot].name,
                    p, v[0], v[1], v[2], v[3], v[4], per_call, per_call / floor);
      }
    }
    std::printf(
        "added = median over repetitions of (MPI_X - PMPI_X), the two timed back to back;\n"
        "x floor = per call / the floor's added (two timer reads, the least a timed call costs).\n"
        "Round trip: 4 wrapped calls (Send and Recv on each rank), per call = added / 4; part of\n"
        "a wrapper's work overlaps the wait for the peer, so added / 2 bounds it per message.\n"
        "Floor and XMPI_Monitor_iter_begin+end: the PMPI_X column is an empty loop.\n");
  }
  MPI_Finalize();
  return 0;
}
