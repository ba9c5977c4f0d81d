// Metric backends: what the monitor counts for each iteration to measure the
// speed of a processing element. The thesis counts FLOP with PAPI (4.2.1);
// where the machine has no counters the speed is work units per second
// (docs/reference/behaviour.md, Speed metric). A backend is one class behind this interface plus
// one descriptor in the registry (metric_registry.cpp); FLEXMPI_METRIC picks it.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flexmpi {

class MetricBackend {
 public:
  virtual ~MetricBackend() = default;

  /// "work" or "papi".
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// Events counted every iteration; the first one is the speed metric.
  [[nodiscard]] virtual const std::vector<std::string>& events() const = 0;
  /// Makes sure `event` is counted from the next start() on and returns its
  /// index in events(). Throws Error(Errc::event_unavailable) if it cannot be.
  virtual std::size_t require(const std::string& event) = 0;
  /// Starts counting an iteration.
  virtual void start() = 0;
  /// Stops counting; counts.size() == events().size().
  virtual void stop(std::span<long long> counts) = 0;
  /// The speed-metric amount of the iteration just stopped. Counters are
  /// whole numbers; work units need not be (FLEXMPI_LB_MODEL=weight).
  [[nodiscard]] virtual double metric_value(std::span<const long long> counts) const {
    return static_cast<double>(counts.front());
  }
};

/// What a backend may need from the runtime when it is created.
struct MetricContext {
  std::vector<std::string> events;              ///< from FLEXMPI_METRIC=papi:E1,E2
  std::function<double()> current_work;         ///< work units of this process's partition
  std::function<void(const std::string&)> log;  ///< informational messages
};

/// One registered backend.
struct MetricDescriptor {
  std::string_view name;
  std::string_view help;
  std::function<std::unique_ptr<MetricBackend>(const MetricContext&)> create;
};

/// All backends compiled into this build ("papi" only if PAPI was found).
const std::vector<MetricDescriptor>& metric_backends();

/**
 * Creates the backend FLEXMPI_METRIC asks for: "work", "papi:E1[,E2]", or
 * "auto" = papi:PAPI_FP_OPS, falling back to work (logged) where the machine
 * has no such counter. An explicit papi request that cannot be met throws
 * Error(Errc::event_unavailable or Errc::unsupported), never fakes counts.
 */
std::unique_ptr<MetricBackend> make_metric(std::string_view setting, MetricContext context);

/// Work units: one event, "WORK", whose count is the partition's work.
std::unique_ptr<MetricBackend> make_work_metric(const MetricContext& context);

#ifdef FLEXMPI_HAVE_PAPI
/// PAPI hardware counters with the start-up calibration of thesis 4.2.1.
std::unique_ptr<MetricBackend> make_papi_metric(const MetricContext& context);
#endif

}  // namespace flexmpi
