#include "resources/hostfile.hpp"

#include <charconv>
#include <cmath>
#include <set>

#include "flexmpi/error.hpp"
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
  node.hostname = std::string(trim(fields[0]));
  node.proc_type = std::string(trim(fields[1]));
  const std::string_view pes = trim(fields[2]);
  const auto [pes_end, pes_error] =
      std::from_chars(pes.data(), pes.data() + pes.size(), node.processing_elements);
  if (pes_error != std::errc() || pes_end != pes.data() + pes.size() ||
      node.processing_elements < 1) {
    throw Error(Errc::invalid_argument,
                std::string(where) + "numPE '" + std::string(pes) + "' is not a whole number >= 1");
  }
  if (fields.size() == 4) {
    const std::string_view cost_text = trim(fields[3]);
    double cost = 0.0;
    const auto [cost_end, cost_error] =
        std::from_chars(cost_text.data(), cost_text.data() + cost_text.size(), cost);
    if (cost_error != std::errc() || cost_end != cost_text.data() + cost_text.size() ||
        !std::isfinite(cost) || cost < 0.0) {
      throw Error(Errc::invalid_argument, std::string(where) + "cost '" + std::string(cost_text) +
                                              "' is not a number >= 0");
    }
    node.cost = cost;
  }
  return node;
}

std::vector<NodeDescription> parse_hostfile(std::string_view text, std::string_view source) {
  std::vector<NodeDescription> nodes;
  std::set<std::string, std::less<>> seen;
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
