// Communication cost model (thesis 5.3.2, Table 5.2; Open MPI 4.1 coll/tuned):
// every algorithm's formula, both sides of every switch point, library
// detection, profile replay and the lambda correction of eq. 5.4-5.5.
#include "model/comm_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

struct Case {
  MpiLibrary library;
  Routine routine;
  double bytes;
  int processes;
  const char* algorithm;
  double latency, bandwidth, reduction;
};

std::string describe(const Case& c) {
  return std::string(library_name(c.library)) + " " + std::string(routine_name(c.routine)) +
         " bytes=" + std::to_string(c.bytes) + " p=" + std::to_string(c.processes);
}

void expect_case(const Case& c) {
  const AlgorithmCost cost = collective_cost(c.library, c.routine, c.bytes, c.processes);
  EXPECT_EQ(std::string(cost.algorithm), c.algorithm) << describe(c);
  EXPECT_NEAR(cost.terms.latency, c.latency, 1e-9) << describe(c);
  EXPECT_NEAR(cost.terms.bandwidth, c.bandwidth, 1e-6) << describe(c);
  EXPECT_NEAR(cost.terms.reduction, c.reduction, 1e-6) << describe(c);
}

constexpr MpiLibrary M = MpiLibrary::mpich;
constexpr MpiLibrary O = MpiLibrary::open_mpi;

// Thesis Table 5.2, on both sides of each of its switch points.
TEST(CommModelMpich, Table52BothSidesOfEverySwitchPoint) {
  const std::vector<Case> cases = {
      {M, Routine::send_recv, 1000, 2, "eager/rendezvous", 1, 1000, 0},
      // Bcast: binomial below 12 KiB or for p < 8, van de Geijn otherwise.
      {M, Routine::bcast, 12287, 8, "binomial", 3, 3 * 12287.0, 0},
      {M, Routine::bcast, 12288, 8, "van_de_geijn", 3 + 7, 2 * 7.0 / 8 * 12288, 0},
      {M, Routine::bcast, 1e6, 7, "binomial", 3, 3e6, 0},
      {M, Routine::bcast, 1e6, 8, "van_de_geijn", 10, 2 * 7.0 / 8 * 1e6, 0},
      // Scatter, Gather: binomial, n = p x block.
      {M, Routine::scatter, 100, 4, "binomial", 2, 0.75 * 400, 0},
      {M, Routine::gather, 100, 4, "binomial", 2, 0.75 * 400, 0},
      // Allgather(v): recursive doubling below 512 KiB in total, ring otherwise.
      {M, Routine::allgather, 131071, 4, "recursive_doubling", 2, 0.75 * 524284, 0},
      {M, Routine::allgather, 131072, 4, "ring", 3, 0.75 * 524288, 0},
      {M, Routine::allgatherv, 131071, 4, "recursive_doubling", 2, 0.75 * 524284, 0},
      {M, Routine::allgatherv, 131072, 4, "ring", 3, 0.75 * 524288, 0},
      // Reduce: binomial up to 2 KiB, Rabenseifner above.
      {M, Routine::reduce, 2048, 4, "binomial", 2, 4096, 4096},
      {M, Routine::reduce, 2049, 4, "rabenseifner", 4, 1.5 * 2049, 0.75 * 2049},
      // Allreduce: recursive doubling up to 2 KiB, Rabenseifner above.
      {M, Routine::allreduce, 2048, 4, "recursive_doubling", 2, 4096, 4096},
      {M, Routine::allreduce, 2049, 4, "rabenseifner", 4, 1.5 * 2049, 0.75 * 2049},
      // Alltoall: Bruck up to 256-byte blocks, pairwise exchange above (n = p x block).
      {M, Routine::alltoall, 256, 4, "bruck", 2, 1024 / 2.0 * 2, 0},
      {M, Routine::alltoall, 257, 4, "pairwise_exchange", 3, 1028, 0},
      {M, Routine::alltoallv, 1000, 4, "isend_irecv", 3, 1000, 0},
      {M, Routine::barrier, 0, 5, "dissemination", 3, 0, 0},
  };
  for (const Case& c : cases) expect_case(c);
}

