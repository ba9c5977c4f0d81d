// RecordRegistry (XMPI_Register_record's list) on 1-3 processes: what
// registration refuses, and share(): rank 0's copy reaches every process
// bit for bit; records that differ on one process are refused on every
// process, naming the first difference, with no record touched.
#include "redistribution/record_registry.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../support/world_test.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

using RecordRegistryTest = test::WorldTest;

// The Error a call throws, or a failure if it throws none.
template <typename Call>
Error error_of(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no Error thrown";
  return Error(Errc::internal, "");
}

TEST_F(RecordRegistryTest, RefusesBadRegistrations) {
  RecordRegistry records;
  double time = 0.0, other = 0.0;
  records.add("time", &time, 1, MPI_DOUBLE);
  EXPECT_EQ(error_of([&] { records.add("time", &other, 1, MPI_DOUBLE); }).code(),
            Errc::invalid_argument);
  EXPECT_NE(std::string(error_of([&] { records.add("dt", &time, 1, MPI_DOUBLE); }).what())
                .find("registered already, as 'time'"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { records.add("no spaces", &other, 1, MPI_DOUBLE); }).code(),
            Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { records.add("dt", nullptr, 1, MPI_DOUBLE); }).code(),
            Errc::invalid_argument);
  EXPECT_EQ(error_of([&] { records.add("dt", &other, -1, MPI_DOUBLE); }).code(),
            Errc::invalid_argument);
  ASSERT_EQ(records.all().size(), 1u);
  EXPECT_FALSE(records.remove(&other));
  EXPECT_TRUE(records.remove(&time));
  EXPECT_TRUE(records.all().empty());
}

TEST_F(RecordRegistryTest, ShareGivesRankZerosCopyBitForBitToReceiversOnly) {
  // Rank 0 holds values no other process could compute; odd ranks receive
  // (newcomers), the other ranks keep their own values (running processes).
  const bool receive = rank_ % 2 == 1;
  double time = rank_ == 0 ? 0.1 + 0.2 : NAN;
  std::vector<double> history(7, rank_ == 0 ? 1.0 / 3.0 : -rank_);
  int steps = rank_ == 0 ? 42 : -rank_;
  RecordRegistry records;
  records.add("time", &time, 1, MPI_DOUBLE);
  records.add("residuals", history.data(), static_cast<long long>(history.size()), MPI_DOUBLE);
  records.add("steps", &steps, 1, MPI_INT);
  records.share(comm_, receive);
  if (rank_ == 0 || receive) {
    const double expected_time = 0.1 + 0.2;
    EXPECT_EQ(std::memcmp(&time, &expected_time, sizeof time), 0);
    for (const double r : history) EXPECT_EQ(r, 1.0 / 3.0);
    EXPECT_EQ(steps, 42);
  } else {
    EXPECT_TRUE(std::isnan(time));
    for (const double r : history) EXPECT_EQ(r, -rank_);
    EXPECT_EQ(steps, -rank_);
  }
}

TEST_F(RecordRegistryTest, DifferentRecordsAreRefusedEverywhereUntouched) {
  // The last process registers the time as a float: every process is told.
  double time = rank_ == 0 ? 2.5 : -1.0;
  float time_as_float = -1.0f;
  RecordRegistry records;
  const bool differs = nprocs_ > 1 && rank_ == nprocs_ - 1;
  if (differs) {
    records.add("time", &time_as_float, 1, MPI_FLOAT);
  } else {
    records.add("time", &time, 1, MPI_DOUBLE);
  }
  if (nprocs_ == 1) {
    records.share(comm_, true);  // one process agrees with itself
    EXPECT_EQ(time, 2.5);
    return;
  }
  const Error error = error_of([&] { records.share(comm_, true); });
  EXPECT_EQ(error.code(), Errc::invalid_argument);
  EXPECT_NE(std::string(error.what())
                .find("record 0 is 'time' of 1 float64 (8 bytes each) on "
                      "rank 0, this process registered 'time' of 1 float32"),
            std::string::npos)
      << error.what();
  EXPECT_EQ(time, rank_ == 0 ? 2.5 : -1.0);
  EXPECT_EQ(time_as_float, -1.0f);
}

TEST_F(RecordRegistryTest, ShapeDifferenceCountsRecords) {
  double time = 0.0;
  RecordRegistry records;
  records.add("time", &time, 1, MPI_DOUBLE);
  const std::vector<RecordShape> none;
  EXPECT_EQ(shape_difference(none, records.all(), "in the file", "this program"),
            "0 records in the file, this program registered 1");
  const std::vector<RecordShape> same = {shape_of(records.all()[0])};
  EXPECT_EQ(shape_difference(same, records.all(), "in the file", "this program"), "");
}

}  // namespace
}  // namespace flexmpi
