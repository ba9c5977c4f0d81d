#include "machine/machine_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "flexmpi/error.hpp"

namespace flexmpi::machine {
namespace {

[[noreturn]] void fail(std::string_view source, const std::string& what) {
  throw Error(Errc::invalid_argument, std::string(source) + ": " + what);
}

std::string quoted(std::string_view name) { return fmt::format("'{}'", name); }

using NameIndex = std::map<std::string, int, std::less<>>;

NameIndex index_by_name(const std::vector<NodeSpec>& specs, std::string_view source) {
  NameIndex index;
  for (int i = 0; i < static_cast<int>(specs.size()); ++i) {
    if (!index.emplace(specs[i].name, i).second) {
      fail(source, "two nodes are named " + quoted(specs[i].name));
    }
  }
  return index;
}

/// The parent of every spec (-1 for none), checking that each child name
/// exists, that only network nodes have children and that no node has two parents.
std::vector<int> parents_of(const std::vector<NodeSpec>& specs, const NameIndex& index,
                            std::string_view source) {
  std::vector<int> parent(specs.size(), -1);
  for (int i = 0; i < static_cast<int>(specs.size()); ++i) {
    const NodeSpec& spec = specs[i];
    if (spec.type == NodeType::computing && !spec.children.empty()) {
      fail(source, "COMPUTING_NODE " + quoted(spec.name) +
                       " has children: only NETWORK_NODEs have children (computing nodes are "
                       "the leaves of the tree)");
    }
    for (const std::string& child_name : spec.children) {
      const auto child = index.find(child_name);
      if (child == index.end()) {
        fail(source, "node " + quoted(spec.name) + " lists child " + quoted(child_name) +
                         ", which is not a node of the model");
      }
      if (child->second == i) {
        fail(source, "node " + quoted(spec.name) +
                         " lists itself as its child: the model must "
                         "be a tree");
      }
      if (parent[child->second] != -1) {
        fail(source, "node " + quoted(child_name) + " has two parents, " +
                         quoted(specs[parent[child->second]].name) + " and " + quoted(spec.name) +
                         ": the model must be a tree");
      }
      parent[child->second] = i;
    }
  }
  return parent;
}

int single_root(const std::vector<NodeSpec>& specs, const std::vector<int>& parent,
                std::string_view source) {
  if (specs.empty()) fail(source, "the model has no nodes");
  const auto is_root = [&](int i) { return parent[i] == -1; };
  std::vector<int> roots;
  for (int i = 0; i < static_cast<int>(specs.size()); ++i) {
    if (is_root(i)) roots.push_back(i);
  }
  if (roots.empty()) fail(source, "no node is the root: the parent links form a cycle");
  if (roots.size() > 1) {
    fail(source, "nodes " + quoted(specs[roots[0]].name) + " and " + quoted(specs[roots[1]].name) +
                     " both have no parent: the model must have one root");
  }
  return roots.front();
}

/// Appends the subtree of `spec` to `order` in postfix order (children left to
/// right). With a stack of its own: a chain of 10^6 nodes, one line each of a
/// DRUM file, would overflow the call stack by recursion.
void postfix(const std::vector<NodeSpec>& specs, const NameIndex& index, int spec,
             std::vector<int>& order) {
  std::vector<std::pair<int, std::size_t>> pending = {{spec, 0}};  // node, next child
  while (!pending.empty()) {
    const auto [node, next] = pending.back();
    if (next < specs[node].children.size()) {
      ++pending.back().second;
      pending.emplace_back(index.at(specs[node].children[next]), 0);
    } else {
      order.push_back(node);
      pending.pop_back();
    }
  }
}

}  // namespace

std::string_view node_type_name(NodeType type) {
  return type == NodeType::network ? "NETWORK_NODE" : "COMPUTING_NODE";
}

MachineModel::MachineModel(const std::vector<NodeSpec>& specs, std::string_view source)
    : source_(source) {
  const NameIndex index = index_by_name(specs, source);
  const std::vector<int> parent = parents_of(specs, index, source);
  std::vector<int> order;
  postfix(specs, index, single_root(specs, parent, source), order);
  if (order.size() != specs.size()) {
    std::vector<bool> reached(specs.size(), false);
    for (int spec : order) reached[spec] = true;
    const auto lost = std::find(reached.begin(), reached.end(), false) - reached.begin();
    fail(source, "node " + quoted(specs[lost].name) + " cannot be reached from the root " +
                     quoted(specs[order.back()].name) + ": its parent links form a cycle");
  }
  std::vector<int> number_of_spec(specs.size());
  for (int number = 0; number < static_cast<int>(order.size()); ++number) {
    number_of_spec[order[number]] = number;
  }
  nodes_.resize(order.size());
  for (int number = 0; number < static_cast<int>(order.size()); ++number) {
    MachineNode& node = nodes_[number];
    node.spec = specs[order[number]];
    const int parent_spec = parent[order[number]];
    node.parent = parent_spec == -1 ? -1 : number_of_spec[parent_spec];
    for (const std::string& child : node.spec.children) {
      node.children.push_back(number_of_spec[index.find(child)->second]);
    }
    // Postfix order: children are numbered before their parent, so their bounds are known.
    const bool is_leaf = node.children.empty();
    node.leftmost_leaf = is_leaf ? number : nodes_[node.children.front()].leftmost_leaf;
    node.rightmost_leaf = is_leaf ? number : nodes_[node.children.back()].rightmost_leaf;
    if (node.spec.type == NodeType::computing) leaves_.push_back(number);
  }
  // The root is numbered last and every parent after its children: walking
  // down the numbers sets a parent's level before its children's.
  for (int number = root() - 1; number >= 0; --number) {
    nodes_[number].level = nodes_[nodes_[number].parent].level + 1;
  }
}

void MachineModel::attach_ranks(const std::vector<std::string>& host_of_rank) {
  for (int leaf : leaves_) {
    nodes_[leaf].ranks.clear();
    nodes_[leaf].elected_rank = -1;
  }
  // Each host's leaf looked up once, the leftmost of a host described twice
  // (as a search from the left finds it): a search per rank made this
  // O(ranks x hosts), 20 ms of a partitioner decision at 16,384 ranks.
  std::unordered_map<std::string_view, int> leaf_of_host;
  for (const int leaf : leaves_) leaf_of_host.try_emplace(nodes_[leaf].spec.description, leaf);
  leaf_of_rank_.assign(host_of_rank.size(), -1);
  for (int rank = 0; rank < static_cast<int>(host_of_rank.size()); ++rank) {
    const auto leaf = leaf_of_host.find(host_of_rank[rank]);
    if (leaf == leaf_of_host.end()) {
      fail(source_, "rank " + std::to_string(rank) + " runs on host " + quoted(host_of_rank[rank]) +
                        ", which no COMPUTING_NODE of the model describes");
    }
    MachineNode& node = nodes_[leaf->second];
    if (node.ranks.empty()) node.elected_rank = rank;
    node.ranks.push_back(rank);
    leaf_of_rank_[rank] = leaf->second;
  }
  // Postfix order: every child is settled before its parent.
  std::vector<int> lowest_rank(nodes_.size(), -1);
  for (std::size_t number = 0; number < nodes_.size(); ++number) {
    MachineNode& node = nodes_[number];
    node.representative = -1;
    lowest_rank[number] = node.elected_rank;
    for (const int child : node.children) {
      const int rank = lowest_rank[static_cast<std::size_t>(child)];
      if (rank >= 0 && (lowest_rank[number] < 0 || rank < lowest_rank[number])) {
        lowest_rank[number] = rank;
      }
    }
    if (node.spec.type == NodeType::network && node.spec.monitorable) {
      node.representative = lowest_rank[number];
    }
  }
}

std::vector<NodeSpec> flat_model_specs(const std::vector<std::string>& host_of_rank) {
  NodeSpec network_switch;
  network_switch.type = NodeType::network;
  // A space cannot appear in a host name, so the switch never collides with a host.
  network_switch.name = "flat switch";
  network_switch.description = "switch";
  std::vector<NodeSpec> specs;
  // Hosts seen so far, in a set: a search of the switch's children per rank
  // would be O(ranks x hosts).
  std::unordered_set<std::string_view> seen;
  for (const std::string& host : host_of_rank) {
    if (!seen.insert(host).second) continue;
    network_switch.children.push_back(host);
    NodeSpec& computing = specs.emplace_back();
    computing.name = host;
    computing.description = host;
  }
  specs.push_back(network_switch);
  return specs;
}

}  // namespace flexmpi::machine