TEST(CommModelMpich, UnknownLibraryUsesTable52) {
  EXPECT_EQ(collective_cost(MpiLibrary::unknown, Routine::bcast, 12288, 8).algorithm,
            "van_de_geijn");
}

// Open MPI 4.1 coll/tuned: the algorithm on each side of every switch point of
// the rows for 2-3 and 4-7 processes (the sizes of this machine), and some of
// the larger rows.
TEST(CommModelOpenMpi, DecisionSwitchPoints) {
  struct Pick {
    Routine routine;
    int processes;
    double bytes;
    const char* algorithm;
  };
  const std::vector<Pick> picks = {
      {Routine::bcast, 3, 31, "pipeline"},
      {Routine::bcast, 3, 32, "binary_tree"},
      {Routine::bcast, 3, 255, "binary_tree"},
      {Routine::bcast, 3, 256, "pipeline"},
      {Routine::bcast, 3, 511, "pipeline"},
      {Routine::bcast, 3, 512, "knomial"},
      {Routine::bcast, 3, 1023, "knomial"},
      {Routine::bcast, 3, 1024, "basic_linear"},
      {Routine::bcast, 3, 32767, "basic_linear"},
      {Routine::bcast, 3, 32768, "binary_tree"},
      {Routine::bcast, 3, 131071, "binary_tree"},
      {Routine::bcast, 3, 131072, "chain"},
      {Routine::bcast, 3, 262143, "chain"},
      {Routine::bcast, 3, 262144, "basic_linear"},
      {Routine::bcast, 3, 524287, "basic_linear"},
      {Routine::bcast, 3, 524288, "binomial"},
      {Routine::bcast, 3, 1048575, "binomial"},
      {Routine::bcast, 3, 1048576, "binary_tree"},
      {Routine::bcast, 4, 63, "binary_tree"},
      {Routine::bcast, 4, 64, "binomial"},
      {Routine::bcast, 4, 127, "binomial"},
      {Routine::bcast, 4, 128, "binary_tree"},
      {Routine::bcast, 4, 2047, "binary_tree"},
      {Routine::bcast, 4, 2048, "binomial"},
      {Routine::bcast, 4, 8191, "binomial"},
      {Routine::bcast, 4, 8192, "basic_linear"},
      {Routine::bcast, 4, 1048575, "basic_linear"},
      {Routine::bcast, 4, 1048576, "chain"},
      {Routine::bcast, 16, 4095, "knomial"},
      {Routine::bcast, 16, 4096, "binomial"},
      {Routine::bcast, 16, 1048576, "scatter_allgather"},
      {Routine::reduce, 3, 7, "rabenseifner"},
      {Routine::reduce, 3, 8, "binary"},
      {Routine::reduce, 3, 15, "binary"},
      {Routine::reduce, 3, 16, "pipeline"},
      {Routine::reduce, 3, 31, "pipeline"},
      {Routine::reduce, 3, 32, "linear"},
      {Routine::reduce, 3, 262143, "linear"},
      {Routine::reduce, 3, 262144, "pipeline"},
      {Routine::reduce, 3, 524288, "chain"},
      {Routine::reduce, 3, 1048576, "pipeline"},
      {Routine::reduce, 4, 4095, "binary"},
      {Routine::reduce, 4, 4096, "chain"},
      {Routine::reduce, 4, 65535, "chain"},
      {Routine::reduce, 4, 65536, "binomial"},
      {Routine::reduce, 4, 262144, "linear"},
      {Routine::reduce, 4, 524288, "binomial"},
      {Routine::reduce, 4, 1048576, "linear"},
      {Routine::allreduce, 3, 7, "ring"},
      {Routine::allreduce, 3, 8, "recursive_doubling"},
      {Routine::allreduce, 3, 4095, "recursive_doubling"},
      {Routine::allreduce, 3, 4096, "ring"},
      {Routine::allreduce, 3, 8192, "recursive_doubling"},
      {Routine::allreduce, 3, 16384, "ring"},
      {Routine::allreduce, 3, 65535, "ring"},
      {Routine::allreduce, 3, 65536, "segmented_ring"},
      {Routine::allreduce, 3, 262143, "segmented_ring"},
      {Routine::allreduce, 3, 262144, "rabenseifner"},
      {Routine::allreduce, 4, 15, "ring"},
      {Routine::allreduce, 4, 16, "recursive_doubling"},
      {Routine::allreduce, 4, 8191, "recursive_doubling"},
      {Routine::allreduce, 4, 8192, "rabenseifner"},
      {Routine::alltoall, 2, 1, "pairwise"},
      {Routine::alltoall, 2, 2, "two_proc"},
      {Routine::alltoall, 2, 4, "pairwise"},
      {Routine::alltoall, 2, 16, "two_proc"},
      {Routine::alltoall, 2, 64, "pairwise"},
      {Routine::alltoall, 2, 256, "two_proc"},
      {Routine::alltoall, 2, 4096, "pairwise"},
      {Routine::alltoall, 2, 32768, "linear_sync"},
      {Routine::alltoall, 2, 262144, "two_proc"},
      {Routine::alltoall, 2, 1048576, "pairwise"},
      {Routine::alltoall, 3, 8191, "linear_sync"},
      {Routine::alltoall, 3, 8192, "linear"},
      {Routine::alltoall, 3, 16384, "linear_sync"},
      {Routine::alltoall, 3, 65536, "linear"},
      {Routine::alltoall, 3, 524288, "pairwise"},
      {Routine::alltoall, 3, 1048576, "linear"},
      {Routine::alltoall, 16, 511, "modified_bruck"},
      {Routine::alltoallv, 3, 1000, "pairwise"},
      {Routine::alltoallv, 4, 1000, "basic_linear"},
      {Routine::allgather, 2, 1e6, "two_proc"},
      {Routine::allgather, 3, 1e6, "recursive_doubling"},
      {Routine::allgather, 31, 1e6, "recursive_doubling"},
      {Routine::allgather, 32, 1023, "recursive_doubling"},
      {Routine::allgather, 32, 1024, "neighbor"},
      {Routine::allgather, 32, 65536, "ring"},
      {Routine::allgatherv, 2, 2047, "ring"},
      {Routine::allgatherv, 2, 2048, "two_proc"},
      {Routine::allgatherv, 2, 4096, "ring"},
      {Routine::allgatherv, 2, 8192, "two_proc"},
      {Routine::allgatherv, 4, 255, "default"},
      {Routine::allgatherv, 4, 256, "neighbor"},
      {Routine::allgatherv, 4, 4096, "ring"},
      {Routine::allgatherv, 4, 8192, "neighbor"},
      {Routine::allgatherv, 4, 16384, "bruck"},
      {Routine::allgatherv, 4, 262144, "neighbor"},
      {Routine::allgatherv, 3, 256, "ring"},  // neighbor exchange needs an even p
      {Routine::gather, 3, 1, "linear_sync"},
      {Routine::gather, 3, 2, "basic_linear"},
      {Routine::gather, 3, 4, "binomial"},
      {Routine::gather, 3, 32768, "basic_linear"},
      {Routine::gather, 3, 65536, "binomial"},
      {Routine::gather, 3, 131072, "linear_sync"},
      {Routine::gather, 4, 1023, "binomial"},
      {Routine::gather, 4, 1024, "basic_linear"},
      {Routine::gather, 4, 8192, "binomial"},
      {Routine::gather, 4, 32768, "basic_linear"},
      {Routine::gather, 4, 262144, "linear_sync"},
      {Routine::scatter, 3, 1, "linear_nb"},
      {Routine::scatter, 3, 2, "basic_linear"},
      {Routine::scatter, 3, 131072, "linear_nb"},
      {Routine::scatter, 3, 262144, "basic_linear"},
      {Routine::scatter, 4, 2047, "binomial"},
      {Routine::scatter, 4, 2048, "basic_linear"},
      {Routine::scatter, 4, 4096, "binomial"},
      {Routine::scatter, 4, 8192, "basic_linear"},
      {Routine::scatter, 4, 32768, "linear_nb"},
      {Routine::scatter, 4, 1048576, "basic_linear"},
      {Routine::barrier, 3, 0, "recursive_doubling"},
      {Routine::barrier, 4, 0, "linear"},
  };
  for (const Pick& pick : picks) {
    EXPECT_EQ(collective_cost(O, pick.routine, pick.bytes, pick.processes).algorithm,
              pick.algorithm)
        << routine_name(pick.routine) << " p=" << pick.processes << " bytes=" << pick.bytes;
  }
}

