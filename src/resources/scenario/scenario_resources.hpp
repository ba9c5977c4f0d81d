// FLEXMPI_RESOURCES=scenario:FILE: a timeline of PEs appearing and being
// reclaimed, to run the thesis's experiments (6.4, 6.5) on one machine.
// The smallest backend: the model to copy for a new one.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "resources/resource_manager.hpp"

namespace flexmpi {

/// One line of a scenario: at `iteration`, `nodes` appear or are reclaimed.
struct ScenarioEvent {
  long long iteration = 0;
  bool available = true;  ///< available, else reclaim
  std::vector<NodeDescription> nodes;
};

/// Parses a scenario: one event per line,
/// '#' starts a comment,
///
///   <iteration> available|reclaim <hostname>:<procType>:<numPE>[:<cost>] ...
///
/// in iteration order. Error(bad_config) naming the line and what was
/// expected otherwise. `source` names the file in messages.
[[nodiscard]] std::vector<ScenarioEvent> parse_scenario(const std::string& text,
                                                        const std::string& source);
/// parse_scenario of a file; Error(bad_config) if it cannot be read.
[[nodiscard]] std::vector<ScenarioEvent> read_scenario(const std::string& path);

/// The grants of a scenario over time. The initial allocation is the
/// hostfile's nodes if one is given, else the hosts of the processes mpiexec
/// started (one PE per process, node class "initial"). An `available` item
/// adds PEs to its host (a new node, or one of the same class); a `reclaim`
/// takes them back. The constructor plays the whole timeline and throws
/// Error(bad_config) for a reclaim of PEs the job does not hold at that
/// point or a host given two classes, naming the event.
class ScenarioResources final : public ResourceManager {
 public:
  ScenarioResources(std::vector<NodeDescription> initial, std::vector<ScenarioEvent> events,
                    std::string source);
  [[nodiscard]] std::string_view name() const override { return "scenario"; }
  [[nodiscard]] SystemStatus status(long long iteration) const override;
  void submit_allocation(const std::map<std::string, int>& processes_per_host) override {
    submitted_ = processes_per_host;
  }
  /// The last allocation submitted.
  [[nodiscard]] const std::map<std::string, int>& submitted() const { return submitted_; }

 private:
  std::vector<NodeDescription> initial_;
  std::vector<ScenarioEvent> events_;
  std::map<std::string, int> submitted_;
};

}  // namespace flexmpi
