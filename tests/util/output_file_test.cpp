// Output that cannot be lost silently (util/output_file): an unopenable path
// is refused by setting name, a write the device refuses is reported once and
// the file says it is not intact. Outputs that never destroy inputs or each
// other: a link, a FIFO, an output that is an input's file by device and
// inode, two outputs on one file, each refused before anything is written.
#include "util/output_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

using ::testing::HasSubstr;

class OutputPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / "flexmpi_output_paths_";
    directory_ += std::to_string(::getpid());
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }
  std::string path(const std::string& name) const { return (directory_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  static std::string read(const std::string& file) {
    std::stringstream text;
    text << std::ifstream(file).rdbuf();
    return text.str();
  }
  // The message check_outputs refuses with; a failure if it accepts.
  static std::string refusal(const std::vector<FileSetting>& inputs,
                             const std::vector<OutputSetting>& outputs) {
    try {
      check_outputs(inputs, outputs, Errc::bad_config);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::bad_config);
      return e.what();
    }
    ADD_FAILURE() << "accepted";
    return {};
  }
  std::filesystem::path directory_;
};

TEST(OutputFile, WritesAndStaysIntact) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / "flexmpi_output_";
  path += std::to_string(::getpid()) + ".txt";
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

// FLEXMPI_TRACE naming the hostfile replaced the hostfile with the trace.
TEST_F(OutputPaths, AnOutputThatIsAnInputsFileIsRefusedWhateverItsSpelling) {
  const std::string hosts = write("hosts.txt", "node1:C1:2\n");
  const std::string other_spelling = (directory_ / "." / "hosts.txt").string();
  EXPECT_THAT(refusal({{"FLEXMPI_HOSTFILE", hosts}}, {{"FLEXMPI_TRACE", other_spelling}}),
              HasSubstr("FLEXMPI_TRACE='" + other_spelling + "' is the file of FLEXMPI_HOSTFILE='" +
                        hosts + "': writing it would destroy that input"));
  const std::string hard_link = path("hard_link.txt");
  std::filesystem::create_hard_link(hosts, hard_link);
  EXPECT_THAT(refusal({{"FLEXMPI_HOSTFILE", hosts}}, {{"FLEXMPI_REPORT", hard_link}}),
              HasSubstr("is the file of FLEXMPI_HOSTFILE"));
  EXPECT_EQ(read(hosts), "node1:C1:2\n");
  EXPECT_NO_THROW(check_outputs({{"FLEXMPI_HOSTFILE", hosts}},
                                {{"FLEXMPI_TRACE", path("trace.jsonl")}}, Errc::bad_config));
}

// Trace and report on one path: the report overwrote the trace.
TEST_F(OutputPaths, TwoOutputsOnOneFileAreRefusedBeforeEitherExists) {
  const std::string trace = path("run.jsonl");
  const std::string same = (directory_ / ".." / directory_.filename() / "run.jsonl").string();
  EXPECT_THAT(refusal({}, {{"FLEXMPI_TRACE", trace}, {"FLEXMPI_REPORT", same}}),
              HasSubstr("FLEXMPI_REPORT='" + same + "' and FLEXMPI_TRACE='" + trace +
                        "' are the same file: one would overwrite the other"));
  EXPECT_FALSE(std::filesystem::exists(trace));
}

// The checkpoint may be the restart file (XMPI_Resume reads it first), not an
// input's, and its FILE.prev and FILE.partial are checked as well.
TEST_F(OutputPaths, TheCheckpointMayReplaceTheRestartFileOnly) {
  const std::string state = write("state.h5", "checkpoint");
  const OutputSetting checkpoint{
      "FLEXMPI_CHECKPOINT", state, {state + ".partial", state + ".prev"}, "FLEXMPI_RESTART", true};
  EXPECT_NO_THROW(check_outputs({{"FLEXMPI_RESTART", state}}, {checkpoint}, Errc::bad_config));
  EXPECT_THAT(refusal({{"FLEXMPI_PROFILE", state}}, {checkpoint}),
              HasSubstr("FLEXMPI_CHECKPOINT='" + state + "' is the file of FLEXMPI_PROFILE"));
  const std::string profile = write("state.h5.prev", "{}");
  EXPECT_THAT(refusal({{"FLEXMPI_MACHINE_PROFILE", profile}}, {checkpoint}),
              HasSubstr("FLEXMPI_CHECKPOINT='" + state + "' (its file '" + profile +
                        "') is the file of FLEXMPI_MACHINE_PROFILE"));
  EXPECT_THAT(refusal({}, {{"FLEXMPI_TRACE", profile}, checkpoint}),
              HasSubstr("are the same file"));
  EXPECT_THAT(refusal({}, {{"FLEXMPI_CHECKPOINT", "/dev/null", {}, {}, true}}),
              HasSubstr("is not a regular file but a character device"));
}

// A link planted where the trace goes truncated the file it led to.
TEST_F(OutputPaths, ALinkIsRefusedAndWhatItLeadsToKept) {
  const std::string target = write("precious.txt", "keep me\n");
  const std::string link = path("trace.jsonl");
  std::filesystem::create_symlink(target, link);
  try {
    OutputFile file("FLEXMPI_TRACE", link);
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_TRACE='" + link + "' is a symbolic link (to '" +
                                    target + "'): flexmpi does not write through a link"));
  }
  EXPECT_EQ(read(target), "keep me\n");
}

// A FIFO blocked the writer in open() until someone read it.
TEST_F(OutputPaths, AFifoIsRefusedWithoutWaiting) {
  const std::string fifo = path("trace.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(refusal({}, {{"FLEXMPI_TRACE", fifo}}),
              HasSubstr("FLEXMPI_TRACE='" + fifo + "' is not a regular file but a FIFO"));
  EXPECT_THROW(OutputFile("FLEXMPI_TRACE", fifo), Error);
}

TEST_F(OutputPaths, AnUncreatablePathIsRefusedWithTheSystemsReason) {
  EXPECT_THAT(refusal({}, {{"--output", "/no/such/dir/m.json"}}),
              HasSubstr("--output='/no/such/dir/m.json': cannot open for writing (No such file "
                        "or directory) in its directory '/no/such/dir'"));
  const std::string file = write("file.txt", "");
  EXPECT_THAT(refusal({}, {{"FLEXMPI_REPORT", file + "/report.json"}}),
              HasSubstr("cannot open for writing (Not a directory)"));
  EXPECT_THAT(refusal({}, {{"FLEXMPI_REPORT", directory_.string()}}),
              HasSubstr("is not a regular file but a directory"));
}

}  // namespace
}  // namespace flexmpi
