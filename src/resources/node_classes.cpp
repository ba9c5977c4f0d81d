#include "resources/node_classes.hpp"

#include <algorithm>
#include <optional>
#include <sstream>
#include <unordered_set>

#include "flexmpi/error.hpp"
#include "util/number_range.hpp"
#include "util/text_file.hpp"

namespace flexmpi {
namespace {

// Wide enough for any machine in any unit, narrow enough that garbage
// (1e308, which turns sums into infinity) is refused when the file is read.
constexpr NumberRange kSpeed{0.0, 1e12, true};
constexpr NumberRange kCostPerHour{0.0, 1e9};
constexpr NumberRange kWatts{0.0, 1e6};

}  // namespace

std::vector<NodeClass> parse_node_classes(const std::string& text, const std::string& source) {
  std::vector<NodeClass> classes;
  std::unordered_set<std::string> names;  // a hash set: 10^6 classes in linear time
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    NodeClass node_class;
    if (!(words >> node_class.name)) continue;  // blank or comment
    const std::string where =
        source + " line " + std::to_string(number) + " ('" + printable(line) + "')";
    auto fail = [&](const std::string& what) {
      throw Error(Errc::bad_config,
                  where + ": " + what +
                      "; expected <procType> <speed> [<cost per PE-hour> [<watts per PE>]]");
    };
    // Each number in turn: present and valid, or absent (then the rest is too).
    auto number_field = [&](double& value, bool required, const char* what,
                            const NumberRange& range) {
      std::string word;
      if (!(words >> word)) {
        if (required) fail(std::string(what) + " is missing");
        return false;
      }
      const std::optional<double> number = parse_number(word);
      if (!number || !range.contains(*number)) {
        fail(std::string(what) + ": " + range.expected_word(printable(word), '\''));
      }
      value = *number;
      return true;
    };
    if (number_field(node_class.speed, true, "speed", kSpeed) &&
        number_field(node_class.cost_per_hour, false, "cost", kCostPerHour)) {
      (void)number_field(node_class.watts, false, "watts", kWatts);
    }
    if (std::string extra; words >> extra) fail("'" + extra + "' is one word too many");
    if (!names.insert(node_class.name).second) {
      fail("class '" + node_class.name + "' is described twice");
    }
    classes.push_back(std::move(node_class));
  }
  return classes;
}

std::vector<NodeClass> read_node_classes(const std::string& path) {
  return parse_node_classes(read_text_file(path, "node-class", Errc::bad_config), path);
}

std::optional<NodeClass> find_node_class(const std::vector<NodeClass>& classes,
                                         std::string_view name) {
  const auto found = std::find_if(classes.begin(), classes.end(),
                                  [&](const NodeClass& c) { return c.name == name; });
  if (found == classes.end()) return std::nullopt;
  return *found;
}

double relative_speed(const std::vector<NodeClass>& classes, std::string_view name) {
  const std::optional<NodeClass> found = find_node_class(classes, name);
  if (!found) return 1.0;
  double fastest = 0.0;
  for (const NodeClass& c : classes) fastest = std::max(fastest, c.speed);
  return found->speed / fastest;
}

std::vector<std::string> place_initial_processes(const std::vector<NodeDescription>& nodes,
                                                 int nprocs, std::string_view nodes_are) {
  std::vector<std::string> hosts;
  for (const NodeDescription& node : nodes) {
    for (int pe = 0; pe < node.processing_elements && static_cast<int>(hosts.size()) < nprocs;
         ++pe) {
      hosts.push_back(node.hostname);
    }
  }
  if (static_cast<int>(hosts.size()) < nprocs) {
    throw Error(Errc::bad_config, std::string(nodes_are) + " have " + std::to_string(hosts.size()) +
                                      " PEs for the " + std::to_string(nprocs) +
                                      " processes mpiexec started");
  }
  return hosts;
}

std::vector<double> initial_emulated_speeds(const std::vector<NodeDescription>& nodes,
                                            const std::vector<NodeClass>& classes, int nprocs) {
  std::vector<double> speeds;
  for (const std::string& host : place_initial_processes(nodes, nprocs)) {
    const auto node = std::find_if(nodes.begin(), nodes.end(),
                                   [&](const NodeDescription& n) { return n.hostname == host; });
    speeds.push_back(relative_speed(classes, node->proc_type));
  }
  return speeds;
}

}  // namespace flexmpi