// The Hockney terms of every Open MPI algorithm.
TEST(CommModelOpenMpi, AlgorithmFormulas) {
  const std::vector<Case> cases = {
      {O, Routine::send_recv, 100, 2, "eager/rendezvous", 1, 100, 0},
      {O, Routine::bcast, 64, 4, "binomial", 2, 128, 0},
      {O, Routine::bcast, 200, 4, "binary_tree", 4, 800, 0},
      {O, Routine::bcast, 100, 2, "binary_tree", 1, 100, 0},
      {O, Routine::bcast, 8192, 4, "basic_linear", 3, 3 * 8192.0, 0},
      {O, Routine::bcast, 512, 3, "knomial", 2, 1024, 0},
      {O, Routine::bcast, 16, 3, "pipeline", 2, 32, 0},
      {O, Routine::bcast, 1048576, 4, "chain", 3, 3 * 1048576.0, 0},
      {O, Routine::bcast, 1048576, 16, "scatter_allgather", 4 + 15, 2 * 15.0 / 16 * 1048576, 0},
      {O, Routine::reduce, 4, 3, "rabenseifner", 4, 2 * 2.0 / 3 * 4, 2.0 / 3 * 4},
      {O, Routine::reduce, 8, 3, "binary", 2, 16, 16},
      {O, Routine::reduce, 16, 3, "pipeline", 2, 32, 32},
      {O, Routine::reduce, 32, 3, "linear", 2, 64, 64},
      {O, Routine::reduce, 65536, 4, "binomial", 2, 131072, 131072},
      {O, Routine::reduce, 4096, 4, "chain", 3, 3 * 4096.0, 3 * 4096.0},
      {O, Routine::allreduce, 8, 3, "recursive_doubling", 3, 24, 24},  // 1 + 2 extra rounds
      {O, Routine::allreduce, 16, 4, "recursive_doubling", 2, 32, 32},
      {O, Routine::allreduce, 4, 3, "ring", 4, 2 * 2.0 / 3 * 4, 2.0 / 3 * 4},
      {O, Routine::allreduce, 65536, 3, "segmented_ring", 4, 2 * 2.0 / 3 * 65536, 2.0 / 3 * 65536},
      {O, Routine::allreduce, 8192, 4, "rabenseifner", 4, 12288, 6144},
      {O, Routine::alltoall, 2, 2, "two_proc", 1, 2, 0},
      {O, Routine::alltoall, 1, 2, "pairwise", 1, 1, 0},
      {O, Routine::alltoall, 100, 3, "linear_sync", 2, 200, 0},
      {O, Routine::alltoall, 8192, 3, "linear", 2, 2 * 8192.0, 0},
      {O, Routine::alltoall, 100, 16, "modified_bruck", 4, 16 * 100 / 2.0 * 4, 0},
      {O, Routine::alltoallv, 300, 3, "pairwise", 2, 300, 0},
      {O, Routine::alltoallv, 300, 4, "basic_linear", 3, 300, 0},
      {O, Routine::allgather, 10, 2, "two_proc", 1, 10, 0},
      {O, Routine::allgather, 10, 4, "recursive_doubling", 2, 30, 0},
      {O, Routine::allgather, 1024, 32, "neighbor", 16, 31 * 1024.0, 0},
      {O, Routine::allgather, 65536, 32, "ring", 31, 31 * 65536.0, 0},
      {O, Routine::allgatherv, 100, 4, "default", 3 + 2, 300 + 2 * 400, 0},
      {O, Routine::allgatherv, 16384, 4, "bruck", 2, 3 * 16384.0, 0},
      {O, Routine::gather, 100, 4, "binomial", 2, 300, 0},
      {O, Routine::gather, 1024, 4, "basic_linear", 3, 3072, 0},
      {O, Routine::gather, 1, 3, "linear_sync", 4, 2, 0},
      {O, Routine::scatter, 2, 3, "basic_linear", 2, 4, 0},
      {O, Routine::scatter, 100, 4, "binomial", 2, 300, 0},
      {O, Routine::scatter, 1, 3, "linear_nb", 2, 2, 0},
      {O, Routine::barrier, 0, 4, "linear", 6, 0, 0},
      {O, Routine::barrier, 0, 3, "recursive_doubling", 2, 0, 0},
  };
  for (const Case& c : cases) expect_case(c);
}

