#include "resources/hostfile.hpp"

#include <charconv>
#include <cmath>
#include <unordered_set>

#include "flexmpi/error.hpp"
#include "util/host_name.hpp"
#include "util/number_range.hpp"
#include "util/text_file.hpp"

namespace flexmpi {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  for (;;) {
    const auto next = text.find(separator, start);
    fields.push_back(text.substr(start, next == std::string_view::npos ? next : next - start));
    if (next == std::string_view::npos) return fields;
    start = next + 1;
  }
}

}  // namespace

NodeDescription parse_node(std::string_view item, std::string_view where) {
  const auto fields = split(item, ':');
  if (fields.size() < 3 || fields.size() > 4 || trim(fields[0]).empty() ||
      trim(fields[1]).empty()) {
    throw Error(Errc::invalid_argument, std::string(where) +
                                            "expected hostname:procType:numPE[:cost], got '" +
                                            std::string(item) + "'");
  }
  NodeDescription node;
  if (const std::string problem = host_name_problem(trim(fields[0])); !problem.empty()) {
    throw Error(Errc::invalid_argument, std::string(where) + problem);
  }
  node.hostname = std::string(trim(fields[0]));
  node.proc_type = std::string(trim(fields[1]));
  // The ranges of the node-class file: PEs a node holds, and its cost per
  // PE-hour (node.processing_elements are summed in int over the nodes).
  constexpr NumberRange kPes{1.0, 1048576.0, false, true};
  constexpr NumberRange kCost{0.0, 1e9};
  const std::string_view pes = trim(fields[2]);
  const std::optional<double> pes_value = parse_number(pes);
  if (!pes_value || !kPes.contains(*pes_value)) {
    throw Error(Errc::invalid_argument,
                std::string(where) + "numPE: " + kPes.expected_word(pes, '\''));
  }
  node.processing_elements = static_cast<int>(*pes_value);
  if (fields.size() == 4) {
    const std::string_view cost_text = trim(fields[3]);
    const std::optional<double> cost = parse_number(cost_text);
    if (!cost || !kCost.contains(*cost)) {
      throw Error(Errc::invalid_argument,
                  std::string(where) + "cost: " + kCost.expected_word(cost_text, '\''));
    }
    node.cost = *cost;
  }
  return node;
}

std::vector<NodeDescription> parse_hostfile(std::string_view text, std::string_view source) {
  std::vector<NodeDescription> nodes;
  std::unordered_set<std::string> seen;  // a hash set: 10^6 nodes in linear time
  int line_number = 0;
  for (std::string_view raw : split(text, '\n')) {
    ++line_number;
    const std::string_view line = trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    const std::string where = std::string(source) + ":" + std::to_string(line_number) + ": ";
    NodeDescription node = parse_node(line, where);
    if (!seen.insert(node.hostname).second) {
      throw Error(Errc::invalid_argument, where + "host '" + node.hostname + "' is listed twice");
    }
    nodes.push_back(std::move(node));
  }
  if (nodes.empty())
    throw Error(Errc::invalid_argument, std::string(source) + ": no node is described");
  return nodes;
}

std::vector<NodeDescription> read_hostfile(const std::string& path) {
  return parse_hostfile(read_text_file(path, "host", Errc::invalid_argument), path);
}

}  // namespace flexmpi
