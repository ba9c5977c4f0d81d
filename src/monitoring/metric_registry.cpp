#include <algorithm>

#include "flexmpi/error.hpp"
#include "monitoring/metric.hpp"
#include "util/split.hpp"

namespace flexmpi {

const std::vector<MetricDescriptor>& metric_backends() {
  static const std::vector<MetricDescriptor> backends = {
      {"work", "work units (rows, nonzeros or weights) per second; always available",
       make_work_metric},
#ifdef FLEXMPI_HAVE_PAPI
      {"papi", "PAPI hardware events, e.g. papi:PAPI_FP_OPS; the first event is the speed metric",
       make_papi_metric},
#endif
  };
  return backends;
}

namespace {

const MetricDescriptor* find_backend(std::string_view name) {
  const auto& all = metric_backends();
  const auto found = std::find_if(all.begin(), all.end(),
                                  [&](const MetricDescriptor& d) { return d.name == name; });
  return found == all.end() ? nullptr : &*found;
}

}  // namespace

// FLEXMPI_METRIC=auto: PAPI_FP_OPS where it can be counted, else work units.
std::unique_ptr<MetricBackend> make_automatic_metric(MetricContext context) {
  const MetricDescriptor* papi = find_backend("papi");
  if (papi == nullptr) {
    context.log("speed metric: work units per second (flexmpi was built without PAPI)");
    return make_work_metric(context);
  }
  context.events = {"PAPI_FP_OPS"};
  try {
    return papi->create(context);
  } catch (const Error& e) {
    context.log("speed metric: work units per second (PAPI_FP_OPS cannot be counted here: " +
                std::string(e.what()) + ")");
    return make_work_metric(context);
  }
}

std::unique_ptr<MetricBackend> make_metric(std::string_view setting, MetricContext context) {
  if (setting == "auto") return make_automatic_metric(context);
  // "<backend>" or "<backend>:<event>[,<event>...]", the backend from the table.
  const std::string_view kind = setting.substr(0, setting.find(':'));
  const MetricDescriptor* backend = find_backend(kind);
  if (backend == nullptr && kind == "papi") {
    throw Error(Errc::unsupported, "FLEXMPI_METRIC='" + std::string(setting) +
                                       "' needs PAPI, but flexmpi was built without it");
  }
  if (backend == nullptr) {
    std::string known = "auto";
    for (const MetricDescriptor& d : metric_backends()) known += ", " + std::string(d.name);
    throw Error(Errc::bad_config,
                "FLEXMPI_METRIC='" + std::string(setting) + "': expected one of " + known);
  }
  if (kind.size() < setting.size()) {
    for (const std::string_view event : split(setting.substr(kind.size() + 1), ',')) {
      context.events.emplace_back(event);
    }
  }
  try {
    return backend->create(context);
  } catch (const Error& e) {
    throw Error(e.code(), "FLEXMPI_METRIC='" + std::string(setting) + "': " + e.what());
  }
}

}  // namespace flexmpi
