// With an MPI library that cannot spawn processes (Debian's MPICH 4.0,
// device ch4:ucx; docs/reference/behaviour.md, MPI implementations), dynamic process management
// returns a clear XMPI_ERR_UNSUPPORTED at once, on every process, and nothing else changes. With
// Open MPI the test checks that spawning is reported as supported and is skipped. It spawns
// nothing, so it runs in every CI stage.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <string>

#include "flexmpi.h"
#include "flexmpi/flexmpi.hpp"

namespace {

bool is_open_mpi() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  return std::string(version, length).find("Open MPI") != std::string::npos;
}

TEST(SpawnUnsupported, ReportedAsUnsupportedWithoutHanging) {
  if (is_open_mpi()) {
    EXPECT_TRUE(flexmpi::spawn_supported());
    GTEST_SKIP() << "Open MPI can spawn processes; the unsupported path is for MPICH builds";
  }
  if (flexmpi::spawn_supported()) GTEST_SKIP() << "this MPI library is expected to spawn";
  int size = 0;
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  const MPI_Comm before = XMPI_COMM_WORLD;

  EXPECT_EQ(XMPI_Spawn(nullptr, nullptr, 1, MPI_INFO_NULL, nullptr), XMPI_ERR_UNSUPPORTED);
  EXPECT_NE(std::strstr(XMPI_Last_error_message(), "cannot spawn"), nullptr)
      << XMPI_Last_error_message();
  EXPECT_EQ(XMPI_Remove(1, nullptr), XMPI_ERR_UNSUPPORTED);
  EXPECT_NE(std::strstr(XMPI_Last_error_message(), "Open MPI"), nullptr)
      << XMPI_Last_error_message();
  try {
    flexmpi::reconfigure({{"", size + 1}}, 0);
    ADD_FAILURE() << "reconfigure spawned with an MPI library that cannot";
  } catch (const flexmpi::Error& e) {
    EXPECT_EQ(e.code(), flexmpi::Errc::unsupported) << e.what();
  }
  // Nothing changed: the same communicator, the same processes, still usable.
  EXPECT_EQ(XMPI_COMM_WORLD, before);
  EXPECT_EQ(XMPI_Get_process_status(), XMPI_RUNNING);
  int total = 1;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, XMPI_COMM_WORLD);
  EXPECT_EQ(total, size);
}

}  // namespace
