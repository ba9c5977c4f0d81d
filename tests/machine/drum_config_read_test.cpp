// The file flexmpi-drum-config wrote (path in DRUM_CONFIG_XML; the CTest
// fixture mpi_drum_config_write_np2 writes it) read back on the same hosts:
// the existing XML reader parses it, every rank's host is a computing node
// with a benchmark rating, and DRUM_initMachineModel accepts it as
// XML_TOPOLOGY_FILE (thesis A.2) and computes powers from it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "flexmpi/drum.h"
#include "machine/machine_xml.hpp"

namespace {

std::string written_file() {
  const char* path = std::getenv("DRUM_CONFIG_XML");
  return path == nullptr ? "" : path;
}

std::string my_host() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return name;
}

TEST(DrumConfigFile, ParsesAndRatesThisHost) {
  ASSERT_FALSE(written_file().empty()) << "DRUM_CONFIG_XML is not set";
  using flexmpi::machine::NodeSpec;
  const std::vector<NodeSpec> specs = flexmpi::machine::read_machine_xml(written_file());
  const auto mine = std::ranges::find(specs, my_host(), &NodeSpec::description);
  ASSERT_NE(mine, specs.end()) << my_host() << " is not in " << written_file();
  EXPECT_EQ(mine->type, flexmpi::machine::NodeType::computing);
  EXPECT_GT(mine->mflops, 1.0) << "not benchmarked (the reader's default is 1)";
  EXPECT_EQ(specs.back().type, flexmpi::machine::NodeType::network);  // the flat root
}

TEST(DrumConfigFile, DrumReadsItAsTheTopologyFile) {
  DRUM_machineModel* dmm = DRUM_createMachineModel(MPI_COMM_WORLD, DRUM_SILENT);
  ASSERT_NE(dmm, nullptr);
  EXPECT_EQ(DRUM_setParam(dmm, "USE_FLAT_MODEL", "0"), DRUM_OK);
  EXPECT_EQ(DRUM_setParam(dmm, "XML_TOPOLOGY_FILE", written_file().c_str()), DRUM_OK);
  EXPECT_EQ(DRUM_initMachineModel(dmm), DRUM_OK);
  EXPECT_EQ(DRUM_computePowers(dmm), DRUM_OK);
  int ierr = DRUM_FATAL;
  EXPECT_GT(DRUM_getLocalPartSize(dmm, &ierr), 0.0f);
  EXPECT_EQ(ierr, DRUM_OK);
  EXPECT_EQ(DRUM_deleteMachineModel(dmm), DRUM_OK);
}

}  // namespace