TEST(CommModel, OneProcessCommunicatesNothing) {
  for (MpiLibrary library : {M, O}) {
    const AlgorithmCost cost = collective_cost(library, Routine::allreduce, 1e6, 1);
    EXPECT_EQ(cost.terms.latency, 0.0);
    EXPECT_EQ(cost.terms.bandwidth, 0.0);
  }
}

TEST(CommModel, BadInputIsRefused) {
  for (MpiLibrary library : {M, O}) {
    EXPECT_THROW(collective_cost(library, Routine::bcast, -1, 4), Error);
    EXPECT_THROW(collective_cost(library, Routine::bcast, 8, 0), Error);
    EXPECT_THROW(collective_cost(library, Routine::bcast, 8, -3), Error);
    EXPECT_THROW(collective_cost(library, Routine::bcast, std::nan(""), 4), Error);
  }
  try {
    collective_cost(O, Routine::gather, 8, 0);
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(error.what()).find("processes >= 1"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("MPI_Gather"), std::string::npos);
  }
}

TEST(CommModel, LibraryDetectionFromVersionStrings) {
  EXPECT_EQ(detect_mpi_library(
                "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May "
                "26, 2022"),
            MpiLibrary::open_mpi);
  EXPECT_EQ(detect_mpi_library("MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 "
                               "12:34:45 CDT 2022\nMPICH ABI:\t14:2:2\nMPICH Device:\tch4:ucx"),
            MpiLibrary::mpich);
  EXPECT_EQ(detect_mpi_library("Intel(R) MPI Library 2021.6 for Linux* OS"), MpiLibrary::mpich);
  EXPECT_EQ(detect_mpi_library("MVAPICH2 Version      :\t2.3.7"), MpiLibrary::mpich);
  EXPECT_EQ(detect_mpi_library(""), MpiLibrary::unknown);
  EXPECT_EQ(detect_mpi_library("Some Vendor MPI 1.0"), MpiLibrary::unknown);
  EXPECT_EQ(library_name(MpiLibrary::open_mpi), "openmpi");
  EXPECT_EQ(library_name(MpiLibrary::mpich), "mpich");
}

