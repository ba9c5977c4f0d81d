#include "resources/resource_manager.hpp"

#include <numeric>

#include "flexmpi/error.hpp"

namespace flexmpi {

void ResourceManager::launch(const std::string& host, int /*count*/,
                             const std::vector<std::string>& /*argv*/,
                             const std::string& /*directory*/, const std::string& /*port*/) {
  throw Error(Errc::unsupported, "FLEXMPI_RESOURCES=" + std::string(name()) +
                                     " does not start processes (on " + host +
                                     "): they are spawned");
}

int ResourceView::granted_pes() const {
  return std::accumulate(classes.begin(), classes.end(), 0,
                         [](int sum, const NodeClassStatus& c) { return sum + c.granted_pes; });
}

int ResourceView::running() const {
  return std::accumulate(classes.begin(), classes.end(), 0,
                         [](int sum, const NodeClassStatus& c) { return sum + c.running; });
}

void to_json(nlohmann::json& out, const ResourceView& view) {
  out = {{"reclaimed", view.reclaimed}, {"classes", nlohmann::json::array()}};
  if (!view.unmet_reclaim.empty()) out["unmet_reclaim"] = view.unmet_reclaim;
  if (!view.process_classes.empty()) out["process_classes"] = view.process_classes;
  if (view.bound.limit > 0) {
    out["process_bound"] = {
        {"limit", view.bound.limit}, {"origin", view.bound.origin}, {"remedy", view.bound.remedy}};
  }
  for (const NodeClassStatus& c : view.classes) {
    out["classes"].push_back({{"name", c.name},
                              {"granted_pes", c.granted_pes},
                              {"running", c.running},
                              {"removable", c.removable},
                              {"cost", c.cost}});
  }
}

void from_json(const nlohmann::json& in, ResourceView& view) {
  view.reclaimed = in.at("reclaimed").get<int>();
  view.unmet_reclaim = in.value("unmet_reclaim", std::string());
  view.process_classes = in.value("process_classes", std::vector<std::string>());
  view.bound = {};
  if (in.contains("process_bound")) {
    const nlohmann::json& bound = in["process_bound"];
    view.bound = {bound.at("limit").get<int>(), bound.at("origin").get<std::string>(),
                  bound.at("remedy").get<std::string>()};
  }
  view.classes.clear();
  for (const nlohmann::json& c : in.at("classes")) {
    view.classes.push_back({c.at("name").get<std::string>(), c.at("granted_pes").get<int>(),
                            c.at("running").get<int>(), c.at("removable").get<int>(),
                            c.at("cost").get<double>()});
  }
}

}  // namespace flexmpi
