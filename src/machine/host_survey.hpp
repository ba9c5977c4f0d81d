// What flexmpi-drum-config finds out about one host, the role of the thesis's
// "drumhead" configuration tool (ch. 4, A.1): its cores, its network
// interfaces with their speeds (/sys/class/net), which of its statistics the
// monitors can read (3.1.1: cpuMemory needs /proc/stat, commInterface
// /proc/net/dev) and its capability rating; and the flat XML machine model
// (Fig. 3.5) of the job's hosts. Pure functions over file texts and
// directories, so tests feed recorded copies.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flexmpi::machine {

/// One network interface of a host.
struct NetworkInterface {
  std::string name;
  double speed_mbits = 0;    ///< C_i in Mbit/s; 0 when the kernel does not know it
  bool monitorable = false;  ///< /proc/net/dev counts its octets (commInterface)

  friend bool operator==(const NetworkInterface&, const NetworkInterface&) = default;
};

/// The interfaces of a /sys/class/net directory (or a recorded copy), sorted
/// by name, each with the speed of its `speed` file: -1 (virtual links), a
/// file that cannot be read (a link that is down) or none give 0, unknown.
/// Error(bad_config) if the directory cannot be listed.
std::vector<NetworkInterface> read_network_interfaces(const std::string& sys_class_net);

/// Marks monitorable the interfaces whose counters the text of /proc/net/dev
/// lists; none if the text is empty or malformed.
void mark_monitorable(std::vector<NetworkInterface>& interfaces, std::string_view net_dev);

/// true when the text of /proc/stat has the per-CPU lines the cpuMemory
/// monitor reads (i_t, 3.1.2.1).
bool cpu_statistics_readable(std::string_view proc_stat);

/// One host of the machine model file.
struct HostSurvey {
  std::string host;          ///< MPI_Get_processor_name: what DRUM matches ranks by
  int cpus = 1;              ///< k_n, the cores hwloc counts
  double mflops = 1.0;       ///< b_n, the capability benchmark (3.1.1)
  bool monitorable = false;  ///< CPU statistics and some interface counters readable
  std::vector<NetworkInterface> interfaces;

  friend bool operator==(const HostSurvey&, const HostSurvey&) = default;
};

/// One line of text for sending a survey between processes, and back.
/// decode_host_survey throws Error(invalid_argument) naming a malformed field.
std::string encode_host_survey(const HostSurvey& survey);
HostSurvey decode_host_survey(std::string_view line);

/// The flat machine model of the hosts, in the XML of Fig. 3.5 that
/// read_machine_xml reads: one NETWORK root (flat_model_specs) over one
/// COMPUTING node per host, in order, with its MFLOPS, IsMonitorable, and
/// the attributes CPUs="2", interfaces="eth0:1000;veth0:unknown;" (Mbit/s)
/// and monitorableInterfaces="eth0;" that the reader ignores. The root is
/// monitorable when every host is (its measures are its children's sums).
std::string flat_machine_xml(const std::vector<HostSurvey>& hosts);

}  // namespace flexmpi::machine
