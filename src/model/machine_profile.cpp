// Loading, validating and writing the machine profile (machine_profile.hpp).
#include "model/machine_profile.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <utility>

#include "flexmpi/error.hpp"
#include "util/json_keys.hpp"
#include "util/number_range.hpp"
#include "util/text_file.hpp"

namespace flexmpi {

namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "flexmpi-machine-profile";
constexpr int kVersion = 2;

// What each number may physically be. Far wider than any machine measured,
// narrow enough that a typo or garbage (latency 1e308, 10^12 processes)
// is refused at start-up instead of making a prediction infinite mid-run.
constexpr NumberRange kLatency{0.0, 1.0};            // seconds per message
constexpr NumberRange kSecondsPerByte{0.0, 1e-3};    // slower than 1 kB/s is no link
constexpr NumberRange kMessageBytes{0.0, 1e15};      // band bounds
constexpr NumberRange kPointBytes{0.0, 1e15, true};  // > 0
constexpr NumberRange kScale{0.0, 1e6};              // measured / modelled
constexpr NumberRange kProcessSeconds{0.0, 3600.0};  // one spawn, one remove, one move
constexpr NumberRange kProcesses{1, 1 << 20, false, true};
constexpr NumberRange kCollectiveProcesses{2, 1 << 20, false, true};

// Validation of one document: every message names the source and the key path.
class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(Errc::bad_config,
                "machine profile " + std::string(source_) + ": key '" + key + "': " + what);
  }

  const json& member(const json& object, const std::string& parent, const char* name) const {
    const std::string key = parent.empty() ? name : parent + "." + name;
    if (!object.is_object()) fail(parent.empty() ? "(document)" : parent, "expected an object");
    const auto it = object.find(name);
    if (it == object.end()) fail(key, "missing");
    return *it;
  }

  const json& object(const json& parent, const std::string& path, const char* name) const {
    const json& value = member(parent, path, name);
    if (!value.is_object()) fail(join(path, name), "expected an object");
    return value;
  }

  double number(const json& parent, const std::string& path, const char* name,
                const NumberRange& range) const {
    const json& value = member(parent, path, name);
    if (!value.is_number() || !range.contains(value.get<double>())) {
      fail(join(path, name), range.expected(value.dump()));
    }
    return value.get<double>();
  }

  std::vector<PerProcessCost> costs(const json& parent, const std::string& path,
                                    const char* name) const {
    const std::string key = join(path, name);
    const json& value = member(parent, path, name);
    if (!value.is_array() || value.empty()) {
      fail(key, "expected a non-empty array of {\"processes\", \"seconds_per_process\"}");
    }
    std::vector<PerProcessCost> points;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const std::string item = key + "[" + std::to_string(i) + "]";
      const double processes = number(value[i], item, "processes", kProcesses);
      points.push_back({static_cast<int>(processes),
                        number(value[i], item, "seconds_per_process", kProcessSeconds)});
    }
    std::sort(points.begin(), points.end(),
              [](const auto& a, const auto& b) { return a.processes < b.processes; });
    return points;
  }

  LinkParameters link(const json& parent, const std::string& path, const char* name) const {
    const json& value = object(parent, path, name);
    const std::string key = join(path, name);
    LinkParameters link{
        number(value, key, "alpha", kLatency), number(value, key, "beta", kSecondsPerByte), {}};
    const json& bands = array(value, key, "bands");
    for (std::size_t i = 0; i < bands.size(); ++i) {
      const std::string item = key + ".bands[" + std::to_string(i) + "]";
      const LinkBand band{number(bands[i], item, "up_to", kMessageBytes),
                          number(bands[i], item, "alpha", kLatency),
                          number(bands[i], item, "beta", kSecondsPerByte)};
      if (i > 0 && i + 1 < bands.size() && !(band.up_to > link.bands.back().up_to)) {
        fail(item + ".up_to", "expected more than the previous band's up_to");
      }
      link.bands.push_back(band);
    }
    return link;
  }

  const json& array(const json& parent, const std::string& path, const char* name) const {
    const json& value = member(parent, path, name);
    if (!value.is_array() || value.empty()) fail(join(path, name), "expected a non-empty array");
    return value;
  }

  CollectiveFit fit(const json& value, const std::string& key) const {
    const double processes = number(value, key, "processes", kCollectiveProcesses);
    CollectiveFit fit{static_cast<int>(processes), {}};
    const json& points = array(value, key, "points");
    for (std::size_t i = 0; i < points.size(); ++i) {
      const std::string item = key + ".points[" + std::to_string(i) + "]";
      fit.points.push_back({number(points[i], item, "bytes", kPointBytes),
                            number(points[i], item, "scale", kScale)});
      if (i > 0 && fit.points[i].bytes <= fit.points[i - 1].bytes) {
        fail(item + ".bytes", "expected more than the previous point's bytes");
      }
    }
    return fit;
  }

  // "collectives": per routine, the fits by increasing communicator size.
  CollectiveFits collectives(const json& value) const {
    if (!value.is_object()) fail("collectives", "expected an object");
    CollectiveFits fits;
    for (const auto& [name, list] : value.items()) {
      const std::string key = "collectives." + name;
      Routine routine{};
      try {
        routine = routine_from_name(name);
      } catch (const Error& error) {
        fail(key, error.what());
      }
      if (!list.is_array() || list.empty()) {
        fail(key, "expected a non-empty array of {\"processes\", \"points\"}");
      }
      std::vector<CollectiveFit>& out = fits[routine];
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string item = key + "[" + std::to_string(i) + "]";
        out.push_back(fit(list[i], item));
        if (i > 0 && out[i].processes <= out[i - 1].processes) {
          fail(item + ".processes", "expected more than the previous fit's processes");
        }
      }
    }
    return fits;
  }

  static std::string join(const std::string& path, const char* name) {
    return path.empty() ? std::string(name) : path + "." + name;
  }

 private:
  std::string_view source_;
};

