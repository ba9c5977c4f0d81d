#include "resources/scenario/scenario_resources.hpp"

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "flexmpi/error.hpp"
#include "util/text_file.hpp"

namespace flexmpi {
namespace {

// A scenario's initial allocation: the hostfile's nodes, else the processes
// mpiexec started, one PE each, node class "initial".
std::vector<NodeDescription> initial_allocation(std::vector<NodeDescription> nodes,
                                                const std::vector<std::string>& initial_hosts) {
  if (!nodes.empty()) return nodes;
  for (const std::string& host : initial_hosts) {
    auto node = std::find_if(nodes.begin(), nodes.end(),
                             [&](const NodeDescription& n) { return n.hostname == host; });
    if (node == nodes.end()) {
      nodes.push_back({host, "initial", 1, std::nullopt});
    } else {
      ++node->processing_elements;
    }
  }
  return nodes;
}

// The grants as a timeline's events change them, with an index by host name:
// each item is found in constant time, so that a scenario of 10^6 hosts plays
// in linear time.
class Grants {
 public:
  explicit Grants(std::vector<NodeDescription> nodes) : nodes_(std::move(nodes)) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) index_.emplace(nodes_[i].hostname, i);
  }

  // Applies one event; `where` names it in errors.
  void apply(const ScenarioEvent& event, const std::string& where) {
    for (const NodeDescription& item : event.nodes) {
      const auto found = index_.find(item.hostname);
      NodeDescription* node = found == index_.end() ? nullptr : &nodes_[found->second];
      if (node != nullptr && node->proc_type != item.proc_type) {
        throw Error(Errc::bad_config, where + ": host '" + item.hostname + "' is of class '" +
                                          node->proc_type + "', not '" + item.proc_type + "'");
      }
      if (event.available) {
        if (node == nullptr) {
          index_.emplace(item.hostname, nodes_.size());
          nodes_.push_back(item);
        } else {
          node->processing_elements += item.processing_elements;
          if (item.cost) node->cost = item.cost;
        }
        continue;
      }
      const int held = node == nullptr ? 0 : node->processing_elements;
      if (item.processing_elements > held) {
        throw Error(Errc::bad_config, where + ": reclaims " +
                                          std::to_string(item.processing_elements) +
                                          " PEs of host '" + item.hostname + "', which the job " +
                                          "holds " + std::to_string(held) + " of at that point");
      }
      // A node kept with 0 PEs tells the scheduler its processes must go.
      node->processing_elements -= item.processing_elements;
    }
  }

  std::vector<NodeDescription> release() { return std::move(nodes_); }

 private:
  std::vector<NodeDescription> nodes_;
  std::unordered_map<std::string, std::size_t> index_;
};

std::string event_name(const std::string& source, const ScenarioEvent& event) {
  return source + " (iteration " + std::to_string(event.iteration) + ", " +
         (event.available ? "available" : "reclaim") + ")";
}

}  // namespace

std::vector<ScenarioEvent> parse_scenario(const std::string& text, const std::string& source) {
  std::vector<ScenarioEvent> events;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string iteration, action;
    if (!(words >> iteration)) continue;  // blank or comment
    words >> action;
    const std::string where =
        source + " line " + std::to_string(number) + " ('" + printable(line) + "')";
    auto fail = [&](const std::string& what) {
      throw Error(Errc::bad_config, where + ": " + what +
                                        "; expected <iteration> available|reclaim "
                                        "<hostname>:<procType>:<numPE>[:<cost>] ...");
    };
    ScenarioEvent event;
    std::size_t used = 0;
    try {
      event.iteration = std::stoll(iteration, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != iteration.size() || event.iteration < 0) fail("iteration is not a number >= 0");
    if (action != "available" && action != "reclaim") fail("action '" + action + "' is unknown");
    event.available = action == "available";
    for (std::string item; words >> item;) {
      try {
        event.nodes.push_back(parse_node(item, ""));
      } catch (const Error& e) {
        fail(e.what());
      }
    }
    if (event.nodes.empty()) fail("no hostname:procType:numPE item");
    events.push_back(std::move(event));
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& a, const auto& b) { return a.iteration < b.iteration; });
  return events;
}

std::vector<ScenarioEvent> read_scenario(const std::string& path) {
  return parse_scenario(read_text_file(path, "scenario", Errc::bad_config), path);
}

ScenarioResources::ScenarioResources(std::vector<NodeDescription> initial,
                                     std::vector<ScenarioEvent> events, std::string source)
    : initial_(std::move(initial)), events_(std::move(events)) {
  // Play the timeline once: a bad reclaim is a configuration error found
  // before any work, not a failure in the middle of the run.
  Grants grants(initial_);
  for (const ScenarioEvent& event : events_) grants.apply(event, event_name(source, event));
}

SystemStatus ScenarioResources::status(long long iteration) const {
  Grants grants(initial_);
  for (const ScenarioEvent& event : events_) {
    if (event.iteration > iteration) break;
    grants.apply(event, "scenario");
  }
  return {grants.release(), {}};
}

ResourceManagerDescriptor scenario_resources() {
  return {.name = "scenario",
          .help =
              "a timeline of '<iteration> available|reclaim "
              "<hostname>:<procType>:<numPE>[:<cost>] ...' lines: PEs appearing and being "
              "reclaimed, to run the thesis's experiments (6.4, 6.5) on one machine",
          .argument = "FILE",
          .argument_is_input_file = true,
          .validate = [](std::string_view file) { (void)read_scenario(std::string(file)); },
          .create = [](ResourceManagerInput input) -> std::unique_ptr<ResourceManager> {
            return std::make_unique<ScenarioResources>(
                initial_allocation(std::move(input.nodes), input.initial_hosts),
                read_scenario(input.argument), "FLEXMPI_RESOURCES=scenario:" + input.argument);
          }};
}

}  // namespace flexmpi
