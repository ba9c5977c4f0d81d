// Processor description of the cluster (thesis 5.4.1, 5.4.3): one node per
// line, `hostname:procType:numPE[:cost]`; '#' starts a comment.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flexmpi {

struct NodeDescription {
  std::string hostname;
  std::string proc_type;        ///< node class, e.g. "C1"
  int processing_elements = 0;  ///< cores available to the application
  std::optional<double>
      cost;  ///< operational cost per PE (per hour, like a node class's), if given
};

/// Parses one `hostname:procType:numPE[:cost]` item; `where` prefixes error
/// messages ("cluster.txt:3: "). Throws Error(invalid_argument) if malformed.
NodeDescription parse_node(std::string_view item, std::string_view where);

/// Parses hostfile text; `source` names it in errors ("cluster.txt:3: ...").
/// Throws Error(invalid_argument) on a malformed line or a repeated hostname.
std::vector<NodeDescription> parse_hostfile(std::string_view text, std::string_view source);

/// Reads and parses a hostfile; throws Error(invalid_argument) if it cannot be read.
std::vector<NodeDescription> read_hostfile(const std::string& path);

}  // namespace flexmpi
