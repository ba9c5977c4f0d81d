// The communication profile (thesis 4.2.2): one row per (operation,
// communicator size), totals, and the difference between two snapshots.
#include "profiling/comm_profile.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "util/clock.hpp"

namespace flexmpi {
namespace {

const OpRecord* find(const std::vector<OpRecord>& rows, MpiOp op, int comm_size) {
  for (const OpRecord& row : rows) {
    if (row.op == op && row.comm_size == comm_size) return &row;
  }
  return nullptr;
}

// The PMPI wrappers' timer against CLOCK_MONOTONIC over 20 ms, for 20
// calibrations in a row: a timer whose rate is off reports MPI time that is
// not the process's (one rank of an AMP run measured every iteration as MPI
// time). A preemption inside a calibration is too rare to provoke here; the
// calibration's tight pairs are what keep it out.
TEST(IntervalTimer, MeasuresLikeTheWallClock) {
  for (int calibration = 0; calibration < 20; ++calibration) {
    const IntervalTimer timer;
    const double wall_start = wall_seconds();
    const std::uint64_t start = timer.now();
    while (wall_seconds() - wall_start < 20e-3) {
    }
    const std::uint64_t end = timer.now();
    const double wall = wall_seconds() - wall_start;
    EXPECT_NEAR(timer.seconds(end - start) / wall, 1.0, 0.02) << "calibration " << calibration;
  }
}

TEST(CommProfile, EmptyProfile) {
  const CommProfile profile;
  EXPECT_TRUE(profile.records().empty());
  EXPECT_EQ(profile.totals().calls, 0u);
  EXPECT_EQ(profile.mpi_seconds(), 0.0);
}

TEST(CommProfile, RecordsOneRowPerOperationAndCommSize) {
  CommProfile profile;
  profile.record(MpiOp::Send, 2, 80, 0, 5000);
  profile.record(MpiOp::Send, 2, 16, 0, 2500);
  profile.record(MpiOp::Send, 4, 8, 0, 1250);
  profile.record(MpiOp::Recv, 2, 0, 40, 10000);
  profile.record(MpiOp::Wait, 0, 0, 0, 625);

  const auto rows = profile.records();
  ASSERT_EQ(rows.size(), 4u);
  const OpRecord* send2 = find(rows, MpiOp::Send, 2);
  ASSERT_NE(send2, nullptr);
  EXPECT_EQ(send2->stats.calls, 2u);
  EXPECT_EQ(send2->stats.bytes_sent, 96u);
  EXPECT_EQ(send2->stats.bytes_received, 0u);
  EXPECT_DOUBLE_EQ(send2->stats.seconds, profile.timer().seconds(7500));
  const OpRecord* send4 = find(rows, MpiOp::Send, 4);
  ASSERT_NE(send4, nullptr);
  EXPECT_EQ(send4->stats.calls, 1u);
  EXPECT_EQ(send4->stats.bytes_sent, 8u);
  const OpRecord* recv = find(rows, MpiOp::Recv, 2);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->stats.calls, 1u);
  EXPECT_EQ(recv->stats.bytes_received, 40u);
  const OpRecord* wait = find(rows, MpiOp::Wait, 0);
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->stats.calls, 1u);

  // Rows come in operation order (the order of mpi_functions.def).
  for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_LE(rows[i - 1].op, rows[i].op);
}

TEST(CommProfile, TotalsSumEveryCall) {
  CommProfile profile;
  profile.record(MpiOp::Allreduce, 3, 24, 24, 5000);
  profile.record(MpiOp::Bcast, 3, 0, 100, 2500);
  profile.record(MpiOp::Barrier, 3, 0, 0, 1250);
  const OpStats totals = profile.totals();
  EXPECT_EQ(totals.calls, 3u);
  EXPECT_EQ(totals.bytes_sent, 24u);
  EXPECT_EQ(totals.bytes_received, 124u);
  EXPECT_DOUBLE_EQ(totals.seconds, profile.timer().seconds(8750));
  EXPECT_EQ(profile.mpi_seconds(), 0.0);  // rows only: no call was under way
}

