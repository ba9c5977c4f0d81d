// The one reader of settings files (util/text_file): directories, FIFOs,
// devices, sockets, files every user may write and files above the cap
// refused by name before they are read (a FIFO blocked every process in
// open(), /dev/zero was read until memory ran out), binary bytes refused by
// position, byte-order marks and CR LF endings dropped, and every file parser
// built on it sees the clean text.
#include "util/text_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "flexmpi/error.hpp"
#include "policies/schedule.hpp"
#include "resources/node_classes.hpp"

namespace flexmpi {
namespace {

using ::testing::HasSubstr;

class TextFile : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() /
                 ("flexmpi_text_file_" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = (directory_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string message_of(const std::string& path) {
    try {
      (void)read_text_file(path, "schedule", Errc::bad_config);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::bad_config);
      return e.what();
    }
    ADD_FAILURE() << path << " was accepted";
    return {};
  }
  std::filesystem::path directory_;
};

TEST_F(TextFile, ADirectoryIsRefusedByName) {
  EXPECT_THAT(message_of(directory_.string()),
              HasSubstr("the schedule file '" + directory_.string() + "' is a directory"));
}

TEST_F(TextFile, AMissingFileIsRefusedByName) {
  EXPECT_THAT(message_of((directory_ / "none").string()), HasSubstr("cannot read the schedule"));
}

// Each of these blocked in open() (a FIFO nobody writes) or was read until
// memory ran out (/dev/zero): refused from its status, before it is opened.
TEST_F(TextFile, AFifoIsRefusedBeforeItIsOpened) {
  const std::string fifo = (directory_ / "hosts.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(message_of(fifo), HasSubstr("the schedule file '" + fifo +
                                          "' is a FIFO (named pipe): expected a file"));
}

TEST_F(TextFile, CharacterDevicesAreRefused) {
  for (const std::string device : {"/dev/zero", "/dev/null", "/dev/urandom"}) {
    EXPECT_THAT(message_of(device),
                HasSubstr("'" + device + "' is a character device: expected a file"));
  }
}

TEST_F(TextFile, ASocketIsRefused) {
  const std::string path = (directory_ / "socket").string();
  const int descriptor = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(descriptor, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof address.sun_path);
  path.copy(address.sun_path, path.size());
  ASSERT_EQ(::bind(descriptor, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_THAT(message_of(path), HasSubstr("is a socket: expected a file"));
  ::close(descriptor);
}

TEST_F(TextFile, ALinkIsFollowedToTheFileItLeadsTo) {
  const std::string target = write("schedule.txt", "10 spawn 1\n");
  const std::string link = (directory_ / "link.txt").string();
  std::filesystem::create_symlink(target, link);
  EXPECT_EQ(read_text_file(link, "schedule", Errc::bad_config), "10 spawn 1\n");
  const std::string fifo = (directory_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string link_to_fifo = (directory_ / "link_to_fifo").string();
  std::filesystem::create_symlink(fifo, link_to_fifo);
  EXPECT_THAT(message_of(link_to_fifo), HasSubstr("is a FIFO (named pipe)"));
}

// A sparse file: no disk is used for its 256 MiB + 1 byte.
TEST_F(TextFile, AFileAboveTheCapIsRefusedWithTheCap) {
  const std::string path = write("huge.txt", "");
  std::filesystem::resize_file(path, kMaxSettingsFileBytes + 1);
  EXPECT_THAT(message_of(path), HasSubstr("holds 268435457 bytes: a settings file may hold at "
                                          "most 268435456 bytes (256 MiB)"));
  std::filesystem::resize_file(path, 1000);  // within the cap: read (and refused as binary)
  EXPECT_THAT(message_of(path), HasSubstr("byte 0x00 is not text"));
}

// A file anyone may change decides where this job starts processes.
TEST_F(TextFile, AFileEveryUserMayWriteIsRefused) {
  const std::string path = write("open.txt", "10 spawn 1\n");
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  EXPECT_THAT(message_of(path), HasSubstr("may be written by every user (mode 0666): anyone "
                                          "could change what this run does"));
  ASSERT_EQ(::chmod(path.c_str(), 0664), 0);  // the group may: accepted
  EXPECT_EQ(read_text_file(path, "schedule", Errc::bad_config), "10 spawn 1\n");
}

TEST_F(TextFile, AByteOrderMarkAndCrLfEndingsAreDropped) {
  const std::string path = write("bom.txt",
                                 "\xEF\xBB\xBF"
                                 "10 spawn 1\r\n20 remove 1\r\n");
  EXPECT_EQ(read_text_file(path, "schedule", Errc::bad_config), "10 spawn 1\n20 remove 1\n");
  const auto actions = read_schedule(path);
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].iteration, 10);
}

TEST_F(TextFile, ANodeClassFileWithAByteOrderMarkKeepsItsFirstCost) {
  // With the mark the first class was "\ufeffC1": C1 then had no cost (0.0).
  const std::string path = write("classes.txt",
                                 "\xEF\xBB\xBF"
                                 "C1 1.0 0.1\r\nC8 2.0 0.4\r\n");
  const auto classes = read_node_classes(path);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].name, "C1");
  EXPECT_DOUBLE_EQ(classes[0].cost_per_hour, 0.1);
}

TEST_F(TextFile, ABinaryByteIsRefusedWithItsLineAndColumn) {
  const std::string path = write("binary.txt", std::string("10 spawn 1\n20 sp\0wn 1\n", 22));
  const std::string message = message_of(path);
  EXPECT_THAT(message, HasSubstr("line 2, column 6: byte 0x00 is not text"));
}

TEST_F(TextFile, ALoneCarriageReturnIsNotALineEnding) {
  EXPECT_THAT(message_of(write("cr.txt", "10 spawn 1\r20 spawn 1\n")),
              HasSubstr("line 1, column 11: byte 0x0d"));
}

TEST(Printable, EscapesControlAndNonAsciiBytes) {
  EXPECT_EQ(printable("a\tb\xEF\xBB\xBF"
                      "c"),
            "a\\x09b\\xef\\xbb\\xbfc");
}

}  // namespace
}  // namespace flexmpi
