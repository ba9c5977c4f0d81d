// Reader of the XML machine description of the DRUM thesis, Fig. 3.5:
//
//   <machinemodel numnode="3">
//     <node type="NETWORK_NODE" name="0" description="192.168.1.1" childrenNum="2"
//           children="1;2;" IsMonitorable="1"></node>
//     <node type="COMPUTING_NODE" name="1" description="n11" childrenNum="0"
//           children=";" IsMonitorable="1" MFLOPS="950.5"></node>
//     ...
//
// The benchmark rating of a computing node (3.1.1) is stored beside the
// topology as the optional MFLOPS attribute (1 when absent: not benchmarked).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "machine/machine_model.hpp"

namespace flexmpi::machine {

/// Parses the text of a machine description; `source` names it in messages.
/// Throws Error(invalid_argument) naming the node and attribute at fault
/// (malformed XML, unknown node type, childrenNum not matching children,
/// numnode not matching the node count, a bad number).
std::vector<NodeSpec> parse_machine_xml(std::string_view text, std::string_view source);

/// Reads and parses an XML machine description; Error(bad_config) if the file
/// cannot be read.
std::vector<NodeSpec> read_machine_xml(const std::string& path);

/// Attributes written after those of Fig. 3.5 (name, value); the reader
/// ignores them. flexmpi-drum-config records a host's hardware this way.
using ExtraAttributes = std::vector<std::pair<std::string, std::string>>;

/// The text of a machine description in the format parse_machine_xml reads:
/// one <node> per spec, in order, with MFLOPS on computing nodes, and
/// `extra[i]` (when given) after the attributes of specs[i].
std::string write_machine_xml(const std::vector<NodeSpec>& specs,
                              const std::vector<ExtraAttributes>& extra = {});

}  // namespace flexmpi::machine
