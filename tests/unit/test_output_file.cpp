// Output that cannot be lost silently (util/output_file, issue 34): an
// unopenable path is refused by setting name, a write the device refuses is
// reported once and the file says it is not intact.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "flexmpi/error.hpp"
#include "util/output_file.hpp"

namespace flexmpi {
namespace {

using ::testing::HasSubstr;

TEST(OutputFile, WritesAndStaysIntact) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("flexmpi_output_" + std::to_string(::getpid()) + ".txt");
  {
    OutputFile file("FLEXMPI_TRACE", path.string());
    file.append("one\n");
    file.append("two\n");
    EXPECT_TRUE(file.intact());
    EXPECT_TRUE(file.close());
  }
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  EXPECT_EQ(text.str(), "one\ntwo\n");
  std::filesystem::remove(path);
}

TEST(OutputFile, RefusesAnUnopenablePathByName) {
  try {
    OutputFile file("FLEXMPI_REPORT", "/nonexistent/dir/report.json");
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_REPORT='/nonexistent/dir/report.json': cannot open "
                                    "for writing (No such file or directory)"));
  }
}

TEST(OutputFile, AFullDeviceIsReportedOnce) {
  ::testing::internal::CaptureStderr();
  OutputFile file("FLEXMPI_TRACE", "/dev/full");
  file.append("a line\n");
  file.append("another line\n");
  const bool closed = file.close();
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(file.intact());
  EXPECT_FALSE(closed);
  const std::string message =
      "flexmpi: FLEXMPI_TRACE='/dev/full': writing failed (No space left on device)";
  EXPECT_THAT(said, HasSubstr(message));
  EXPECT_EQ(said.find(message), said.rfind(message)) << said;
}

}  // namespace
}  // namespace flexmpi
