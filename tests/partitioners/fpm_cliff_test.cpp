// A memory cliff on a real run (FPM paper sec. 4 on this machine): rank 1
// runs its first 1000 rows at full speed and the rows beyond 5 times slower
// (FLEXMPI_EMULATE_SPEED=1.0,1.0@1000:0.2, set by CTest), so 3000 rows are
// balanced at 1833 : 1167. The same program runs twice:
//  - FLEXMPI_PARTITIONER=fpm-akima must converge there and stay;
//  - FLEXMPI_PARTITIONER=rcp, the constant model, measures rank 1 fast
//    below the cliff and slow beyond it and keeps jumping across it
//    (900 <-> 1500 rows), never balanced.
// Noise of the shared machine: medians of several intervals, generous bounds.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/runtime.hpp"
#include "flexmpi.h"

namespace {

constexpr int kRows = 3000;
constexpr int kBalanced = 1167;  // rank 1's rows: 3000 - x = 1000 + 5 (x - 1000)

// Work proportional to the rows held: ~4 us per row on this machine, so
// that an interval (~60 ms) is long against the scheduler's time slices.
double compute(const double* x, int count) {
  double sum = 0.0;
  for (int i = 0; i < count; ++i) {
    for (int k = 0; k < 800; ++k) sum += x[i] * 1e-9 * k;
  }
  return sum;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

struct Trajectory {
  std::vector<int> rank1_rows;    // after each evaluated interval
  std::vector<double> imbalance;  // measured in that interval
};

Trajectory run(int intervals) {
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  int count = 0, displ = 0;
  EXPECT_EQ(XMPI_Get_wsize(rank, nprocs, kRows, &count, &displ), XMPI_SUCCESS);
  auto* x = static_cast<double*>(std::malloc(sizeof(double) * count));
  for (int i = 0; i < count; ++i) x[i] = displ + i;
  EXPECT_EQ(XMPI_Register_vector(&x, kRows, MPI_DOUBLE, XMPI_DISTRIBUTED), XMPI_SUCCESS);
  flexmpi::Runtime& runtime = flexmpi::Runtime::get();
  const int per_interval = runtime.config().sampling_interval;
  const int iterations = intervals * per_interval;
  Trajectory trajectory;
  volatile double sink = 0.0;
  int last_index = -1;
  for (int it = 0; it < iterations; ++it) {
    EXPECT_EQ(XMPI_Monitor_si_init(), XMPI_SUCCESS);
    sink = sink + compute(x, count);
    EXPECT_EQ(XMPI_Eval_lbalance(rank, nprocs, it, iterations + 1, &count, &displ, nullptr),
              XMPI_SUCCESS)
        << XMPI_Last_error_message();
    const auto& report = runtime.last_interval();
    if (report && report->index != last_index) {
      last_index = report->index;
      int rows1 = count;
      MPI_Bcast(&rows1, 1, MPI_INT, 1, XMPI_COMM_WORLD);
      trajectory.rank1_rows.push_back(rows1);
      trajectory.imbalance.push_back(report->imbalance(runtime.config().dedicated_threshold));
    }
    for (int i = 0; i < count; ++i) {
      if (x[i] != displ + i) {
        ADD_FAILURE() << "element " << displ + i << " holds " << x[i];
        break;
      }
    }
  }
  std::free(x);
  return trajectory;
}

std::string describe(const Trajectory& t) {
  std::string text;
  for (std::size_t i = 0; i < t.rank1_rows.size(); ++i) {
    char item[64];
    std::snprintf(item, sizeof item, "%d (%.0f%%) ", t.rank1_rows[i], 100 * t.imbalance[i]);
    text += item;
  }
  return text;
}

TEST(MemoryCliff, FpmConvergesWhereTheConstantModelDoesNot) {
  ASSERT_EQ(flexmpi::Runtime::get().size(), 2);
  const std::string partitioner = flexmpi::Runtime::get().config().partitioner;
  // 24 intervals of 8 iterations: on a busy machine a redistribution of these
  // few rows costs milliseconds (its handshakes wait for a descheduled
  // process), and a last correction after a move that was undone must still
  // pay for itself in what is left of the run (with 18, it did not: CI).
  const Trajectory t = run(24);
  ASSERT_GE(t.rank1_rows.size(), 16u);
  // Rank 1's rows after each interval (imbalance measured in it).
  if (flexmpi::Runtime::get().rank() == 0) {
    std::printf("%s: rank 1 rows after each interval: %s\n", partitioner.c_str(),
                describe(t).c_str());
  }
  const std::vector<double> last(t.imbalance.end() - 6, t.imbalance.end());  // measured
  // Jumps across the cliff: from below 1000 rows to above 1300 or back.
  int jumps = 0;
  for (std::size_t i = 1; i < t.rank1_rows.size(); ++i) {
    const int a = std::min(t.rank1_rows[i - 1], t.rank1_rows[i]);
    const int b = std::max(t.rank1_rows[i - 1], t.rank1_rows[i]);
    if (a <= 1000 && b >= 1300) ++jumps;
  }
  if (partitioner == "fpm-akima" || partitioner == "fpm-geometric") {
    // Converged (the paper: by the 7th iteration) and stays there: the last
    // partitions close together, around the balance point. Not judged by the
    // measured imbalance: other jobs on the shared cores spoil single
    // intervals (a time slice taken from one rank reads as imbalance), and
    // the real balance point moves a little with them.
    std::vector<double> rows(t.rank1_rows.end() - 6, t.rank1_rows.end());
    EXPECT_NEAR(median(rows), kBalanced, 0.15 * kBalanced) << describe(t);
    const auto [low, high] = std::minmax_element(rows.begin(), rows.end());
    EXPECT_LE(*high - *low, 200) << describe(t);
    EXPECT_LE(jumps, 2) << describe(t);
  } else {
    // The constant model keeps jumping across the cliff, or settles on a
    // poor partition: on this cliff 1 % of rank 1's rows past the balance
    // point is ~4 % imbalance, so a partition the 15 % threshold lets stand
    // is still >= 10 % off (seen: 1214 rows at 14-15 % for 10 intervals).
    // Only a landing within ~2 % of the balance point would fail this.
    EXPECT_TRUE(jumps >= 3 || median(last) > 0.1) << describe(t);
  }
}

}  // namespace
