// The drum.h C API end to end on 2 ranks (thesis A.2): create, set
// parameters, init the flat model, monitor for 0.3 s, compute powers; the
// part sizes sum to 1 over the ranks; bad parameters, a missing XML file and
// calls out of order return codes (with a message) and the model keeps working.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "flexmpi/drum.h"

namespace {

/// Collective: the sum over the ranks.
double sum_over_ranks(double value) {
  double total = 0;
  MPI_Allreduce(&value, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

class DrumCApi : public ::testing::Test {
 protected:
  void SetUp() override {
    dmm_ = DRUM_createMachineModel(MPI_COMM_WORLD, DRUM_SILENT);
    ASSERT_NE(dmm_, nullptr);
  }
  void TearDown() override { EXPECT_EQ(DRUM_deleteMachineModel(dmm_), DRUM_OK); }

  /// Monitors for `seconds` of busy work and returns this rank's part size.
  float monitored_part_size(double seconds) {
    EXPECT_EQ(DRUM_startMonitoring(dmm_), DRUM_OK);
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    volatile double sink = 0;
    while (std::chrono::steady_clock::now() < until) sink = sink + 1.0;
    EXPECT_EQ(DRUM_stopMonitoring(dmm_), DRUM_OK);
    EXPECT_EQ(DRUM_computePowers(dmm_), DRUM_OK);
    int ierr = DRUM_FATAL;
    const float size = DRUM_getLocalPartSize(dmm_, &ierr);
    EXPECT_EQ(ierr, DRUM_OK);
    return size;
  }

  DRUM_machineModel* dmm_ = nullptr;
};

TEST_F(DrumCApi, FlatModelMonitoredPartSizesSumToOne) {
  EXPECT_EQ(DRUM_setParam(dmm_, "COMMUNICATION_WEIGHT", "0.3"), DRUM_OK);
  EXPECT_EQ(DRUM_setParam(dmm_, "monitor_memory", "TRUE"), DRUM_OK);
  EXPECT_EQ(DRUM_setMonitoringFrequency(dmm_, 1), DRUM_OK);  // every 0.1 s
  ASSERT_EQ(DRUM_initMachineModel(dmm_), DRUM_OK);
  const float size = monitored_part_size(0.3);
  EXPECT_GT(size, 0.0f);
  EXPECT_NEAR(sum_over_ranks(size), 1.0, 1e-5);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) DRUM_printMachineModel(dmm_, stdout);
}

TEST_F(DrumCApi, BeforeMonitoringEqualHostsGetEqualShares) {
  ASSERT_EQ(DRUM_initMachineModel(dmm_), DRUM_OK);
  ASSERT_EQ(DRUM_computePowers(dmm_), DRUM_OK);  // benchmarks and CPU counts only
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ierr = DRUM_FATAL;
  EXPECT_NEAR(DRUM_getLocalPartSize(dmm_, &ierr), 1.0 / size, 1e-6);
  EXPECT_EQ(ierr, DRUM_OK);
}

TEST_F(DrumCApi, BadInputReturnsACodeAndTheModelKeepsWorking) {
  EXPECT_EQ(DRUM_startMonitoring(dmm_), DRUM_FATAL);  // not initialized yet
  int ierr = DRUM_OK;
  DRUM_getLocalPartSize(dmm_, &ierr);
  EXPECT_EQ(ierr, DRUM_FATAL);
  EXPECT_EQ(DRUM_setParam(dmm_, "NO_SUCH_PARAMETER", "1"), DRUM_WARN);
  EXPECT_EQ(DRUM_setParam(dmm_, "USE_NETWORK_POWERS", "7"), DRUM_WARN);
  EXPECT_EQ(DRUM_setParam(dmm_, nullptr, "1"), DRUM_WARN);
  EXPECT_EQ(DRUM_setParam(dmm_, "USE_SNMP", "1"), DRUM_WARN);  // accepted, not built in
  EXPECT_EQ(DRUM_setMonitoringFrequency(dmm_, 0), DRUM_WARN);
  EXPECT_EQ(DRUM_readParamFile(dmm_, "/nonexistent/drum.params"), DRUM_FATAL);
  EXPECT_EQ(DRUM_setParam(nullptr, "USE_SNMP", "0"), DRUM_FATAL);
  // A missing XML file: a warning, and the flat model instead.
  EXPECT_EQ(DRUM_setParam(dmm_, "USE_FLAT_MODEL", "0"), DRUM_OK);
  EXPECT_EQ(DRUM_setParam(dmm_, "XML_TOPOLOGY_FILE", "/nonexistent/drum.xml"), DRUM_OK);
  EXPECT_EQ(DRUM_initMachineModel(dmm_), DRUM_WARN);
  EXPECT_EQ(DRUM_stopMonitoring(dmm_), DRUM_FATAL);  // not started
  EXPECT_EQ(DRUM_setMonitoringFrequency(dmm_, 1), DRUM_OK);
  EXPECT_NEAR(sum_over_ranks(monitored_part_size(0.3)), 1.0, 1e-5);
}

TEST_F(DrumCApi, AnXmlFileMissingThisHostIsFatalAndTheFlatModelStillWorks) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string path = "drum_c_api_test_" + std::to_string(rank) + ".xml";
  std::ofstream(path) << "<machinemodel numnode=\"2\">"
                         "<node type=\"NETWORK_NODE\" name=\"0\" description=\"sw\" "
                         "childrenNum=\"1\" children=\"1;\" IsMonitorable=\"0\"/>"
                         "<node type=\"COMPUTING_NODE\" name=\"1\" description=\"elsewhere\" "
                         "childrenNum=\"0\" children=\";\" IsMonitorable=\"1\"/></machinemodel>";
  const std::string params = "drum_c_api_test_" + std::to_string(rank) + ".params";
  std::ofstream(params) << "USE_FLAT_MODEL 0\nXML_TOPOLOGY_FILE " << path << "\n";
  EXPECT_EQ(DRUM_readParamFile(dmm_, params.c_str()), DRUM_OK);
  EXPECT_EQ(DRUM_initMachineModel(dmm_), DRUM_FATAL);  // no leaf for this host
  EXPECT_EQ(DRUM_computePowers(dmm_), DRUM_FATAL);
  EXPECT_EQ(DRUM_setParam(dmm_, "USE_FLAT_MODEL", "1"), DRUM_OK);
  ASSERT_EQ(DRUM_initMachineModel(dmm_), DRUM_OK);
  ASSERT_EQ(DRUM_computePowers(dmm_), DRUM_OK);
  int ierr = DRUM_FATAL;
  EXPECT_NEAR(sum_over_ranks(DRUM_getLocalPartSize(dmm_, &ierr)), 1.0, 1e-5);
  std::remove(path.c_str());
  std::remove(params.c_str());
}

TEST_F(DrumCApi, HierarchicalXmlModelGivesTheWholeLoadToTheHostsWithRanks) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  // Fig. 3.5's shape: a router over this host and an idle host, beside another idle host.
  const std::string path = "drum_c_api_tree_" + std::to_string(rank) + ".xml";
  std::ofstream(path) << "<machinemodel numnode=\"5\">"
                         "<node type=\"NETWORK_NODE\" name=\"0\" description=\"192.168.1.1\" "
                         "childrenNum=\"2\" children=\"1;idle2;\" IsMonitorable=\"0\"/>"
                         "<node type=\"NETWORK_NODE\" name=\"1\" description=\"192.168.2.2\" "
                         "childrenNum=\"2\" children=\"here;idle1;\" IsMonitorable=\"0\"/>"
                         "<node type=\"COMPUTING_NODE\" name=\"here\" description=\""
                      << host
                      << "\" childrenNum=\"0\" children=\";\" IsMonitorable=\"1\" MFLOPS=\"500\"/>"
                         "<node type=\"COMPUTING_NODE\" name=\"idle1\" description=\"n12\" "
                         "childrenNum=\"0\" children=\";\" IsMonitorable=\"1\"/>"
                         "<node type=\"COMPUTING_NODE\" name=\"idle2\" description=\"n13\" "
                         "childrenNum=\"0\" children=\";\" IsMonitorable=\"1\"/></machinemodel>";
  EXPECT_EQ(DRUM_setParam(dmm_, "USE_FLAT_MODEL", "FALSE"), DRUM_OK);
  EXPECT_EQ(DRUM_setParam(dmm_, "XML_TOPOLOGY_FILE", path.c_str()), DRUM_OK);
  ASSERT_EQ(DRUM_initMachineModel(dmm_), DRUM_OK);
  EXPECT_EQ(DRUM_setMonitoringFrequency(dmm_, 1), DRUM_OK);
  const float part = monitored_part_size(0.3);
  EXPECT_NEAR(part, 1.0 / size, 1e-6);  // the idle hosts run no process: no share
  EXPECT_NEAR(sum_over_ranks(part), 1.0, 1e-5);
  if (rank == 0) DRUM_printMachineModel(dmm_, nullptr);
  std::remove(path.c_str());
}

}  // namespace
