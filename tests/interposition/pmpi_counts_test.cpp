// PMPI wrappers (thesis 4.2.2): every wrapped family counts calls and bytes
// exactly as src/profiling/mpi_functions.def documents, from this process's
// point of view, keyed by communicator size. Runs on 2, 3 and 4 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <numeric>
#include <vector>

#include "../support/mpi_test_util.hpp"

namespace flexmpi::test {
namespace {

constexpr std::uint64_t kDouble = sizeof(double);
constexpr std::uint64_t kInt = sizeof(int);

class PmpiCounts : public ::testing::Test {
 protected:
  void SetUp() override {
    rank_ = world_rank();
    size_ = world_size();
    ASSERT_GE(size_, 2);
    // Line the ranks up so no message of one test is pending in the next.
    MPI_Barrier(XMPI_COMM_WORLD);
  }
  void TearDown() override { MPI_Barrier(XMPI_COMM_WORLD); }

  [[nodiscard]] int right() const { return (rank_ + 1) % size_; }
  [[nodiscard]] int left() const { return (rank_ + size_ - 1) % size_; }
  [[nodiscard]] std::uint64_t group() const { return static_cast<std::uint64_t>(size_); }
  [[nodiscard]] std::uint64_t ranks_sum() const {  // 1 + 2 + ... + size
    return group() * (group() + 1) / 2;
  }

