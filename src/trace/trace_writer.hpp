// JSON-lines trace (docs/reference/trace.md): one object per sampling interval,
// written by rank 0. tools/flexmpi-plot turns it into PNG plots.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "monitoring/interval.hpp"
#include "util/output_file.hpp"

namespace flexmpi {

/// The trace record of an interval: per-process times, flags and counts.
/// Components that act on the interval (balancer, policies) add their own
/// fields ("decision", "partition", ...) before it is written.
nlohmann::json interval_record(const IntervalReport& report, double dedicated_threshold,
                               double imbalance_threshold);

class TraceWriter {
 public:
  /// Opens (truncates) `path`; throws Error(bad_config) if it cannot.
  explicit TraceWriter(const std::string& path);
  /// Appends one line and flushes it, so a crashed run keeps its trace; a
  /// failure is reported once (OutputFile).
  void write(const nlohmann::json& record);
  /// Closes the trace; whether every line reached it.
  bool close() { return file_.close(); }

 private:
  OutputFile file_;
};

}  // namespace flexmpi