TEST(CommModel, RoutineNames) {
  for (int r = 0; r < kRoutineCount; ++r) {
    const auto routine = static_cast<Routine>(r);
    EXPECT_EQ(routine_from_name(routine_name(routine)), routine);
  }
  EXPECT_EQ(routine_from_name("MPI_Recv"), Routine::send_recv);
  EXPECT_EQ(routine_from_name("bcast"), Routine::bcast);
  EXPECT_EQ(routine_from_name("MPI_Gatherv"), Routine::gather);
  try {
    routine_from_name("MPI_Frobnicate");
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("MPI_Frobnicate"), std::string::npos);
  }
}

TEST(CommModel, CallSecondsAppliesTheFit) {
  const Hockney h{1e-6, 1e-9, 2e-9};
  // MPICH reduce p=4, 4096 B: Rabenseifner 4 alpha + 6144 beta + 3072 gamma.
  const double plain = 4e-6 + 6144e-9 + 3072 * 2e-9;
  EXPECT_NEAR(call_seconds(M, Routine::reduce, 4096, 4, h), plain, 1e-15);
  // Scale 2 at 1 KiB, 4 at 16 KiB: 3 at 4 KiB (halfway in log2), the ends outside.
  const CollectiveFits fits = {{Routine::reduce, {{4, {{1024, 2.0}, {16384, 4.0}}}}}};
  const CollectiveFit& fit = fits.at(Routine::reduce)[0];
  EXPECT_DOUBLE_EQ(fit.scale(4096), 3.0);
  EXPECT_DOUBLE_EQ(fit.scale(8), 2.0);
  EXPECT_DOUBLE_EQ(fit.scale(1 << 20), 4.0);
  // MPICH switches reduce from binomial to Rabenseifner above 2 KiB: at 4 KiB
  // only the 16 KiB point ran the same algorithm, at 1.5 KiB only the 1 KiB one.
  EXPECT_DOUBLE_EQ(fit.scale(4096, M, Routine::reduce), 4.0);
  EXPECT_DOUBLE_EQ(fit.scale(1536, M, Routine::reduce), 2.0);
  EXPECT_NEAR(call_seconds(M, Routine::reduce, 4096, 4, h, fits), 4 * plain, 1e-15);
  const CollectiveFit same{4, {{4096, 2.0}, {65536, 4.0}}};  // both Rabenseifner
  EXPECT_DOUBLE_EQ(same.scale(16384, M, Routine::reduce), 3.0);
  EXPECT_DOUBLE_EQ(CollectiveFit{}.scale(100), 1.0);
  EXPECT_NEAR(call_seconds(M, Routine::bcast, 4096, 4, h, fits), 2 * (1e-6 + 4096e-9), 1e-15);
}