  int rank_ = -1;
  int size_ = 0;
  MPI_Comm comm_ = XMPI_COMM_WORLD;
};

TEST_F(PmpiCounts, SendAndRecvCountPayloadAndActualReceivedSize) {
  std::vector<double> doubles(10, 1.0);
  std::vector<int> ints(8, 2);
  const auto before = snapshot();
  if (rank_ == 0) {
    MPI_Send(doubles.data(), 7, MPI_DOUBLE, 1, 11, comm_);
    MPI_Status status;
    MPI_Recv(ints.data(), 8, MPI_INT, 1, 12, comm_, &status);  // buffer larger than the message
    int received = 0;
    MPI_Get_count(&status, MPI_INT, &received);
    EXPECT_EQ(received, 5);  // the status the caller passed is filled in
    expect_recorded(
        before, {{MpiOp::Send, size_, 1, 7 * kDouble, 0}, {MpiOp::Recv, size_, 1, 0, 5 * kInt}});
  } else if (rank_ == 1) {
    // MPI_STATUS_IGNORE: the wrapper still knows the received size.
    MPI_Recv(doubles.data(), 10, MPI_DOUBLE, 0, 11, comm_, MPI_STATUS_IGNORE);
    MPI_Send(ints.data(), 5, MPI_INT, 0, 12, comm_);
    expect_recorded(
        before, {{MpiOp::Recv, size_, 1, 0, 7 * kDouble}, {MpiOp::Send, size_, 1, 5 * kInt, 0}});
  } else {
    expect_recorded(before, {});
  }
}

TEST_F(PmpiCounts, DerivedContiguousTypeCountsItsFullSize) {
  MPI_Datatype triple;
  MPI_Type_contiguous(3, MPI_DOUBLE, &triple);
  MPI_Type_commit(&triple);
  std::vector<double> buffer(4 * 3, 0.5);
  const auto before = snapshot();
  if (rank_ == 0) {
    MPI_Send(buffer.data(), 2, triple, 1, 21, comm_);
    expect_recorded(before, {{MpiOp::Send, size_, 1, 2 * 3 * kDouble, 0}});
  } else if (rank_ == 1) {
    MPI_Recv(buffer.data(), 4, triple, 0, 21, comm_, MPI_STATUS_IGNORE);
    expect_recorded(before, {{MpiOp::Recv, size_, 1, 0, 2 * 3 * kDouble}});
  } else {
    expect_recorded(before, {});
  }
  MPI_Type_free(&triple);
}

TEST_F(PmpiCounts, Ssend) {
  std::vector<int> buffer(3, 7);
  const auto before = snapshot();
  if (rank_ == 0) {
    MPI_Ssend(buffer.data(), 3, MPI_INT, 1, 31, comm_);
    expect_recorded(before, {{MpiOp::Ssend, size_, 1, 3 * kInt, 0}});
  } else if (rank_ == 1) {
    MPI_Status status;
    MPI_Recv(buffer.data(), 3, MPI_INT, 0, 31, comm_, &status);
    expect_recorded(before, {{MpiOp::Recv, size_, 1, 0, 3 * kInt}});
  } else {
    expect_recorded(before, {});
  }
}

TEST_F(PmpiCounts, RsendToAPostedReceive) {
  std::vector<double> buffer(6, 1.0);
  MPI_Request request = MPI_REQUEST_NULL;
  if (rank_ == 1) MPI_Irecv(buffer.data(), 6, MPI_DOUBLE, 0, 41, comm_, &request);
  MPI_Barrier(comm_);  // the receive is posted before the ready send
  const auto before = snapshot();
  if (rank_ == 0) {
    MPI_Rsend(buffer.data(), 6, MPI_DOUBLE, 1, 41, comm_);
    expect_recorded(before, {{MpiOp::Rsend, size_, 1, 6 * kDouble, 0}});
  } else if (rank_ == 1) {
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    expect_recorded(before, {{MpiOp::Wait, 0, 1, 0, 0}});
  } else {
    expect_recorded(before, {});
  }
}

TEST_F(PmpiCounts, NonBlockingCountBytesWhenPostedAndCompletionCallsSeparately) {
  std::vector<double> to_right(4, 1.0), from_left(4);
  std::vector<int> to_left(3, 2), from_right(3);
  MPI_Request requests[4];
  const auto before = snapshot();
  MPI_Irecv(from_left.data(), 4, MPI_DOUBLE, left(), 51, comm_, &requests[0]);
  MPI_Irecv(from_right.data(), 3, MPI_INT, right(), 52, comm_, &requests[1]);
  MPI_Isend(to_right.data(), 4, MPI_DOUBLE, right(), 51, comm_, &requests[2]);
  MPI_Isend(to_left.data(), 3, MPI_INT, left(), 52, comm_, &requests[3]);
  MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  MPI_Waitall(3, &requests[1], MPI_STATUSES_IGNORE);
  expect_recorded(before, {{MpiOp::Irecv, size_, 2, 0, 4 * kDouble + 3 * kInt},
                           {MpiOp::Isend, size_, 2, 4 * kDouble + 3 * kInt, 0},
                           {MpiOp::Wait, 0, 1, 0, 0},
                           {MpiOp::Waitall, 0, 1, 0, 0}});
  EXPECT_EQ(from_left[3], 1.0);
  EXPECT_EQ(from_right[2], 2);
}

TEST_F(PmpiCounts, WaitanyAndProbe) {
  std::vector<int> buffer(5, 3);
  const auto before = snapshot();
  if (rank_ == 0) {
    MPI_Request request;
    MPI_Isend(buffer.data(), 5, MPI_INT, 1, 61, comm_, &request);
    int index = -1;
    MPI_Waitany(1, &request, &index, MPI_STATUS_IGNORE);
    EXPECT_EQ(index, 0);
    expect_recorded(before, {{MpiOp::Isend, size_, 1, 5 * kInt, 0}, {MpiOp::Waitany, 0, 1, 0, 0}});
  } else if (rank_ == 1) {
    MPI_Status status;
    MPI_Probe(0, 61, comm_, &status);
    MPI_Recv(buffer.data(), 5, MPI_INT, 0, 61, comm_, MPI_STATUS_IGNORE);
    expect_recorded(before, {{MpiOp::Probe, size_, 1, 0, 0}, {MpiOp::Recv, size_, 1, 0, 5 * kInt}});
  } else {
    expect_recorded(before, {});
  }
}

TEST_F(PmpiCounts, SendrecvCountsSentAndActuallyReceived) {
  std::vector<double> out(5, static_cast<double>(rank_)), in(8, -1.0);
  const auto before = snapshot();
  MPI_Sendrecv(out.data(), 5, MPI_DOUBLE, right(), 71, in.data(), 8, MPI_DOUBLE, left(), 71, comm_,
               MPI_STATUS_IGNORE);
  expect_recorded(before, {{MpiOp::Sendrecv, size_, 1, 5 * kDouble, 5 * kDouble}});
  EXPECT_EQ(in[0], static_cast<double>(left()));
}

TEST_F(PmpiCounts, BcastRootSendsOthersReceive) {
  std::vector<int> buffer(9, rank_);
  const auto before = snapshot();
  MPI_Bcast(buffer.data(), 9, MPI_INT, 0, comm_);
  MPI_Bcast(buffer.data(), 9, MPI_INT, size_ - 1, comm_);
  // Rank 0 is root once; the last rank is root once; others never.
  const std::uint64_t as_root = (rank_ == 0 ? 1 : 0) + (rank_ == size_ - 1 ? 1 : 0);
  expect_recorded(before, {{MpiOp::Bcast, size_, 2, as_root * 9 * kInt, (2 - as_root) * 9 * kInt}});
}

TEST_F(PmpiCounts, ReduceEveryoneSendsRootReceives) {
  std::vector<double> mine(6, 1.0), sum(6, 0.0);
  const int root = 1;
  const auto before = snapshot();
  MPI_Reduce(mine.data(), sum.data(), 6, MPI_DOUBLE, MPI_SUM, root, comm_);
  expect_recorded(before,
                  {{MpiOp::Reduce, size_, 1, 6 * kDouble, rank_ == root ? 6 * kDouble : 0}});
  if (rank_ == root) {
    EXPECT_EQ(sum[5], static_cast<double>(size_));
  }
}

TEST_F(PmpiCounts, AllreduceSendsAndReceivesCount) {
  std::vector<double> mine(5, 2.0), sum(5, 0.0);
  std::vector<int> in_place(3, 1);
  const auto before = snapshot();
  MPI_Allreduce(mine.data(), sum.data(), 5, MPI_DOUBLE, MPI_SUM, comm_);
  MPI_Allreduce(MPI_IN_PLACE, in_place.data(), 3, MPI_INT, MPI_SUM, comm_);
  expect_recorded(before,
                  {{MpiOp::Allreduce, size_, 2, 5 * kDouble + 3 * kInt, 5 * kDouble + 3 * kInt}});
  EXPECT_EQ(sum[0], 2.0 * size_);
  EXPECT_EQ(in_place[2], size_);
}

TEST_F(PmpiCounts, GatherRootReceivesFromTheWholeGroup) {
  MPI_Datatype triple;
  MPI_Type_contiguous(3, MPI_DOUBLE, &triple);
  MPI_Type_commit(&triple);
  std::vector<double> mine(2 * 3, rank_), all(2 * 3 * static_cast<std::size_t>(size_));
  const auto before = snapshot();
  MPI_Gather(mine.data(), 2, triple, all.data(), 2, triple, 0, comm_);
  const std::uint64_t block = 2 * 3 * kDouble;
  expect_recorded(before, {{MpiOp::Gather, size_, 1, block, rank_ == 0 ? group() * block : 0}});
  if (rank_ == 0) {
    EXPECT_EQ(all.back(), static_cast<double>(size_ - 1));
  }
  MPI_Type_free(&triple);
}

TEST_F(PmpiCounts, GathervRootReceivesTheSumOfCounts) {
  // Rank r contributes r + 1 ints.
  std::vector<int> mine(static_cast<std::size_t>(rank_) + 1, rank_);
  std::vector<int> counts(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    counts[r] = r + 1;
    displs[r] = r * (r + 1) / 2;
  }
  std::vector<int> all(ranks_sum());
  const auto before = snapshot();
  MPI_Gatherv(mine.data(), rank_ + 1, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT, 0,
              comm_);
  expect_recorded(before, {{MpiOp::Gatherv, size_, 1, (rank_ + 1) * kInt,
                            rank_ == 0 ? ranks_sum() * kInt : 0}});
  if (rank_ == 0) {
    EXPECT_EQ(all.back(), size_ - 1);
  }
}

TEST_F(PmpiCounts, AllgatherEveryoneReceivesTheGroup) {
  std::vector<int> mine(3, rank_), all(3 * static_cast<std::size_t>(size_));
  const auto before = snapshot();
  MPI_Allgather(mine.data(), 3, MPI_INT, all.data(), 3, MPI_INT, comm_);
  expect_recorded(before, {{MpiOp::Allgather, size_, 1, 3 * kInt, group() * 3 * kInt}});
  EXPECT_EQ(all.back(), size_ - 1);
}

TEST_F(PmpiCounts, AllgathervEveryoneReceivesTheSumOfCounts) {
  std::vector<double> mine(static_cast<std::size_t>(rank_) + 1, rank_);
  std::vector<int> counts(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    counts[r] = r + 1;
    displs[r] = r * (r + 1) / 2;
  }
  std::vector<double> all(ranks_sum());
  const auto before = snapshot();
  MPI_Allgatherv(mine.data(), rank_ + 1, MPI_DOUBLE, all.data(), counts.data(), displs.data(),
                 MPI_DOUBLE, comm_);
  expect_recorded(before,
                  {{MpiOp::Allgatherv, size_, 1, (rank_ + 1) * kDouble, ranks_sum() * kDouble}});
  EXPECT_EQ(all.back(), static_cast<double>(size_ - 1));
}

TEST_F(PmpiCounts, ScatterRootSendsToTheWholeGroup) {
  const int root = size_ - 1;
  std::vector<double> all(2 * static_cast<std::size_t>(size_), 4.0), mine(2);
  const auto before = snapshot();
  MPI_Scatter(all.data(), 2, MPI_DOUBLE, mine.data(), 2, MPI_DOUBLE, root, comm_);
  expect_recorded(
      before, {{MpiOp::Scatter, size_, 1, rank_ == root ? group() * 2 * kDouble : 0, 2 * kDouble}});
  EXPECT_EQ(mine[1], 4.0);
}

TEST_F(PmpiCounts, ScattervRootSendsTheSumOfCounts) {
  std::vector<int> counts(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    counts[r] = r + 1;
    displs[r] = r * (r + 1) / 2;
  }
  std::vector<int> all(ranks_sum(), 9), mine(static_cast<std::size_t>(rank_) + 1);
  const auto before = snapshot();
  MPI_Scatterv(all.data(), counts.data(), displs.data(), MPI_INT, mine.data(), rank_ + 1, MPI_INT,
               0, comm_);
  expect_recorded(before, {{MpiOp::Scatterv, size_, 1, rank_ == 0 ? ranks_sum() * kInt : 0,
                            (rank_ + 1) * kInt}});
  EXPECT_EQ(mine.back(), 9);
}

TEST_F(PmpiCounts, AlltoallSendsAndReceivesTheGroup) {
  std::vector<int> out(2 * static_cast<std::size_t>(size_), rank_), in(out.size());
  const auto before = snapshot();
  MPI_Alltoall(out.data(), 2, MPI_INT, in.data(), 2, MPI_INT, comm_);
  expect_recorded(before, {{MpiOp::Alltoall, size_, 1, group() * 2 * kInt, group() * 2 * kInt}});
  EXPECT_EQ(in.back(), size_ - 1);
}

TEST_F(PmpiCounts, AlltoallvSendsAndReceivesTheSumsOfCounts) {
  // Rank r sends j + 1 doubles to rank j, so it receives r + 1 from everyone.
  std::vector<int> send_counts(static_cast<std::size_t>(size_)),
      send_displs(static_cast<std::size_t>(size_)), recv_counts(static_cast<std::size_t>(size_)),
      recv_displs(static_cast<std::size_t>(size_));
  for (int j = 0; j < size_; ++j) {
    send_counts[j] = j + 1;
    send_displs[j] = j * (j + 1) / 2;
    recv_counts[j] = rank_ + 1;
    recv_displs[j] = j * (rank_ + 1);
  }
  std::vector<double> out(ranks_sum(), 1.5), in(group() * (rank_ + 1));
  const auto before = snapshot();
  MPI_Alltoallv(out.data(), send_counts.data(), send_displs.data(), MPI_DOUBLE, in.data(),
                recv_counts.data(), recv_displs.data(), MPI_DOUBLE, comm_);
  expect_recorded(before, {{MpiOp::Alltoallv, size_, 1, ranks_sum() * kDouble,
                            group() * (rank_ + 1) * kDouble}});
  EXPECT_EQ(in.back(), 1.5);
}

TEST_F(PmpiCounts, BarrierMovesNoBytes) {
  const auto before = snapshot();
  MPI_Barrier(comm_);
  MPI_Barrier(comm_);
  expect_recorded(before, {{MpiOp::Barrier, size_, 2, 0, 0}});
}

TEST_F(PmpiCounts, RowsAreKeyedByCommunicatorSize) {
  // Even and odd ranks: two communicators whose sizes differ when size_ is odd.
  MPI_Comm half;
  MPI_Comm_split(comm_, rank_ % 2, rank_, &half);
  int half_size = 0;
  MPI_Comm_size(half, &half_size);
  double value = 1.0, sum = 0.0;
  const auto before = snapshot();
  MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, half);
  MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, comm_);
  if (half_size == size_) {
    expect_recorded(before, {{MpiOp::Allreduce, size_, 2, 2 * kDouble, 2 * kDouble}});
  } else {
    expect_recorded(before, {{MpiOp::Allreduce, half_size, 1, kDouble, kDouble},
                             {MpiOp::Allreduce, size_, 1, kDouble, kDouble}});
  }
  MPI_Comm_free(&half);
}

TEST_F(PmpiCounts, TotalsAgreeWithRows) {
  const OpStats totals_before = runtime().comm_profile().totals();
  const auto before = snapshot();
  std::vector<int> buffer(4, 1);
  MPI_Bcast(buffer.data(), 4, MPI_INT, 0, comm_);
  MPI_Allreduce(MPI_IN_PLACE, buffer.data(), 4, MPI_INT, MPI_SUM, comm_);
  MPI_Barrier(comm_);
  OpStats rows;
  for (const OpRecord& r : profile_difference(snapshot(), before)) rows += r.stats;
  OpStats totals = runtime().comm_profile().totals();
  totals -= totals_before;
  EXPECT_EQ(totals.calls, 3u);
  EXPECT_EQ(totals.calls, rows.calls);
  EXPECT_EQ(totals.bytes_sent, rows.bytes_sent);
  EXPECT_EQ(totals.bytes_received, rows.bytes_received);
  EXPECT_NEAR(totals.seconds, rows.seconds, 1e-9);
  EXPECT_GE(totals.seconds, 0.0);
}

}  // namespace
}  // namespace flexmpi::test
