// The DRUM machine model (thesis ch. 3, A.1): the XML description of Fig. 3.5,
// postfix numbering with the leaf bounds of every subtree, the flat model,
// ranks attached to their hosts, and clear errors for malformed descriptions.
#include "machine/machine_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flexmpi/error.hpp"
#include "machine/machine_xml.hpp"
#include "util/text_file.hpp"

namespace flexmpi::machine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string fixture(const std::string& name) { return std::string(DRUM_FIXTURES) + "/" + name; }

MachineModel fig3_5() {
  return MachineModel(read_machine_xml(fixture("fig3_5.xml")), "fig3_5.xml");
}

/// The message of the Error that building a model from `xml` throws.
std::string rejection(const std::string& xml) {
  try {
    MachineModel(parse_machine_xml(xml, "bad.xml"), "bad.xml");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << xml;
  return "";
}

std::string network(const std::string& name, const std::string& children, int count) {
  return "<node type=\"NETWORK_NODE\" name=\"" + name + "\" description=\"sw-" + name +
         "\" childrenNum=\"" + std::to_string(count) + "\" children=\"" + children +
         "\" IsMonitorable=\"0\"/>";
}

std::string computing(const std::string& name) {
  return "<node type=\"COMPUTING_NODE\" name=\"" + name + "\" description=\"" + name +
         "\" childrenNum=\"0\" children=\";\" IsMonitorable=\"1\"/>";
}

std::string model(const std::string& nodes) { return "<machinemodel>" + nodes + "</machinemodel>"; }

TEST(MachineXml, ReadsFigure3_5AndNumbersItInPostfixOrder) {
  const MachineModel tree = fig3_5();
  std::vector<std::string> names;
  for (const MachineNode& node : tree.nodes()) names.push_back(node.spec.name);
  EXPECT_THAT(names, ElementsAre("3", "4", "1", "5", "6", "2", "0"));
  EXPECT_THAT(tree.leaves(), ElementsAre(0, 1, 3, 4));
  EXPECT_EQ(tree.root(), 6);
  EXPECT_EQ(tree.node(6).spec.description, "192.168.1.1");
  EXPECT_EQ(tree.node(0).spec.description, "n11.ns.cs.rpi.edu");
  EXPECT_EQ(tree.node(0).spec.type, NodeType::computing);
  EXPECT_TRUE(tree.node(2).spec.monitorable);
}

TEST(MachineXml, SubtreeBoundsAreTheLeftmostAndRightmostLeaves) {
  const MachineModel tree = fig3_5();
  EXPECT_EQ(tree.node(2).leftmost_leaf, 0);  // router "1": n11, n12
  EXPECT_EQ(tree.node(2).rightmost_leaf, 1);
  EXPECT_EQ(tree.node(5).leftmost_leaf, 3);  // router "2": n13, n14
  EXPECT_EQ(tree.node(5).rightmost_leaf, 4);
  EXPECT_EQ(tree.node(6).leftmost_leaf, 0);
  EXPECT_EQ(tree.node(6).rightmost_leaf, 4);
  EXPECT_EQ(tree.node(3).leftmost_leaf, 3);  // a leaf bounds itself
  EXPECT_EQ(tree.node(3).rightmost_leaf, 3);
}

TEST(MachineXml, LevelsAndParents) {
  const MachineModel tree = fig3_5();
  EXPECT_EQ(tree.node(6).level, 0);
  EXPECT_EQ(tree.node(6).parent, -1);
  EXPECT_EQ(tree.node(2).level, 1);
  EXPECT_EQ(tree.node(0).level, 2);
  EXPECT_EQ(tree.node(0).parent, 2);
  EXPECT_THAT(tree.node(6).children, ElementsAre(2, 5));
}

TEST(MachineXml, ReadsBenchmarkRatingsStoredBesideTheTopology) {
  const MachineModel tree(read_machine_xml(fixture("bullpen_slow_hub.xml")), "bullpen");
  EXPECT_EQ(tree.leaves().size(), 8u);
  EXPECT_DOUBLE_EQ(tree.node(tree.leaves().front()).spec.mflops, 180.0);
  EXPECT_DOUBLE_EQ(fig3_5().node(0).spec.mflops, 1.0);  // not benchmarked
}

TEST(MachineXml, RanksJoinTheLeafOfTheirHostAndTheLowestIsElected) {
  MachineModel tree = fig3_5();
  tree.attach_ranks({"n13.ns.cs.rpi.edu", "n11.ns.cs.rpi.edu", "n13.ns.cs.rpi.edu"});
  EXPECT_THAT(tree.node(3).ranks, ElementsAre(0, 2));
  EXPECT_EQ(tree.node(3).elected_rank, 0);
  EXPECT_EQ(tree.node(0).elected_rank, 1);
  EXPECT_EQ(tree.node(1).elected_rank, -1);
  EXPECT_EQ(tree.leaf_of_rank(2), 3);
}

// A monitorable network node is represented by the lowest rank of its
// subtree; an unmonitorable one, and computing nodes, by none.
TEST(MachineXml, MonitorableNetworkNodesGetTheLowestRankOfTheirSubtree) {
  std::vector<NodeSpec> specs = {{NodeType::network, "root", "root", {"sw1", "sw2"}},
                                 {NodeType::network, "sw1", "sw1", {"h1", "h2"}},
                                 {NodeType::network, "sw2", "sw2", {"h3"}},
                                 {NodeType::computing, "h1", "h1", {}},
                                 {NodeType::computing, "h2", "h2", {}},
                                 {NodeType::computing, "h3", "h3", {}}};
  specs[2].monitorable = false;
  MachineModel tree(specs, "three hosts");
  tree.attach_ranks({"h3", "h2", "h1", "h2"});
  const auto representative = [&](const std::string& name) {
    for (const MachineNode& node : tree.nodes()) {
      if (node.spec.name == name) return node.representative;
    }
    return -2;
  };
  EXPECT_EQ(representative("sw1"), 1);   // h1 has rank 2, h2 ranks 1 and 3
  EXPECT_EQ(representative("sw2"), -1);  // not monitorable
  EXPECT_EQ(representative("root"), 0);  // rank 0 runs on h3
  EXPECT_EQ(representative("h2"), -1);   // computing nodes have an elected rank instead
  tree.attach_ranks({"h1"});
  EXPECT_EQ(representative("sw1"), 0);
  EXPECT_EQ(representative("root"), 0);
}

TEST(MachineXml, AHostMissingFromTheModelIsNamed) {
  MachineModel tree = fig3_5();
  try {
    tree.attach_ranks({"n11.ns.cs.rpi.edu", "elsewhere"});
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 1 runs on host 'elsewhere'"));
    EXPECT_THAT(e.what(), HasSubstr("fig3_5.xml"));
  }
}

TEST(FlatModel, OneSwitchOverOneComputingNodePerDistinctHost) {
  MachineModel tree(flat_model_specs({"b", "a", "b"}), "flat model");
  tree.attach_ranks({"b", "a", "b"});
  ASSERT_EQ(tree.nodes().size(), 3u);
  EXPECT_EQ(tree.node(tree.root()).spec.type, NodeType::network);
  EXPECT_THAT(tree.leaves(), ElementsAre(0, 1));
  EXPECT_THAT(tree.node(0).ranks, ElementsAre(0, 2));
  EXPECT_THAT(tree.node(1).ranks, ElementsAre(1));
}

TEST(MachineXmlErrors, UnknownNodeType) {
  EXPECT_THAT(rejection(read_text_file(fixture("unknown_type.xml"), "fixture", Errc::internal)),
              HasSubstr("name=\"1\"): unknown node type \"STORAGE_NODE\""));
}

TEST(MachineXmlErrors, ChildrenCountMismatch) {
  EXPECT_THAT(rejection(model(network("0", "a;b;", 3) + computing("a") + computing("b"))),
              HasSubstr("childrenNum=\"3\" but children=\"a;b;\" lists 2"));
}

TEST(MachineXmlErrors, NodeCountMismatch) {
  EXPECT_THAT(rejection("<machinemodel numnode=\"3\">" + network("0", "a;", 1) + computing("a") +
                        "</machinemodel>"),
              HasSubstr("numnode=\"3\"> but it holds 2"));
}

TEST(MachineXmlErrors, Cycle) {
  EXPECT_THAT(rejection(read_text_file(fixture("cycle.xml"), "fixture", Errc::internal)),
              HasSubstr("node 'r1' cannot be reached from the root 'root': its parent links form a "
                        "cycle"));
  EXPECT_THAT(rejection(model(network("0", "a;1;", 2) + computing("a") + network("1", "0;", 1))),
              HasSubstr("no node is the root: the parent links form a cycle"));
  EXPECT_THAT(rejection(model(network("0", "a;", 1) + computing("a") + network("1", ";", 0))),
              HasSubstr("nodes '0' and '1' both have no parent"));
}

TEST(MachineXmlErrors, NodeWithTwoParents) {
  EXPECT_THAT(rejection(model(network("0", "1;2;", 2) + network("1", "a;", 1) +
                              network("2", "a;", 1) + computing("a"))),
              HasSubstr("node 'a' has two parents, '1' and '2'"));
}

TEST(MachineXmlErrors, UnknownChild) {
  EXPECT_THAT(rejection(model(network("0", "a;ghost;", 2) + computing("a"))),
              HasSubstr("node '0' lists child 'ghost', which is not a node of the model"));
}

TEST(MachineXmlErrors, ComputingNodeWithChildren) {
  EXPECT_THAT(rejection(model(network("0", "a;", 1) +
                              "<node type=\"COMPUTING_NODE\" name=\"a\" description=\"a\" "
                              "childrenNum=\"1\" children=\"b;\"/>" +
                              computing("b"))),
              HasSubstr("COMPUTING_NODE 'a' has children"));
}

TEST(MachineXmlErrors, MalformedXmlAndBadNumbers) {
  EXPECT_THAT(rejection("<machinemodel><node"), HasSubstr("malformed XML at offset"));
  EXPECT_THAT(rejection(model(network("0", ";", 0) +
                              "<node type=\"COMPUTING_NODE\" name=\"a\" description=\"a\" "
                              "childrenNum=\"zero\" children=\";\"/>")),
              HasSubstr("attribute childrenNum: expected an integer from 0 to 1048576, got "
                        "\"zero\""));
  EXPECT_THAT(rejection(model("<node type=\"NETWORK_NODE\" name=\"0\" childrenNum=\"0\"/>")),
              HasSubstr("attribute description is missing"));
}

/// The message of the Error that reading `xml` alone throws: what
/// FLEXMPI_DRUM_TOPOLOGY checks at start-up, before any model is built.
std::string read_rejection(const std::string& xml) {
  try {
    (void)parse_machine_xml(xml, "bad.xml");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << xml;
  return "";
}

std::string computing_with(const std::string& attributes) {
  return "<node type=\"COMPUTING_NODE\" name=\"a\" description=\"a\" childrenNum=\"0\" "
         "children=\";\" " +
         attributes + "/>";
}

// A topology with an unknown child, a node that is its own child
// or CPUs=-3 was accepted at start-up and failed (or was ignored) mid-run.
TEST(MachineXmlErrors, TreeAndNumbersAreCheckedWhenTheFileIsRead) {
  EXPECT_THAT(read_rejection(model(network("0", "a;ghost;", 2) + computing("a"))),
              HasSubstr("bad.xml: node '0' lists child 'ghost', which is not a node of the model"));
  EXPECT_THAT(read_rejection(model(network("0", "a;0;", 2) + computing("a"))),
              HasSubstr("bad.xml: node '0' lists itself as its child"));
  EXPECT_THAT(
      read_rejection(model(network("0", "a;1;", 2) + computing("a") + network("1", "0;", 1))),
      HasSubstr("cycle"));
  EXPECT_THAT(read_rejection(model(network("0", "a;", 1) + computing_with("CPUs=\"-3\""))),
              HasSubstr("attribute CPUs: expected an integer from 1 to 1048576, got \"-3\""));
  EXPECT_THAT(read_rejection(model(network("0", "a;", 1) + computing_with("MFLOPS=\"inf\""))),
              HasSubstr("attribute MFLOPS: expected a number > 0 and <= 1000000000000, got "
                        "\"inf\""));
  EXPECT_THAT(read_rejection(model(network("0", "a;", 1) + computing_with("MFLOPS=\"1e308\""))),
              HasSubstr("MFLOPS"));
  EXPECT_THAT(read_rejection(model(network("0", "a;", 1) + computing_with("MFLOPS=\"nan\""))),
              HasSubstr("MFLOPS"));
  EXPECT_THAT(read_rejection(model(network("0", "a;", 1) + computing_with("IsMonitorable=\"2\""))),
              HasSubstr("attribute IsMonitorable: expected an integer from 0 to 1, got \"2\""));
  EXPECT_THAT(read_rejection("<machinemodel numnode=\"1e12\">" + network("0", "a;", 1) +
                             computing("a") + "</machinemodel>"),
              HasSubstr("attribute numnode: expected an integer from 0 to 1048576"));
  // The largest accepted values read.
  EXPECT_NO_THROW((void)parse_machine_xml(
      model(network("0", "a;", 1) + computing_with("CPUs=\"1048576\" MFLOPS=\"1e12\"")), "ok"));
}

TEST(MachineXmlErrors, MissingFileIsNamed) {
  try {
    read_machine_xml("/nonexistent/drum.xml");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/drum.xml"));
  }
}

}  // namespace
}  // namespace flexmpi::machine
