// The interval exchange (thesis 3.3, 4.2): at the end of every sampling
// interval all processes hold the same report, one entry per process, with
// the work metric's counts and the communication of the interval.
// Runs with FLEXMPI_SAMPLING_INTERVAL=4 and FLEXMPI_METRIC=work.
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <vector>

#include "../support/mpi_test_util.hpp"
#include "flexmpi/flexmpi.hpp"

namespace flexmpi::test {
namespace {

constexpr int kInterval = 4;
constexpr int kRows = 1001;

class IntervalExchange : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(runtime().config().sampling_interval, kInterval);
    ASSERT_EQ(runtime().config().metric, "work");
    rank_ = world_rank();
    size_ = world_size();
  }

  // Completes the interval earlier tests left open, then runs one whole empty
  // interval, so that the next one starts right after a close with no MPI
  // call of earlier tests counted in it.
  static void start_fresh_interval() {
    for (int i = 0; i < kInterval && runtime().monitor().iterations_monitored() % kInterval; ++i) {
      iteration([] {});
    }
    for (int i = 0; i < kInterval; ++i) iteration([] {});
  }

  template <class Body>
  static void iteration(Body body) {
    monitored_iteration(body);
  }

  int rank_ = -1;
  int size_ = 0;
};

// Every field of a report, to compare it across processes.
std::vector<double> flatten(const IntervalReport& report) {
  std::vector<double> values = {static_cast<double>(report.index),
                                static_cast<double>(report.first_iteration),
                                static_cast<double>(report.processes.size())};
  for (const ProcessInterval& p : report.processes) {
    std::array<double, ProcessInterval::kFieldCount> packed{};
    p.pack(packed);
    values.insert(values.end(), packed.begin(), packed.end());
  }
  return values;
}

void expect_same_on_every_rank(const std::vector<double>& mine) {
  // Agree on the length first, so that every rank takes the same path.
  int lengths[2] = {static_cast<int>(mine.size()), -static_cast<int>(mine.size())};
  MPI_Allreduce(MPI_IN_PLACE, lengths, 2, MPI_INT, MPI_MAX, XMPI_COMM_WORLD);
  if (lengths[0] != -lengths[1]) {
    ADD_FAILURE() << "ranks hold reports of different lengths";
    return;
  }
  std::vector<double> root = mine;
  MPI_Bcast(root.data(), lengths[0], MPI_DOUBLE, 0, XMPI_COMM_WORLD);
  EXPECT_EQ(mine, root) << "rank " << world_rank() << " holds a report different from rank 0's";
}

TEST_F(IntervalExchange, EveryRankHoldsTheSameReportWithExactCounts) {
  int count = -1, displ = -1;
  ASSERT_EQ(XMPI_Get_wsize(rank_, size_, kRows, &count, &displ), XMPI_SUCCESS);
  start_fresh_interval();
  const int first_index = runtime().last_interval()->index + 1;
  const long long first_iteration = runtime().monitor().iterations_monitored();

  std::vector<IntervalReport> reports;
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < kInterval; ++i) {
      iteration([] {
        std::array<double, 10> values{}, sums{};
        MPI_Allreduce(values.data(), sums.data(), 10, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
      });
    }
    ASSERT_TRUE(runtime().last_interval().has_value());
    reports.push_back(*runtime().last_interval());  // checked below: no MPI call in between
  }

  std::vector<double> all;
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE("interval " + std::to_string(k));
    const IntervalReport& r = reports[k];
    EXPECT_EQ(r.index, first_index + k);
    EXPECT_EQ(r.first_iteration, first_iteration + k * kInterval);
    EXPECT_EQ(r.metric_name, "work");
    ASSERT_EQ(r.processes.size(), static_cast<std::size_t>(size_));
    for (int p = 0; p < size_; ++p) {
      const ProcessInterval& process = r.processes[p];
      SCOPED_TRACE("process " + std::to_string(p));
      EXPECT_EQ(process.rank, p);
      EXPECT_EQ(process.iterations, kInterval);
      EXPECT_EQ(process.metric,
                static_cast<double>(block_partition(p, size_, kRows).count) * kInterval);
      EXPECT_EQ(process.mpi_calls, kInterval);
      EXPECT_EQ(process.bytes_sent, kInterval * 10 * sizeof(double));
      EXPECT_EQ(process.bytes_received, kInterval * 10 * sizeof(double));
      EXPECT_GE(process.wall, process.mpi);
      EXPECT_GE(process.mpi, 0.0);
      EXPECT_GT(process.cpu, 0.0);
    }
    const std::vector<double> flat = flatten(r);
    all.insert(all.end(), flat.begin(), flat.end());
  }
  EXPECT_EQ(count, block_partition(rank_, size_, kRows).count);
  expect_same_on_every_rank(all);
}

TEST_F(IntervalExchange, NoNewReportBeforeTheIntervalIsComplete) {
  start_fresh_interval();
  const int index = runtime().last_interval()->index;
  for (int i = 0; i < kInterval - 1; ++i) {
    iteration([] {});
    EXPECT_EQ(runtime().last_interval()->index, index) << "after " << i + 1 << " iterations";
  }
  iteration([] {});
  EXPECT_EQ(runtime().last_interval()->index, index + 1);
}

TEST_F(IntervalExchange, SetWorkIsWhatTheWorkEventCounts) {
  start_fresh_interval();
  const double work = 500 + 10 * rank_;
  ASSERT_EQ(XMPI_Set_work(work), XMPI_SUCCESS);
  char work_event[] = "WORK";
  char* events[] = {work_event, nullptr};
  for (int i = 0; i < kInterval; ++i) {
    long long counts[1] = {-1};
    must(XMPI_Monitor_iter_begin(events), "XMPI_Monitor_iter_begin");
    must(XMPI_Monitor_iter_end(counts), "XMPI_Monitor_iter_end");
    EXPECT_EQ(counts[0], static_cast<long long>(work));
  }
  const IntervalReport& r = *runtime().last_interval();
  ASSERT_EQ(r.processes.size(), static_cast<std::size_t>(size_));
  for (int p = 0; p < size_; ++p) EXPECT_EQ(r.processes[p].metric, (500.0 + 10 * p) * kInterval);
}

TEST_F(IntervalExchange, FractionalWorkIsNotRounded) {
  // FLEXMPI_LB_MODEL=weight: a partition's work is a sum of real weights.
  start_fresh_interval();
  const double work = 0.25 * (rank_ + 1);
  ASSERT_EQ(XMPI_Set_work(work), XMPI_SUCCESS);
  for (int i = 0; i < kInterval; ++i) iteration([] {});
  const IntervalReport& r = *runtime().last_interval();
  ASSERT_EQ(r.processes.size(), static_cast<std::size_t>(size_));
  for (int p = 0; p < size_; ++p) {
    EXPECT_DOUBLE_EQ(r.processes[p].metric, 0.25 * (p + 1) * kInterval) << "process " << p;
  }
}

}  // namespace
}  // namespace flexmpi::test
