#include "machine/drum_parameters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <ranges>
#include <sstream>

#include "flexmpi/error.hpp"
#include "util/split.hpp"
#include "util/text_file.hpp"

namespace flexmpi::machine {
namespace {

std::string upper(std::string_view text) {
  std::string result(text);
  std::ranges::transform(result, result.begin(), [](unsigned char c) { return std::toupper(c); });
  return result;
}

struct BadValue {
  std::string expected;
};

int parse_int(std::string_view value, int low, int high) {
  const std::string word = upper(value);
  const std::string expected = "an integer from " + std::to_string(low) + " to " +
                               std::to_string(high) + (high == 1 ? " (or TRUE/FALSE)" : "");
  int number = word == "TRUE" ? 1 : 0;
  if (word != "TRUE" && word != "FALSE") {
    const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), number);
    if (error != std::errc() || end != word.data() + word.size()) throw BadValue{expected};
  }
  if (number < low || number > high) throw BadValue{expected};
  return number;
}

double parse_fraction(std::string_view value) {
  double number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() || !(number >= 0 && number <= 1)) {
    throw BadValue{"a number from 0 to 1"};
  }
  return number;
}

/// Index of `value` among `choices` (case-insensitive).
int parse_choice(std::string_view value, const std::vector<std::string_view>& choices) {
  const auto found = std::ranges::find(choices, upper(value));
  if (found != choices.end()) return static_cast<int>(found - choices.begin());
  std::string expected = "one of";
  for (std::string_view choice : choices) expected += fmt::format(" {}", choice);
  throw BadValue{expected};
}

struct ParameterDescriptor {
  std::string_view name;
  std::string_view type;
  std::string_view default_value;
  std::string_view help;
  /// Sets the value; returns a warning or "". Throws BadValue.
  std::function<std::string(DrumParameters&, std::string_view)> set;
};

std::string set_flag(bool& flag, std::string_view value) {
  flag = parse_int(value, 0, 1) == 1;
  return "";
}