// A message is priced in the band of its step message: bandwidth bytes over
// latency steps (Send: the message; MPICH Rabenseifner allreduce p=4, 64 KiB:
// 2 x 2 steps of 24 KiB on average; ring allreduce: m / p per step).
TEST(CommModel, PiecewiseLinkBands) {
  const PiecewiseLink link({{4096, 1e-6, 1e-9}, {65536, 2e-6, 1e-10}, {0, 0.0, 3e-10}}, 1e-11);
  EXPECT_DOUBLE_EQ(link.at(4096).alpha, 1e-6);
  EXPECT_DOUBLE_EQ(link.at(4097).alpha, 2e-6);
  EXPECT_DOUBLE_EQ(link.at(1e9).beta, 3e-10);  // the last band takes any size
  EXPECT_DOUBLE_EQ(link.at(1).gamma, 1e-11);
  EXPECT_NEAR(call_seconds(M, Routine::send_recv, 100, 2, link), 1e-6 + 100e-9, 1e-18);
  EXPECT_NEAR(call_seconds(M, Routine::send_recv, 8192, 2, link), 2e-6 + 8192e-10, 1e-18);
  EXPECT_NEAR(call_seconds(M, Routine::send_recv, 1 << 20, 2, link), (1 << 20) * 3e-10, 1e-15);
  const CostTerms rab = collective_cost(M, Routine::allreduce, 65536, 4).terms;
  EXPECT_DOUBLE_EQ(step_bytes(rab, 65536), 2 * 0.75 * 65536 / 4);
  EXPECT_NEAR(call_seconds(M, Routine::allreduce, 65536, 4, link),
              rab.latency * 2e-6 + rab.bandwidth * 1e-10 + rab.reduction * 1e-11, 1e-15);
  EXPECT_DOUBLE_EQ(step_bytes(CostTerms{}, 7), 7);
  // A Hockney triple is one band.
  EXPECT_EQ(PiecewiseLink(Hockney{1e-6, 1e-9, 0}).bands().size(), 1u);
  EXPECT_THROW(PiecewiseLink({}, 0.0), Error);
  EXPECT_THROW(PiecewiseLink({{4096, -1e-6, 1e-9}, {0, 0, 0}}, 0.0), Error);
  EXPECT_THROW(PiecewiseLink({{4096, 1e-6, 1e-9}, {1024, 1e-6, 1e-9}, {0, 0, 0}}, 0.0), Error);
  EXPECT_THROW(PiecewiseLink({{0, 1e-6, 1e-9}}, -1.0), Error);
}

