// Readers of the Linux kernel statistics the DRUM monitors use (thesis 3.1.1,
// A.1: cpuMemory and commInterface objects). Pure functions over the text of
// one snapshot, so tests feed recorded files; ResourceMonitor reads the live ones.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flexmpi::machine {

/// The text of a kernel statistics file (/proc, /sys); empty if it cannot be
/// read. Plain open/read: the agent reads a few small files per sample and
/// should cost little.
std::string read_kernel_file(const std::string& path);

/// Cumulative time of one CPU, in clock ticks.
struct CpuTimes {
  std::uint64_t idle = 0;   ///< idle + iowait
  std::uint64_t total = 0;  ///< user + nice + system + idle + iowait + irq + softirq + steal
};

/// The per-CPU lines ("cpu0 ...", "cpu1 ...") of /proc/stat, in order; the
/// aggregate "cpu" line is skipped. Throws Error(internal) if a line is malformed.
std::vector<CpuTimes> parse_proc_stat(std::string_view text);

/// i_t of thesis 3.1.2.1: the fraction of the interval a CPU was idle, from
/// its times at both ends (0 if no tick elapsed).
double idle_fraction(const CpuTimes& before, const CpuTimes& after);

/// utime + stime (fields 14 and 15) of /proc/<pid>/stat, in clock ticks. The
/// command name (field 2) may hold spaces and parentheses: fields are counted
/// after its last ')'.
std::uint64_t parse_process_cpu_ticks(std::string_view text);

/// The 1-, 5- and 15-minute load averages (cpuLoadAverage of A.1).
struct LoadAverages {
  double one_minute = 0;
  double five_minutes = 0;
  double fifteen_minutes = 0;
};

/// The first three numbers of /proc/loadavg.
LoadAverages parse_loadavg(std::string_view text);

/// totalMemory / availableMemory of A.1, in kB.
struct MemoryInfo {
  std::uint64_t total_kb = 0;
  std::uint64_t available_kb = 0;
};

/// MemTotal and MemAvailable (MemFree on kernels without it) of /proc/meminfo.
MemoryInfo parse_meminfo(std::string_view text);

/// Cumulative octet counters of one network interface (in_octets/out_octets of A.1).
struct InterfaceCounters {
  std::string name;
  std::uint64_t in_octets = 0;
  std::uint64_t out_octets = 0;
};

/// Every interface of /proc/net/dev: receive bytes (first column after the
/// name) and transmit bytes (ninth).
std::vector<InterfaceCounters> parse_net_dev(std::string_view text);

/// Traffic on one interface over a monitoring period (thesis 3.1.1, 3.1.2.2).
struct InterfaceActivity {
  std::string name;
  double in_rate = 0;   ///< lambda: incoming octets per second
  double out_rate = 0;  ///< mu: outgoing octets per second
  /// C_i: maximum bandwidth in octets per second, 0 when the speed is unknown.
  double capacity = 0;
  /// Communication Activity Factor, CAF = lambda + mu.
  [[nodiscard]] double caf() const { return in_rate + out_rate; }
};

/// lambda and mu of each interface present at both ends of a period of
/// `seconds`; the software loop-back interface is left out (3.1.2.2). Idle
/// interfaces (CAF = 0) are kept: the CAF-based communication powers skip them,
/// as the thesis does, but for the available-bandwidth power an idle link is
/// all available bandwidth (powers.hpp).
std::vector<InterfaceActivity> interface_activity(const std::vector<InterfaceCounters>& before,
                                                  const std::vector<InterfaceCounters>& after,
                                                  double seconds);

/// The speed of an interface from /sys/class/net/<name>/speed, in Mbit/s;
/// 0 when the kernel does not know it (virtual interfaces report -1 or fail).
double parse_interface_speed(std::string_view text);

/// C_i of a live interface in octets per second, the unit of lambda and mu:
/// its speed (/sys/class/net/<name>/speed), or the rate `tc` shapes it to
/// when that is lower (link_shaping.hpp); 0 when neither is known.
double interface_capacity(const std::string& name);

}  // namespace flexmpi::machine
