#include "machine/host_survey.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>

#include "flexmpi/error.hpp"
#include "machine/machine_model.hpp"
#include "machine/machine_xml.hpp"
#include "machine/proc_readers.hpp"
#include "util/split.hpp"

namespace flexmpi::machine {
namespace {

constexpr std::string_view kUnknownSpeed = "unknown";

std::string number_text(double value) {
  std::array<char, 32> text{};
  const auto end = std::to_chars(text.data(), text.data() + text.size(), value).ptr;
  return {text.data(), end};
}

template <typename Number>
Number parse_number(std::string_view text, std::string_view field) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw Error(Errc::invalid_argument, "host survey: " + std::string(field) + " \"" +
                                            std::string(text) + "\" is not a number");
  }
  return value;
}

/// "eth0:1000;veth0:unknown;": each interface and its speed in Mbit/s.
std::string interface_speeds(const std::vector<NetworkInterface>& interfaces) {
  std::string text;
  for (const NetworkInterface& interface : interfaces) {
    const bool known = interface.speed_mbits > 0;
    text += interface.name + ":" +
            (known ? number_text(interface.speed_mbits) : std::string(kUnknownSpeed)) + ";";
  }
  return text;
}

/// "eth0;lo;": the interfaces the commInterface monitor can read.
std::string monitorable_names(const std::vector<NetworkInterface>& interfaces) {
  std::string text;
  for (const NetworkInterface& interface : interfaces) {
    if (interface.monitorable) text += interface.name + ";";
  }
  return text;
}

std::vector<NetworkInterface> parse_interfaces(std::string_view speeds,
                                               std::string_view monitorable) {
  std::vector<NetworkInterface> interfaces;
  const std::vector<std::string_view> names = split(monitorable, ';');
  for (const std::string_view item : split(speeds, ';')) {
    if (item.empty()) continue;
    const auto colon = item.rfind(':');
    if (colon == std::string_view::npos) {
      throw Error(Errc::invalid_argument,
                  "host survey: interface \"" + std::string(item) + "\": expected NAME:SPEED");
    }
    NetworkInterface& interface = interfaces.emplace_back();
    interface.name = item.substr(0, colon);
    const std::string_view speed = item.substr(colon + 1);
    if (speed != kUnknownSpeed) interface.speed_mbits = parse_number<double>(speed, "speed");
    interface.monitorable = std::ranges::find(names, interface.name) != names.end();
  }
  return interfaces;
}

ExtraAttributes hardware_attributes(const HostSurvey& survey) {
  return {{"CPUs", std::to_string(survey.cpus)},
          {"interfaces", interface_speeds(survey.interfaces)},
          {"monitorableInterfaces", monitorable_names(survey.interfaces)}};
}

}  // namespace

std::vector<NetworkInterface> read_network_interfaces(const std::string& sys_class_net) {
  std::error_code error;
  std::filesystem::directory_iterator entries(sys_class_net, error);
  if (error) {
    throw Error(Errc::bad_config, "cannot list the network interfaces in '" + sys_class_net +
                                      "': " + error.message());
  }
  std::vector<NetworkInterface> interfaces;
  for (const auto& entry : entries) {
    NetworkInterface& interface = interfaces.emplace_back();
    interface.name = entry.path().filename().string();
    interface.speed_mbits = parse_interface_speed(read_kernel_file(entry.path() / "speed"));
  }
  std::ranges::sort(interfaces, {}, &NetworkInterface::name);
  return interfaces;
}

void mark_monitorable(std::vector<NetworkInterface>& interfaces, std::string_view net_dev) {
  std::vector<InterfaceCounters> counted;
  try {
    counted = parse_net_dev(net_dev);
  } catch (const Error&) {
    // A malformed file: the monitor could not read it either, so nothing is monitorable.
  }
  for (NetworkInterface& interface : interfaces) {
    interface.monitorable =
        std::ranges::find(counted, interface.name, &InterfaceCounters::name) != counted.end();
  }
}

bool cpu_statistics_readable(std::string_view proc_stat) {
  try {
    return !parse_proc_stat(proc_stat).empty();
  } catch (const Error&) {
    return false;
  }
}

std::string encode_host_survey(const HostSurvey& survey) {
  return survey.host + '\t' + std::to_string(survey.cpus) + '\t' + number_text(survey.mflops) +
         '\t' + (survey.monitorable ? "1" : "0") + '\t' + interface_speeds(survey.interfaces) +
         '\t' + monitorable_names(survey.interfaces);
}

HostSurvey decode_host_survey(std::string_view line) {
  const std::vector<std::string_view> fields = split(line, '\t');
  if (fields.size() != 6) {
    throw Error(Errc::invalid_argument, "host survey \"" + std::string(line) + "\": " +
                                            std::to_string(fields.size()) + " fields, expected 6");
  }
  HostSurvey survey;
  survey.host = fields[0];
  survey.cpus = parse_number<int>(fields[1], "CPUs");
  survey.mflops = parse_number<double>(fields[2], "MFLOPS");
  survey.monitorable = fields[3] == "1";
  survey.interfaces = parse_interfaces(fields[4], fields[5]);
  return survey;
}

std::string flat_machine_xml(const std::vector<HostSurvey>& hosts) {
  std::vector<std::string> names;
  for (const HostSurvey& survey : hosts) names.push_back(survey.host);
  std::vector<NodeSpec> specs = flat_model_specs(names);
  if (specs.size() != hosts.size() + 1) {
    throw Error(Errc::invalid_argument,
                "flat machine model: a host is listed twice (one survey per host expected)");
  }
  std::vector<ExtraAttributes> extra(specs.size());
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    // flat_model_specs lists the distinct hosts first, in order, then the switch.
    specs[i].mflops = hosts[i].mflops;
    specs[i].monitorable = hosts[i].monitorable;
    extra[i] = hardware_attributes(hosts[i]);
  }
  specs.back().monitorable = std::ranges::all_of(hosts, &HostSurvey::monitorable);
  return write_machine_xml(specs, extra);
}

}  // namespace flexmpi::machine