json link_json(const LinkParameters& link) {
  json bands = json::array();
  const std::vector<LinkBand> one = {{0.0, link.alpha, link.beta}};  // no bands: the pair
  for (const LinkBand& band : link.bands.empty() ? one : link.bands) {
    bands.push_back({{"up_to", band.up_to}, {"alpha", band.alpha}, {"beta", band.beta}});
  }
  return {{"alpha", link.alpha}, {"beta", link.beta}, {"bands", bands}};
}

json fit_json(const CollectiveFit& fit) {
  json points = json::array();
  for (const ScalePoint& point : fit.points) {
    points.push_back({{"bytes", point.bytes}, {"scale", point.scale}});
  }
  return {{"processes", fit.processes}, {"points", points}};
}

json costs_json(const std::vector<PerProcessCost>& points) {
  json array = json::array();
  for (const PerProcessCost& point : points) {
    array.push_back(
        {{"processes", point.processes}, {"seconds_per_process", point.seconds_per_process}});
  }
  return array;
}

}  // namespace

Hockney MachineProfile::network(bool across_nodes) const {
  const LinkParameters& link = across_nodes ? inter_node : intra_node;
  return {link.alpha, link.beta, gamma};
}

PiecewiseLink MachineProfile::link(bool across_nodes) const {
  const LinkParameters& link = across_nodes ? inter_node : intra_node;
  if (link.bands.empty()) return Hockney{link.alpha, link.beta, gamma};
  std::vector<LinkBand> bands = link.bands;
  bands.back().up_to = std::numeric_limits<double>::infinity();  // the last takes any size
  return {std::move(bands), gamma};
}

CollectiveFits MachineProfile::fits_for(MpiLibrary running) const {
  if (library.empty() || detect_mpi_library(library) != running) return {};
  return collectives;
}

MachineProfile MachineProfile::defaults() {
  // Measured with `flexmpi-calibrate` on the 2-vCPU development VM (Debian 12,
  // Open MPI 4.1.4, two ranks on one node through shared memory),
  // rounded: alpha 0.45-0.62 us, beta 0.16-0.52 ns/B between runs (the VM is
  // shared), gamma 0.026-0.036 ns/B, spawn 0.27 s and remove 0.5-1.2 ms per
  // process (also bench/spawn_cost), redistribution 0.066 ms + 0.18-0.34 ns/B.
  // Bands (three calibrations): eager copies up to ~3 KiB, cache-resident up
  // to ~360 KiB (~14 GB/s), then L3 and memory (0.13-0.49 ns/B between runs).
  // No per-collective fits: they belong to one library.
  MachineProfile profile;
  profile.source = "defaults";
  profile.intra_node = {
      5e-7,
      3e-10,
      {{2896, 5e-7, 5e-11}, {370728, 2.5e-6, 7e-11}, {1482910, 0.0, 9e-11}, {0, 0.0, 3e-10}}};
  profile.inter_node = profile.intra_node;
  profile.inter_node_measured = false;
  profile.gamma = 3e-11;
  profile.spawn = {{1, 0.27}};
  profile.remove = {{1, 0.001}};
  profile.redistribution_latency = 7e-5;
  profile.redistribution_seconds_per_byte = 3e-10;
  return profile;
}

