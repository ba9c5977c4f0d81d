#include <algorithm>

#include "flexmpi/error.hpp"
#include "monitoring/metric.hpp"

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

std::vector<std::string> split_events(std::string_view list) {
  std::vector<std::string> events;
  std::size_t start = 0;
  for (;;) {
    const auto comma = list.find(',', start);
    events.emplace_back(
        list.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return events;
    start = comma + 1;
  }
}

const MetricDescriptor* find_backend(std::string_view name) {
  const auto& all = metric_backends();
  const auto found = std::find_if(all.begin(), all.end(),
                                  [&](const MetricDescriptor& d) { return d.name == name; });
  return found == all.end() ? nullptr : &*found;
}

}  // namespace

std::unique_ptr<MetricBackend> make_metric(std::string_view setting, MetricContext context) {
  if (setting == "work") return make_work_metric(context);
  const bool automatic = setting == "auto";
  const MetricDescriptor* papi = find_backend("papi");
  if (automatic) {
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
  if (papi == nullptr) {
    throw Error(Errc::unsupported, "FLEXMPI_METRIC='" + std::string(setting) +
                                       "' needs PAPI, but flexmpi was built without it");
  }
  context.events = split_events(setting.substr(setting.find(':') + 1));
  try {
    return papi->create(context);
  } catch (const Error& e) {
    throw Error(e.code(), "FLEXMPI_METRIC='" + std::string(setting) + "': " + e.what());
  }
}

}  // namespace flexmpi
