#include "machine/proc_readers.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "flexmpi/error.hpp"
#include "machine/link_shaping.hpp"
#include "util/split.hpp"

namespace flexmpi::machine {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) { return split(text, '\n'); }

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words = split(line, ' ');
  std::erase_if(words, [](std::string_view word) { return word.empty(); });
  return words;
}

template <typename Number>
Number number(std::string_view word, std::string_view what) {
  Number value{};
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc() || end != word.data() + word.size()) {
    throw Error(Errc::internal,
                std::string(what) + ": \"" + std::string(word) + "\" is not a number");
  }
  return value;
}

std::string_view first_line(std::string_view text) { return text.substr(0, text.find('\n')); }

bool is_per_cpu_line(std::string_view line) {
  return line.starts_with("cpu") && line.size() > 3 && line[3] >= '0' && line[3] <= '9';
}

}  // namespace

std::string read_kernel_file(const std::string& path) {
  std::string text;
  const int descriptor = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) return text;
  char buffer[4096];
  ssize_t length = 0;
  while ((length = read(descriptor, buffer, sizeof buffer)) > 0) text.append(buffer, length);
  close(descriptor);
  return text;
}

std::vector<CpuTimes> parse_proc_stat(std::string_view text) {
  std::vector<CpuTimes> cpus;
  for (const std::string_view line : lines_of(text)) {
    if (!is_per_cpu_line(line)) continue;
    const auto words = words_of(line);
    if (words.size() < 5) {
      throw Error(Errc::internal, "/proc/stat: line \"" + std::string(line) + "\" is too short");
    }
    // user nice system idle iowait irq softirq steal; guest time is already in user.
    CpuTimes times;
    for (std::size_t column = 1; column < std::min<std::size_t>(words.size(), 9); ++column) {
      const auto ticks = number<std::uint64_t>(words[column], "/proc/stat");
      times.total += ticks;
      if (column == 4 || column == 5) times.idle += ticks;
    }
    cpus.push_back(times);
  }
  return cpus;
}

double idle_fraction(const CpuTimes& before, const CpuTimes& after) {
  if (after.total <= before.total) return 0.0;
  return static_cast<double>(after.idle - before.idle) /
         static_cast<double>(after.total - before.total);
}

std::uint64_t parse_process_cpu_ticks(std::string_view text) {
  const auto name_end = text.rfind(')');
  if (name_end == std::string_view::npos) {
    throw Error(Errc::internal, "/proc/self/stat: no ')' closing the command name");
  }
  // After ')': field 3 (state) is word 0, so utime (14) and stime (15) are words 11 and 12.
  const auto words = words_of(text.substr(name_end + 1));
  if (words.size() < 13) throw Error(Errc::internal, "/proc/self/stat: fewer than 15 fields");
  return number<std::uint64_t>(words[11], "/proc/self/stat utime") +
         number<std::uint64_t>(words[12], "/proc/self/stat stime");
}

LoadAverages parse_loadavg(std::string_view text) {
  const auto words = words_of(first_line(text));
  if (words.size() < 3) throw Error(Errc::internal, "/proc/loadavg: fewer than 3 numbers");
  return {number<double>(words[0], "/proc/loadavg"), number<double>(words[1], "/proc/loadavg"),
          number<double>(words[2], "/proc/loadavg")};
}

MemoryInfo parse_meminfo(std::string_view text) {
  MemoryInfo memory;
  std::uint64_t free_kb = 0;
  bool has_available = false;
  for (const std::string_view line : lines_of(text)) {
    const auto words = words_of(line);
    if (words.size() < 2) continue;
    if (words[0] == "MemTotal:") memory.total_kb = number<std::uint64_t>(words[1], "/proc/meminfo");
    if (words[0] == "MemFree:") free_kb = number<std::uint64_t>(words[1], "/proc/meminfo");
    if (words[0] == "MemAvailable:") {
      memory.available_kb = number<std::uint64_t>(words[1], "/proc/meminfo");
      has_available = true;
    }
  }
  if (!has_available) memory.available_kb = free_kb;
  return memory;
}

std::vector<InterfaceCounters> parse_net_dev(std::string_view text) {
  std::vector<InterfaceCounters> interfaces;
  for (const std::string_view line : lines_of(text)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // the two header lines
    const auto name = words_of(line.substr(0, colon));
    const auto counters = words_of(line.substr(colon + 1));
    if (name.size() != 1 || counters.size() < 9) {
      throw Error(Errc::internal, "/proc/net/dev: malformed line \"" + std::string(line) + "\"");
    }
    interfaces.push_back({std::string(name[0]), number<std::uint64_t>(counters[0], "/proc/net/dev"),
                          number<std::uint64_t>(counters[8], "/proc/net/dev")});
  }
  return interfaces;
}

std::vector<InterfaceActivity> interface_activity(const std::vector<InterfaceCounters>& before,
                                                  const std::vector<InterfaceCounters>& after,
                                                  double seconds) {
  std::vector<InterfaceActivity> active;
  if (seconds <= 0) return active;
  for (const InterfaceCounters& end : after) {
    const auto start = std::ranges::find(before, end.name, &InterfaceCounters::name);
    if (end.name == "lo" || start == before.end()) continue;
    // Counters only grow; a reset interface (end below start) carried no measurable traffic.
    const auto delta = [](std::uint64_t from, std::uint64_t to) {
      return to >= from ? static_cast<double>(to - from) : 0.0;
    };
    active.push_back({.name = end.name,
                      .in_rate = delta(start->in_octets, end.in_octets) / seconds,
                      .out_rate = delta(start->out_octets, end.out_octets) / seconds,
                      .capacity = 0});
  }
  return active;
}

double parse_interface_speed(std::string_view text) {
  const auto words = words_of(first_line(text));
  if (words.empty()) return 0.0;
  return std::max(0.0, number<double>(words[0], "/sys/class/net/<interface>/speed"));
}

double interface_capacity(const std::string& name) {
  const double mbits = parse_interface_speed(read_kernel_file("/sys/class/net/" + name + "/speed"));
  return link_capacity(mbits * 1e6 / 8.0, root_shaping_rate(name));  // Mbit/s -> octets/s
}

}  // namespace flexmpi::machine
