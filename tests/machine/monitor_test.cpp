// DRUM monitors (thesis 3.1.1, A.1): the kernel statistics readers on recorded
// /proc snapshots, and the agent thread on the live system (samples at the
// monitoring period, sees a busy process, costs well under 0.5 % of a core).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "flexmpi/error.hpp"
#include "machine/link_shaping.hpp"
#include "machine/proc_readers.hpp"
#include "machine/resource_monitor.hpp"
#include "util/text_file.hpp"

namespace flexmpi::machine {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;

std::string snapshot(const std::string& name) {
  return read_text_file(std::string(DRUM_FIXTURES) + "/proc/" + name, "fixture", Errc::internal);
}

TEST(ProcReaders, PerCpuIdleFractionsFromTwoStatSnapshots) {
  const auto before = parse_proc_stat(snapshot("stat_before"));
  const auto after = parse_proc_stat(snapshot("stat_after"));
  ASSERT_EQ(before.size(), 2u);  // the aggregate "cpu" line is not a CPU
  EXPECT_EQ(before[0].idle, 156439u + 939u);
  EXPECT_DOUBLE_EQ(idle_fraction(before[0], after[0]), 0.30);  // idle + iowait over 100 ticks
  EXPECT_DOUBLE_EQ(idle_fraction(before[1], after[1]), 0.80);
  EXPECT_DOUBLE_EQ(idle_fraction(before[1], before[1]), 0.0);  // no tick elapsed
}

TEST(ProcReaders, ProcessTicksSurviveParenthesesInTheCommandName) {
  EXPECT_EQ(parse_process_cpu_ticks(snapshot("self_stat")), 1234u + 66u);
  EXPECT_THROW(parse_process_cpu_ticks("2821 (cut short) R 1 2"), Error);
}

TEST(ProcReaders, LoadAveragesAndMemory) {
  const LoadAverages load = parse_loadavg(snapshot("loadavg"));
  EXPECT_DOUBLE_EQ(load.one_minute, 2.74);
  EXPECT_DOUBLE_EQ(load.five_minutes, 2.11);
  EXPECT_DOUBLE_EQ(load.fifteen_minutes, 1.94);
  const MemoryInfo memory = parse_meminfo(snapshot("meminfo"));
  EXPECT_EQ(memory.total_kb, 24683620u);
  EXPECT_EQ(memory.available_kb, 23767840u);
  EXPECT_EQ(parse_meminfo("MemTotal: 100 kB\nMemFree: 40 kB\n").available_kb, 40u);  // old kernels
}

TEST(ProcReaders, NetDevCountersIncludingNumbersGluedToTheColon) {
  const auto interfaces = parse_net_dev(snapshot("net_dev_before"));
  ASSERT_EQ(interfaces.size(), 4u);
  EXPECT_EQ(interfaces[2].name, "eth0");
  EXPECT_EQ(interfaces[2].in_octets, 22113353u);
  EXPECT_EQ(interfaces[2].out_octets, 57979u);
  EXPECT_EQ(interfaces[3].in_octets, 1000000000u);  // "eth1:1000000000"
  EXPECT_THROW(parse_net_dev("eth0: 1 2 3\n"), Error);
}

TEST(ProcReaders, InterfaceRatesLeaveOutLoopback) {
  const auto activity = interface_activity(parse_net_dev(snapshot("net_dev_before")),
                                           parse_net_dev(snapshot("net_dev_after")), 2.0);
  EXPECT_THAT(activity, ElementsAre(Field(&InterfaceActivity::name, "ifb0"),
                                    Field(&InterfaceActivity::name, "eth0"),
                                    Field(&InterfaceActivity::name, "eth1")));
  EXPECT_DOUBLE_EQ(activity[0].caf(), 0.0);     // idle: kept for the bandwidth power
  EXPECT_DOUBLE_EQ(activity[1].in_rate, 1000);  // lambda: 2000 octets in 2 s
  EXPECT_DOUBLE_EQ(activity[1].out_rate, 500);  // mu
  EXPECT_DOUBLE_EQ(activity[1].caf(), 1500);
  EXPECT_DOUBLE_EQ(activity[2].caf(), 2.5e6);
}

TEST(ProcReaders, InterfaceSpeed) {
  EXPECT_DOUBLE_EQ(parse_interface_speed("1000\n"), 1000.0);
  EXPECT_DOUBLE_EQ(parse_interface_speed("-1\n"), 0.0);  // virtual interface
  EXPECT_DOUBLE_EQ(parse_interface_speed(""), 0.0);      // "Invalid argument" on read
}

TEST(LinkShaping, TheCapacityIsTheSmallerKnownRate) {
  EXPECT_DOUBLE_EQ(link_capacity(1.25e9, 1.25e6), 1.25e6);  // a veth shaped to 10 Mbit/s
  EXPECT_DOUBLE_EQ(link_capacity(1.25e7, 1.25e9), 1.25e7);  // shaped above its speed
  EXPECT_DOUBLE_EQ(link_capacity(1.25e9, std::nullopt), 1.25e9);
  EXPECT_DOUBLE_EQ(link_capacity(0.0, 1.25e6), 1.25e6);  // speed unknown
  EXPECT_DOUBLE_EQ(link_capacity(0.0, std::nullopt), 0.0);
}

TEST(LinkShaping, NoRateWithoutATokenBucket) {
  EXPECT_FALSE(root_shaping_rate("no-such-interface").has_value());
  EXPECT_FALSE(root_shaping_rate("lo").has_value());
}

// The netlink read on a real shaped link: a veth pair with a root tbf of
// 10 Mbit/s on one end (the speed file says 10000 Mbit/s), made in a network
// namespace of a child process so that the machine's own interfaces are not touched.
TEST(LinkShaping, ReadsTheRateOfATokenBucketFilter) {
  if (geteuid() != 0) GTEST_SKIP() << "a network namespace needs root";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (unshare(CLONE_NEWNET) != 0) _exit(77);
    if (std::system("ip link add fxveth0 type veth peer name fxveth1 && ip link set fxveth0 up && "
                    "ip link set fxveth1 up && "
                    "tc qdisc add dev fxveth0 root tbf rate 10mbit burst 32kbit latency 50ms") !=
        0) {
      _exit(77);
    }
    const std::optional<double> rate = root_shaping_rate("fxveth0");
    const bool right =
        rate.has_value() && *rate == 1.25e6 && interface_capacity("fxveth0") == 1.25e6;
    _exit(right ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "cannot make a shaped veth pair here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the 10 Mbit/s tbf was not read as 1.25e6 octets/s";
}

TEST(ResourceMonitor, SamplesAtThePeriodAndSeesABusyProcess) {
  ResourceMonitor monitor({.period = std::chrono::milliseconds(50), .monitor_memory = true});
  monitor.start();
  EXPECT_THROW(monitor.start(), Error);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  volatile double sink = 0;
  while (std::chrono::steady_clock::now() < until) sink = sink + 1.0;  // busy: u close to 1
  const MonitorReport report = monitor.stop();
  EXPECT_FALSE(monitor.running());
  EXPECT_GE(report.seconds, 0.3);
  EXPECT_GE(report.samples, 4);  // one at start, then one per 50 ms
  EXPECT_GT(report.process_utilization, 0.3);
  EXPECT_EQ(report.cpu_idle.size(), std::thread::hardware_concurrency());
  for (double idle : report.cpu_idle) {
    EXPECT_GE(idle, 0.0);
    EXPECT_LE(idle, 1.0);
  }
  EXPECT_GT(report.memory.total_kb, 0u);
  EXPECT_GT(report.load.one_minute + report.load.five_minutes, 0.0);
  // Table 5.3: monitoring cost 0.13-0.22 % at the default 1 s period. The
  // agent's CPU time per sample (about 0.2-0.5 ms here, thread start included)
  // must stay under 0.5 % of that period.
  const double seconds_per_sample = report.agent_cpu_seconds / report.samples;
  RecordProperty("agent_cpu_microseconds_per_sample", static_cast<int>(seconds_per_sample * 1e6));
  EXPECT_LT(seconds_per_sample, 0.005 * 1.0);
  EXPECT_THROW(monitor.stop(), Error);
}

TEST(ResourceMonitor, OnlyTheElectedProcessProbesTheNode) {
  ResourceMonitor monitor({.period = std::chrono::milliseconds(1000), .probe_node = false});
  monitor.start();
  const MonitorReport report = monitor.stop();  // stops at once, not after a full period
  EXPECT_LT(report.seconds, 0.5);
  EXPECT_TRUE(report.cpu_idle.empty());
  EXPECT_TRUE(report.interfaces.empty());
  EXPECT_EQ(report.memory.total_kb, 0u);
}

}  // namespace
}  // namespace flexmpi::machine
