// The DRUM machine model (Faik, DRUM thesis ch. 3 and Appendix A.1): a tree
// whose root is the whole execution environment, whose internal NETWORK nodes
// are routers and switches and whose leaves are COMPUTING nodes (one host,
// single CPU or shared-memory node, with the ranks that run there).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flexmpi::machine {

enum class NodeType { network, computing };

/// "NETWORK_NODE" / "COMPUTING_NODE", the spelling of the XML file (thesis Fig. 3.5).
std::string_view node_type_name(NodeType type);

/// One node as a topology description gives it: children by name, before the
/// tree is checked and numbered.
struct NodeSpec {
  NodeType type = NodeType::computing;
  std::string name;                   ///< unique identifier within the description
  std::string description;            ///< host name (computing) or address (network)
  std::vector<std::string> children;  ///< names of the immediate children
  bool monitorable = true;            ///< IsMonitorable: traffic can be probed (A.1)
  double mflops = 1.0;                ///< benchmark rating b_n (3.1.1); 1 when not benchmarked
};

/// A node of the checked tree. Nodes are stored in postfix order, so a node's
/// index is its currentNodeNumber (A.1) and every subtree is a contiguous range.
struct MachineNode {
  NodeSpec spec;
  int parent = -1;            ///< index of the parent, -1 for the root
  std::vector<int> children;  ///< indices of the immediate children, left to right
  int level = 0;              ///< depth: the root is level 0 (3.1.2, Fig. 3.7)
  int leftmost_leaf = 0;      ///< lowerBoundNodeNumber: number of the subtree's leftmost leaf
  int rightmost_leaf = 0;     ///< upperBoundNodeNumber: number of the subtree's rightmost leaf
  std::vector<int> ranks;     ///< sameNodeProcessList: ranks running on this computing node
  /// The rank that probes the node's interfaces (electedProcess, ch. 4):
  /// the lowest rank on the node, -1 if none runs there.
  int elected_rank = -1;
  /// A monitorable network node's representative (A.1, ch. 4): the rank that
  /// would ask the router or switch for its traffic, the lowest rank in its
  /// subtree; -1 for computing nodes, unmonitorable network nodes and subtrees
  /// without ranks. Only SNMP can reach a switch, so it is recorded and
  /// printed, and the node's measures stay its children's sums.
  int representative = -1;
};

/// The checked, numbered tree.
class MachineModel {
 public:
  /// Checks the description (known child names, one parent per node, one root,
  /// no cycles, computing nodes are leaves) and numbers it in postfix order.
  /// Throws Error(invalid_argument) naming the offending node. `source` names
  /// the description in messages (an XML file, "flat model").
  MachineModel(const std::vector<NodeSpec>& specs, std::string_view source);

  /// Records which rank runs on which host (`host_of_rank[r]`): each rank
  /// joins the computing node whose description is its host name. Throws
  /// Error(invalid_argument) naming the first host with no leaf in the model.
  void attach_ranks(const std::vector<std::string>& host_of_rank);

  [[nodiscard]] const std::vector<MachineNode>& nodes() const { return nodes_; }
  [[nodiscard]] const MachineNode& node(int number) const { return nodes_.at(number); }
  [[nodiscard]] int root() const { return static_cast<int>(nodes_.size()) - 1; }
  /// Numbers of the computing nodes, left to right (the `leaves` list of A.1).
  [[nodiscard]] const std::vector<int>& leaves() const { return leaves_; }
  /// Number of ranks attached (attach_ranks).
  [[nodiscard]] int rank_count() const { return static_cast<int>(leaf_of_rank_.size()); }
  /// Number of the computing node rank `rank` runs on.
  [[nodiscard]] int leaf_of_rank(int rank) const { return leaf_of_rank_.at(rank); }

 private:
  std::vector<MachineNode> nodes_;
  std::vector<int> leaves_;
  std::vector<int> leaf_of_rank_;
  std::string source_;
};

/// The flat model (USE_FLAT_MODEL, A.1): one switch as the root and one
/// computing node per distinct host, in the order the hosts first appear.
std::vector<NodeSpec> flat_model_specs(const std::vector<std::string>& host_of_rank);

}  // namespace flexmpi::machine