const std::vector<ParameterDescriptor>& descriptors() {
  static const std::vector<ParameterDescriptor> all = {
      {"MONITORING_FREQUENCY", "INT", "1", "seconds between two monitor samples",
       [](DrumParameters& p, std::string_view v) {
         p.monitoring_period = std::chrono::seconds(parse_int(v, 1, 86400));
         return std::string();
       }},
      {"USE_DYNAMIC_MONITORING", "INT", "1", "run the monitoring agents (0: benchmarks only)",
       [](DrumParameters& p, std::string_view v) { return set_flag(p.use_dynamic_monitoring, v); }},
      {"USE_SNMP", "INT", "0", "probe interfaces through SNMP (not built: /proc/net/dev is read)",
       [](DrumParameters& p, std::string_view v) {
         set_flag(p.use_snmp, v);
         return std::string(p.use_snmp ? "USE_SNMP=1: SNMP support is not built in; interface "
                                         "traffic is read from /proc/net/dev"
                                       : "");
       }},
      {"USE_KSTAT", "INT", "0", "Solaris kernel statistics (Linux: /proc is read)",
       [](DrumParameters& p, std::string_view v) {
         set_flag(p.use_kstat, v);
         return std::string(p.use_kstat ? "USE_KSTAT=1: kstat exists only on Solaris; /proc is read"
                                        : "");
       }},
      {"MONITOR_MEMORY", "INT", "0", "also sample total and available memory",
       [](DrumParameters& p, std::string_view v) { return set_flag(p.monitor_memory, v); }},
      {"USE_FLAT_MODEL", "INT", "1", "one switch over the job's hosts instead of the XML file",
       [](DrumParameters& p, std::string_view v) { return set_flag(p.use_flat_model, v); }},
      {"USE_NETWORK_POWERS", "INT", "1",
       "communication weight: 0 none, 1 COMMUNICATION_WEIGHT, 2 1-1/(1+CAF) per node",
       [](DrumParameters& p, std::string_view v) {
         p.communication_weight.mode = static_cast<CommunicationWeightMode>(parse_int(v, 0, 2));
         return std::string();
       }},
      {"COMMUNICATION_WEIGHT", "FLOAT", "0", "w_comm when USE_NETWORK_POWERS=1, from 0 to 1",
       [](DrumParameters& p, std::string_view v) {
         p.communication_weight.fixed = parse_fraction(v);
         return std::string();
       }},
      {"COMMUNICATION_POWER", "STRING", "AVAILABLE_BANDWIDTH",
       "LOG_SPEED_OVER_CAF, INVERSE_MEAN_CAF or AVAILABLE_BANDWIDTH (thesis 3.1.2.2)",
       [](DrumParameters& p, std::string_view v) {
         p.communication_power = static_cast<CommunicationPowerForm>(
             parse_choice(v, {"LOG_SPEED_OVER_CAF", "INVERSE_MEAN_CAF", "AVAILABLE_BANDWIDTH"}));
         return std::string();
       }},
      {"PROCESSING_POWER", "STRING", "SMP",
       "SMP: b(u+i) per process; EARLY: w_dyn(u+i) + (1-w_dyn) b (thesis 3.1.2.1)",
       [](DrumParameters& p, std::string_view v) {
         p.early_processing_power = parse_choice(v, {"SMP", "EARLY"}) == 1;
         return std::string();
       }},
      {"DEBUG_LEVEL", "INT", "from DRUM_createMachineModel", "0 silent .. 5 everything",
       [](DrumParameters& p, std::string_view v) {
         p.debug_level = parse_int(v, 0, 5);
         return std::string();
       }},
      {"XML_TOPOLOGY_FILE", "STRING", "drum.xml", "machine description read when USE_FLAT_MODEL=0",
       [](DrumParameters& p, std::string_view v) {
         if (v.empty()) throw BadValue{"a file name"};
         p.xml_topology_file = std::string(v);
         return std::string();
       }},
  };
  return all;
}

/// The known parameters, one per line with type, default and meaning.
std::string parameter_list() {
  std::string list;
  for (const auto& d : descriptors()) {
    list += "\n  " + std::string(d.name) + " (" + std::string(d.type) + ", default " +
            std::string(d.default_value) + "): " + std::string(d.help);
  }
  return list;
}

}  // namespace

std::string set_parameter(DrumParameters& parameters, std::string_view name,
                          std::string_view value) {
  const auto found = std::ranges::find(descriptors(), upper(name), &ParameterDescriptor::name);
  if (found == descriptors().end()) {
    throw Error(Errc::invalid_argument, "unknown DRUM parameter '" + std::string(name) +
                                            "'; the parameters are:" + parameter_list());
  }
  DrumParameters changed = parameters;
  try {
    std::string warning = found->set(changed, value);
    parameters = changed;
    return warning;
  } catch (const BadValue& bad) {
    throw Error(Errc::invalid_argument, "DRUM parameter " + std::string(found->name) + ": '" +
                                            std::string(value) + "' is not " + bad.expected);
  }
}

std::vector<std::pair<std::string, std::string>> parse_parameter_file(std::string_view text,
                                                                      std::string_view source) {
  std::vector<std::pair<std::string, std::string>> pairs;
  int line_number = 0;
  for (const std::string_view line_text : split(text, '\n')) {
    ++line_number;
    std::string line(line_text);
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string name, value, extra;
    if (!(words >> name)) continue;
    if (!(words >> value) || (words >> extra)) {
      throw Error(Errc::invalid_argument, std::string(source) + ":" + std::to_string(line_number) +
                                              ": expected \"PARAM VALUE\", got \"" +
                                              printable(line) + "\"");
    }
    pairs.emplace_back(name, value);
  }
  return pairs;
}

}  // namespace flexmpi::machine