TEST(CommModel, ProfileReplay) {
  const std::vector<OpRecord> records = {
      {MpiOp::Send, 2, {10, 10 * 800, 0, 0.0}},
      {MpiOp::Recv, 2, {10, 0, 10 * 800, 0.0}},
      {MpiOp::Waitall, 0, {5, 0, 0, 0.0}},
      {MpiOp::Allreduce, 4, {3, 3 * 8, 3 * 8, 0.0}},
      {MpiOp::Alltoall, 4, {2, 2 * 4 * 100, 2 * 4 * 100, 0.0}},
      {MpiOp::Allgatherv, 4, {1, 100, 4000, 0.0}},
      {MpiOp::Bcast, 4, {2, 0, 2 * 64, 0.0}},
      {MpiOp::Barrier, 4, {0, 0, 0, 0.0}},
  };
  const std::vector<CommOpCount> ops = profile_operations(records);
  ASSERT_EQ(ops.size(), 6u);  // Waitall dropped (priced with the posts), Barrier had no calls
  EXPECT_EQ(ops[0].routine, Routine::send_recv);
  EXPECT_DOUBLE_EQ(bytes_per_call(ops[0]), 800);
  EXPECT_DOUBLE_EQ(bytes_per_call(ops[1]), 800);
  EXPECT_DOUBLE_EQ(bytes_per_call(ops[2]), 8);
  EXPECT_DOUBLE_EQ(bytes_per_call(ops[3]), 100);   // the block sent to one process
  EXPECT_DOUBLE_EQ(bytes_per_call(ops[4]), 1000);  // the average block
  EXPECT_DOUBLE_EQ(bytes_per_call(ops[5]), 64);
  const Hockney h{1e-6, 1e-9, 1e-9};
  double expected = 0.0;
  for (const CommOpCount& op : ops) {
    expected += op.calls * call_seconds(O, op.routine, bytes_per_call(op), op.comm_size, h);
  }
  EXPECT_NEAR(predict_communication(ops, O, h), expected, 1e-15);
  EXPECT_NEAR(predict_communication(std::vector<CommOpCount>{ops[0]}, O, h), 10 * (1e-6 + 800e-9),
              1e-15);

  std::vector<CommOpCount> bad = {{Routine::bcast, 0, 1, 8, 0}};
  EXPECT_THROW(predict_communication(bad, O, h), Error);
  bad = {{Routine::bcast, 4, 1, -8, 0}};
  EXPECT_THROW(predict_communication(bad, O, h), Error);
}

TEST(CommModel, LambdaCorrectionEq54And55) {
  LambdaCorrection lambda;
  EXPECT_EQ(lambda.lambda(), 1.0);
  EXPECT_EQ(lambda.correct(2.0), 2.0);
  lambda.observe(2.0, 3.0);  // measured 1.5 x the prediction
  EXPECT_DOUBLE_EQ(lambda.lambda(), 1.5);
  EXPECT_DOUBLE_EQ(lambda.correct(4.0), 6.0);
  lambda.observe(0.0, 1.0);  // nothing predicted: no information, lambda stays
  EXPECT_DOUBLE_EQ(lambda.lambda(), 1.5);
  lambda.observe(4.0, 0.0);  // nothing measured: stays too
  EXPECT_DOUBLE_EQ(lambda.lambda(), 1.5);
  lambda.observe(4.0, 2.0);  // only the last interval counts (eq. 5.4)
  EXPECT_DOUBLE_EQ(lambda.lambda(), 0.5);
  EXPECT_THROW(lambda.observe(-1.0, 1.0), Error);
  EXPECT_THROW(lambda.observe(1.0, -1.0), Error);
  EXPECT_THROW(lambda.observe(1.0, std::numeric_limits<double>::infinity()), Error);
}

TEST(CommModel, LambdaOverAWindowIgnoresOneDisturbedInterval) {
  LambdaCorrection lambda(3);
  lambda.observe(1.0, 2.0);
  EXPECT_DOUBLE_EQ(lambda.lambda(), 2.0);
  lambda.observe(1.0, 40.0);                // one interval waited for a descheduled rank
  EXPECT_DOUBLE_EQ(lambda.lambda(), 21.0);  // two ratios: their mean
  lambda.observe(1.0, 2.2);
  EXPECT_DOUBLE_EQ(lambda.lambda(), 2.2);  // three: the median
  lambda.observe(1.0, 1.8);                // the oldest (2.0) leaves
  EXPECT_DOUBLE_EQ(lambda.lambda(), 2.2);
  EXPECT_THROW(LambdaCorrection(0), Error);
}

}  // namespace
}  // namespace flexmpi
