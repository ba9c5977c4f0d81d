// What the process manager needs of the adaptation loop: the loop
// (core/adaptation_controller) implements it, so that process management
// depends on an interface, not on the runtime.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

namespace flexmpi {

class ReconfigurationHooks {
 public:
  virtual ~ReconfigurationHooks() = default;
  /// A monitored iteration is open: no reconfiguration may start.
  [[nodiscard]] virtual bool iteration_open() const = 0;
  /// Iterations this process monitored so far (for the collective watchdog's report).
  [[nodiscard]] virtual long long iterations_monitored() const = 0;
  /// Per process, the speeds measured since the last reconfiguration on the
  /// current process set (robust over the intervals on the current blocks);
  /// empty if none was measured yet.
  [[nodiscard]] virtual std::vector<double> fresh_speeds() const = 0;
  /// A spawn or removal, on every process that took part: its time goes into
  /// the next interval's report (ProcessInterval::reconfiguration_seconds), and
  /// rank 0 keeps the event for the trace record of the next interval.
  virtual void record_reconfiguration(nlohmann::json event) = 0;
  /// The process set changed: a new sampling interval starts on every
  /// process (interval boundaries are collective) and what was learnt about
  /// the old set is void.
  virtual void restart_after_reconfiguration() = 0;
  /// Rank 0, at a spawn: what the new processes' loop must know to decide
  /// as the others do; they receive it with import_state.
  [[nodiscard]] virtual nlohmann::json export_state() const = 0;
  virtual void import_state(const nlohmann::json& state) = 0;
};

}  // namespace flexmpi