// A wrapped call through the wrappers' path, on MPI_COMM_NULL (no MPI needed),
// that lasts `seconds`.
void timed_call(CommProfile& profile, MpiOp op, double seconds) {
  const std::uint64_t start = profile.call_starts();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  profile.call_ends(
      op, MPI_COMM_NULL, true, [](const CommShape&) { return CommProfile::Bytes{}; }, start);
}

// Two threads of one process inside MPI at once (MPI_THREAD_MULTIPLE): the
// process's MPI time is the time at least one of them was inside, never
// more than the wall time; the rows keep each call's own time.
TEST(CommProfile, MpiTimeOfOverlappingThreadsCountsOnce) {
  constexpr double kCall = 0.1;
  CommProfile profile(true);
  const double wall_start = wall_seconds();
  std::thread other([&] { timed_call(profile, MpiOp::Recv, kCall); });
  timed_call(profile, MpiOp::Recv, kCall);
  other.join();
  const double wall = wall_seconds() - wall_start;
  EXPECT_LE(profile.mpi_seconds(), wall);
  EXPECT_GE(profile.mpi_seconds(), kCall);
  EXPECT_LT(profile.mpi_seconds(), 1.5 * kCall) << "the overlap was counted twice";
  EXPECT_GE(profile.totals().seconds, 2 * kCall);
  EXPECT_EQ(profile.totals().calls, 2u);
}

// An MPI call made inside another (an MPI library using its own interface)
// adds nothing to the MPI time; a call under way counts up to now.
TEST(CommProfile, NestedAndOpenCallsInMpiTime) {
  constexpr double kStep = 0.02;
  CommProfile profile;
  const std::uint64_t outer = profile.call_starts();
  std::this_thread::sleep_for(std::chrono::duration<double>(kStep));
  timed_call(profile, MpiOp::Send, kStep);
  std::this_thread::sleep_for(std::chrono::duration<double>(kStep));
  const double while_inside = profile.mpi_seconds();
  EXPECT_GE(while_inside, 3 * kStep);
  profile.call_ends(
      MpiOp::Wait, MPI_COMM_NULL, false, [](const CommShape&) { return CommProfile::Bytes{}; },
      outer);
  const double after = profile.mpi_seconds();
  EXPECT_GE(after, while_inside);
  EXPECT_LT(after, while_inside + kStep) << "the nested call was counted again";
  EXPECT_GE(profile.totals().seconds, after + kStep);  // rows: outer + nested
  std::this_thread::sleep_for(std::chrono::duration<double>(kStep));
  EXPECT_EQ(profile.mpi_seconds(), after) << "no call under way: the MPI time stands still";
  EXPECT_NE(find(profile.records(), MpiOp::Wait, 0), nullptr);  // a failed call: size 0
}

TEST(CommProfile, DifferenceKeepsOnlyWhatHappenedBetweenSnapshots) {
  CommProfile profile;
  profile.record(MpiOp::Send, 2, 80, 0, 5000);
  profile.record(MpiOp::Barrier, 2, 0, 0, 2500);
  const auto before = profile.records();
  profile.record(MpiOp::Send, 2, 8, 0, 1250);          // an existing row grows
  profile.record(MpiOp::Allreduce, 2, 16, 16, 10000);  // a new row appears
  const auto diff = profile_difference(profile.records(), before);

  ASSERT_EQ(diff.size(), 2u);  // the unchanged Barrier row is dropped
  const OpRecord* send = find(diff, MpiOp::Send, 2);
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(send->stats.calls, 1u);
  EXPECT_EQ(send->stats.bytes_sent, 8u);
  EXPECT_NEAR(send->stats.seconds, profile.timer().seconds(1250), 1e-15);
  const OpRecord* allreduce = find(diff, MpiOp::Allreduce, 2);
  ASSERT_NE(allreduce, nullptr);
  EXPECT_EQ(allreduce->stats.calls, 1u);
  EXPECT_EQ(allreduce->stats.bytes_sent, 16u);
  EXPECT_EQ(allreduce->stats.bytes_received, 16u);
  EXPECT_EQ(find(diff, MpiOp::Barrier, 2), nullptr);

  EXPECT_TRUE(profile_difference(profile.records(), profile.records()).empty());
  EXPECT_EQ(profile_difference(profile.records(), {}).size(), 3u);
}

