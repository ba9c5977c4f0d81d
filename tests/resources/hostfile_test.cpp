// Hostfile parsing (thesis 5.4.1, 5.4.3): `hostname:procType:numPE[:cost]`
// lines, comments and blank lines; each malformed line is reported with its
// line number.
#include "resources/hostfile.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

using ::testing::HasSubstr;

void expect_malformed(const std::string& text, const std::string& where,
                      const std::string& also_in_message = "") {
  SCOPED_TRACE(text);
  try {
    parse_hostfile(text, "cluster.txt");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(where));
    if (!also_in_message.empty()) {
      EXPECT_THAT(e.what(), HasSubstr(also_in_message));
    }
  }
}

TEST(Hostfile, ParsesNodesWithCommentsBlankLinesAndCosts) {
  const auto nodes = parse_hostfile(
      "# a small cluster\n"
      "\n"
      "node1:C1:4\n"
      "   \n"
      "  node2 : C2 : 8 : 0.5   # cheaper nodes\n"
      "node3:C1:2:0\r\n"
      "# the end\n",
      "cluster.txt");
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].hostname, "node1");
  EXPECT_EQ(nodes[0].proc_type, "C1");
  EXPECT_EQ(nodes[0].processing_elements, 4);
  EXPECT_FALSE(nodes[0].cost.has_value());
  EXPECT_EQ(nodes[1].hostname, "node2");
  EXPECT_EQ(nodes[1].proc_type, "C2");
  EXPECT_EQ(nodes[1].processing_elements, 8);
  ASSERT_TRUE(nodes[1].cost.has_value());
  EXPECT_DOUBLE_EQ(*nodes[1].cost, 0.5);
  EXPECT_EQ(nodes[2].hostname, "node3");
  EXPECT_EQ(nodes[2].processing_elements, 2);
  ASSERT_TRUE(nodes[2].cost.has_value());
  EXPECT_DOUBLE_EQ(*nodes[2].cost, 0.0);
}

TEST(Hostfile, LastLineWithoutNewline) {
  const auto nodes = parse_hostfile("a:C1:1\nb:C2:3:1.25", "h");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[1].hostname, "b");
  EXPECT_DOUBLE_EQ(nodes[1].cost.value(), 1.25);
}

TEST(Hostfile, MalformedLinesNameFileAndLine) {
  // The bad line is always line 3, after a comment and a good node.
  const std::string head = "# nodes\nok:C1:2\n";
  expect_malformed(head + "a:C1\n", "cluster.txt:3:", "hostname:procType:numPE");
  expect_malformed(head + "a\n", "cluster.txt:3:", "hostname:procType:numPE");
  expect_malformed(head + "a:C1:2:1:5\n", "cluster.txt:3:", "hostname:procType:numPE");
  expect_malformed(head + ":C1:2\n", "cluster.txt:3:", "hostname:procType:numPE");
  expect_malformed(head + "a::2\n", "cluster.txt:3:", "hostname:procType:numPE");
  expect_malformed(head + "a:C1:0\n",
                   "cluster.txt:3:", "numPE: expected an integer from 1 to 1048576, got '0'");
  expect_malformed(head + "a:C1:-1\n",
                   "cluster.txt:3:", "numPE: expected an integer from 1 to 1048576, got '-1'");
  expect_malformed(head + "a:C1:x\n",
                   "cluster.txt:3:", "numPE: expected an integer from 1 to 1048576, got 'x'");
  expect_malformed(head + "a:C1:2.5\n",
                   "cluster.txt:3:", "numPE: expected an integer from 1 to 1048576, got '2.5'");
  expect_malformed(head + "a:C1:\n",
                   "cluster.txt:3:", "numPE: expected an integer from 1 to 1048576, got ''");
  expect_malformed(head + "a:C1:2:abc\n",
                   "cluster.txt:3:", "cost: expected a number from 0 to 1000000000, got 'abc'");
  expect_malformed(head + "a:C1:2:-1\n",
                   "cluster.txt:3:", "cost: expected a number from 0 to 1000000000, got '-1'");
  expect_malformed(head + "a:C1:2:\n",
                   "cluster.txt:3:", "cost: expected a number from 0 to 1000000000, got ''");
  expect_malformed(head + "a:C1:2:inf\n",
                   "cluster.txt:3:", "cost: expected a number from 0 to 1000000000, got 'inf'");
  expect_malformed(head + "a:C1:2:nan\n",
                   "cluster.txt:3:", "cost: expected a number from 0 to 1000000000, got 'nan'");
  expect_malformed(head + "a:C1:2:1e308\n",
                   "cluster.txt:3:", "cost: expected a number from 0 to 1000000000, got '1e308'");
  expect_malformed(head + "a:C1:2097152\n",
                   "cluster.txt:3:", "numPE: expected an integer from 1 to 1048576, got '2097152'");
}