json MachineProfile::to_json() const {
  json fits = json::object();
  for (const auto& [routine, fit] : collectives) {
    json list = json::array();
    for (const CollectiveFit& one : fit) list.push_back(fit_json(one));
    fits[std::string(routine_name(routine))] = list;
  }
  return {
      {"format", kFormat},
      {"version", kVersion},
      {"library", library},
      {"network",
       {{"intra_node", link_json(intra_node)},
        {"inter_node", link_json(inter_node)},
        {"inter_node_measured", inter_node_measured},
        {"gamma", gamma}}},
      {"collectives", fits},
      {"process", {{"spawn", costs_json(spawn)}, {"remove", costs_json(remove)}}},
      {"redistribution",
       {{"latency", redistribution_latency},
        {"seconds_per_byte", redistribution_seconds_per_byte}}},
  };
}

MachineProfile parse_machine_profile(const json& document, std::string_view source) {
  const Reader r(source);
  if (!document.is_object()) r.fail("(document)", "expected a JSON object");
  const json& format = r.member(document, "", "format");
  if (format != kFormat) r.fail("format", "expected \"" + std::string(kFormat) + "\"");
  const json& version = r.member(document, "", "version");
  if (version == 1) {
    r.fail("version",
           "version 1 (one alpha/beta per link) is no longer read: run "
           "flexmpi-calibrate again to write version 2 (message-size bands)");
  }
  if (version != kVersion) r.fail("version", "expected " + std::to_string(kVersion));

  MachineProfile profile;
  profile.source = std::string(source);
  if (const auto it = document.find("library"); it != document.end()) {
    if (!it->is_string()) r.fail("library", "expected a string");
    profile.library = it->get<std::string>();
  }
  const json& network = r.object(document, "", "network");
  profile.intra_node = r.link(network, "network", "intra_node");
  profile.inter_node = r.link(network, "network", "inter_node");
  if (const auto it = network.find("inter_node_measured"); it != network.end()) {
    if (!it->is_boolean()) r.fail("network.inter_node_measured", "expected true or false");
    profile.inter_node_measured = it->get<bool>();
  }
  profile.gamma = r.number(network, "network", "gamma", kSecondsPerByte);

  if (const auto it = document.find("collectives"); it != document.end()) {
    profile.collectives = r.collectives(*it);
  }
  const json& process = r.object(document, "", "process");
  profile.spawn = r.costs(process, "process", "spawn");
  profile.remove = r.costs(process, "process", "remove");
  const json& redistribution = r.object(document, "", "redistribution");
  profile.redistribution_latency =
      r.number(redistribution, "redistribution", "latency", kProcessSeconds);
  profile.redistribution_seconds_per_byte =
      r.number(redistribution, "redistribution", "seconds_per_byte", kSecondsPerByte);
  return profile;
}

MachineProfile load_machine_profile(const std::string& path) {
  const std::string text =
      read_text_file(path, "machine profile (FLEXMPI_MACHINE_PROFILE)", Errc::bad_config);
  json document;
  try {
    document = parse_json_with_unique_keys(text);
  } catch (const json::exception& error) {
    throw Error(Errc::bad_config, "machine profile " + path + ": not valid JSON: " + error.what());
  } catch (const DuplicateJsonKey& duplicate) {
    Reader(path).fail(duplicate.key, std::string(kDuplicateJsonKeyWhat));
  }
  return parse_machine_profile(document, path);
}

void save_machine_profile(const MachineProfile& profile, const std::string& path) {
  std::ofstream out(path);
  if (out) out << profile.to_json().dump(2) << "\n";
  if (!out) throw Error(Errc::bad_config, "machine profile " + path + ": cannot write the file");
}

MachineProfile machine_profile_or_defaults(const std::string& path) {
  return path.empty() ? MachineProfile::defaults() : load_machine_profile(path);
}

}  // namespace flexmpi