TEST(CommProfile, DifferenceTellsCommSizesApart) {
  CommProfile profile;
  profile.record(MpiOp::Allreduce, 2, 8, 8, 0);
  const auto before = profile.records();
  profile.record(MpiOp::Allreduce, 4, 8, 8, 0);
  const auto diff = profile_difference(profile.records(), before);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].comm_size, 4);
}

TEST(CommProfile, ThreadSafeProfileLosesNoCall) {
  // MPI_THREAD_MULTIPLE: several threads record at once.
  CommProfile profile(true);
  constexpr int kThreads = 4;
  constexpr int kCalls = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&profile, t] {
      for (int i = 0; i < kCalls; ++i) profile.record(MpiOp::Send, 2 + t % 2, 3, 1, 0);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(profile.totals().calls, std::uint64_t{kThreads} * kCalls);
  EXPECT_EQ(profile.totals().bytes_sent, std::uint64_t{3} * kThreads * kCalls);
  std::uint64_t row_calls = 0;
  for (const OpRecord& row : profile.records()) row_calls += row.stats.calls;
  EXPECT_EQ(row_calls, std::uint64_t{kThreads} * kCalls);
  EXPECT_EQ(profile.records().size(), 2u);
}

TEST(CommProfile, ThreadSafeProfileCanBeReadWhileOthersRecord) {
  // The monitor reads records() at interval ends while, with
  // MPI_THREAD_MULTIPLE, other threads keep calling MPI. New communicator
  // sizes make the rows grow (and reallocate) during the reads.
  CommProfile profile(true);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int size = 1; size <= 2000; ++size) {
      for (std::size_t op = 0; op < kMpiOpCount; ++op) {
        profile.record(static_cast<MpiOp>(op), size, 1, 1, 0);
      }
    }
    done = true;
  });
  std::uint64_t last_calls = 0;
  while (!done) {
    std::uint64_t calls = 0;
    for (const OpRecord& row : profile.records()) {
      ASSERT_EQ(row.stats.calls, 1u);  // every row was recorded once
      calls += row.stats.calls;
    }
    EXPECT_GE(calls, last_calls);
    last_calls = calls;
  }
  writer.join();
  EXPECT_EQ(profile.records().size(), 2000 * kMpiOpCount);
}

TEST(MpiOpName, NamesTheMpiFunction) {
  EXPECT_EQ(mpi_op_name(MpiOp::Send), "MPI_Send");
  EXPECT_EQ(mpi_op_name(MpiOp::Recv), "MPI_Recv");
  EXPECT_EQ(mpi_op_name(MpiOp::Allreduce), "MPI_Allreduce");
  EXPECT_EQ(mpi_op_name(MpiOp::Waitall), "MPI_Waitall");
  EXPECT_EQ(mpi_op_name(MpiOp::Alltoallv), "MPI_Alltoallv");
}

TEST(MpiOpName, EveryOperationHasADistinctName) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kMpiOpCount; ++i) {
    const std::string_view name = mpi_op_name(static_cast<MpiOp>(i));
    EXPECT_TRUE(name.starts_with("MPI_")) << name;
    EXPECT_GT(name.size(), 4u);
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  EXPECT_GE(kMpiOpCount, 20u);  // the families the thesis profiles
}

}  // namespace
}  // namespace flexmpi