TEST(Hostfile, DuplicateHostIsAnErrorOnItsSecondLine) {
  expect_malformed("a:C1:2\nb:C1:2\n\na:C2:4\n", "cluster.txt:4:", "'a'");
  // Whitespace around the name does not make it a different host.
  expect_malformed("a:C1:2\n  a :C1:2\n", "cluster.txt:2:", "'a'");
}

// A 1,000,000-byte host name was accepted. What a host name can be: at most
// 253 bytes, labels of 1 to 63 letters, digits, '-' or '_' between dots.
TEST(Hostfile, HostNamesAreWhatAHostNameCanBe) {
  const std::string label(63, 'a');
  const std::string longest = label + "." + label + "." + label + "." + std::string(61, 'b');
  ASSERT_EQ(longest.size(), 253u);
  EXPECT_EQ(parse_hostfile(longest + ":C1:1\nnode-01.cluster_a:C1:1\n", "cluster.txt")[0].hostname,
            longest);
  try {
    parse_hostfile(std::string(1'000'000, 'a') + ":C1:1\n", "cluster.txt");
    ADD_FAILURE() << "a 1,000,000-byte host name was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cluster.txt:1: host name 'aaaa"));
    EXPECT_THAT(e.what(), HasSubstr("... (1000000 bytes)' is too long: a host name has at most "
                                    "253 bytes"));
    EXPECT_LT(std::string(e.what()).size(), 300u);  // the name is not quoted whole
  }
  expect_malformed(longest + "b:C1:1\n", "cluster.txt:1:", "is too long");
  expect_malformed(std::string(64, 'a') + ".b:C1:1\n",
                   "cluster.txt:1:", "has a label longer than 63 bytes");
  expect_malformed("a..b:C1:1\n", "cluster.txt:1:", "has an empty label");
  expect_malformed("a b:C1:1\n", "cluster.txt:1:", "host name 'a b' holds ' '");
  expect_malformed("a/b:C1:1\n", "cluster.txt:1:", "holds '/'");
}

TEST(Hostfile, FileWithoutNodesIsAnError) {
  expect_malformed("", "cluster.txt", "no node");
  expect_malformed("# only a comment\n\n   \n", "cluster.txt", "no node");
}

TEST(Hostfile, ReadsAFile) {
  const auto path = std::filesystem::current_path() / "hostfile_read_test.txt";
  std::ofstream(path) << "x:C1:3:2\ny:C2:1\n";
  const auto nodes = read_hostfile(path.string());
  std::filesystem::remove(path);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].hostname, "x");
  EXPECT_EQ(nodes[0].processing_elements, 3);
  EXPECT_DOUBLE_EQ(nodes[0].cost.value(), 2.0);
  EXPECT_EQ(nodes[1].proc_type, "C2");
}

TEST(Hostfile, ErrorsInAFileNameThePath) {
  const auto path = std::filesystem::current_path() / "hostfile_bad_test.txt";
  std::ofstream(path) << "x:C1:3\ny:C2:zero\n";
  try {
    read_hostfile(path.string());
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path.string() + ":2:"));
  }
  std::filesystem::remove(path);
}

TEST(Hostfile, MissingFileIsAnErrorNamingThePath) {
  try {
    read_hostfile("/nonexistent/dir/hosts.txt");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/dir/hosts.txt"));
  }
}

}  // namespace
}  // namespace flexmpi
