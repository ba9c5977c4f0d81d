// Node classes (thesis 5.4.3, Table 6.4): what one processing element of a
// class is worth, for the policies and for the emulated cluster. File format
// (FLEXMPI_NODE_CLASSES), one class per line, '#' starts a comment:
//
//   <procType> <speed> [<cost per PE-hour> [<watts per PE>]]
//
// `speed` is in any unit common to the file (the thesis gives GFLOPS per
// core: C1 1.90, C7 2.25, C6 2.90, C8 4.62); what counts is the ratio to the
// fastest class. A procType that no line names is of speed 1.0 relative to
// the fastest, cost 0 and 0 W. Ranges: speed > 0 and <= 1e12, cost 0..1e9,
// watts 0..1e6; NaN and infinity are refused like any number out of range.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "resources/hostfile.hpp"

namespace flexmpi {

struct NodeClass {
  std::string name;
  double speed = 1.0;  ///< > 0, in the file's unit
  double cost_per_hour = 0.0;
  double watts = 0.0;
  friend bool operator==(const NodeClass&, const NodeClass&) = default;
};

/// Parses a node-class file; Error(bad_config) naming the line otherwise
/// (a class named twice, a number out of its range, with the range).
[[nodiscard]] std::vector<NodeClass> parse_node_classes(const std::string& text,
                                                        const std::string& source);
/// parse_node_classes of a file; Error(bad_config) if it cannot be read.
[[nodiscard]] std::vector<NodeClass> read_node_classes(const std::string& path);

/// The class `name` of `classes`, or nullopt.
[[nodiscard]] std::optional<NodeClass> find_node_class(const std::vector<NodeClass>& classes,
                                                       std::string_view name);
/// Speed of a PE of class `name` relative to the fastest class, in (0, 1]
/// (1 for a class no line names).
[[nodiscard]] double relative_speed(const std::vector<NodeClass>& classes, std::string_view name);

/// The placement of processes whose hosts are names only (the emulated
/// cluster, FLEXMPI_EMULATE_CLUSTER; a batch allocation of nodes that are
/// not host names): the `nprocs` processes mpiexec started fill the PEs of
/// `nodes` in the order listed, rank 0 first, as mpiexec fills slots.
/// Error(bad_config) if the nodes have fewer PEs, naming them with `nodes_are`.
[[nodiscard]] std::vector<std::string> place_initial_processes(
    const std::vector<NodeDescription>& nodes, int nprocs,
    std::string_view nodes_are = "FLEXMPI_EMULATE_CLUSTER: the hostfile's nodes");
/// The relative speed of each of those processes (rank order): its node's class's.
[[nodiscard]] std::vector<double> initial_emulated_speeds(const std::vector<NodeDescription>& nodes,
                                                          const std::vector<NodeClass>& classes,
                                                          int nprocs);

}  // namespace flexmpi
