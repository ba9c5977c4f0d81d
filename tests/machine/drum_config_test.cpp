// The pure pieces of flexmpi-drum-config (the thesis's "drumhead" role, ch. 4,
// A.1): the capability benchmark's arithmetic (3.1.1), /sys/class/net on a
// recorded copy, monitorability from recorded /proc files, the survey line
// processes exchange, and the flat XML machine model (Fig. 3.5), read back
// by the existing reader.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flexmpi/error.hpp"
#include "machine/capability_benchmark.hpp"
#include "machine/host_survey.hpp"
#include "machine/machine_model.hpp"
#include "machine/machine_xml.hpp"
#include "util/text_file.hpp"

namespace flexmpi::machine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string fixture(const std::string& name) {
  return read_text_file(std::string(DRUM_FIXTURES) + "/" + name, "fixture", Errc::internal);
}

TEST(CapabilityBenchmark, LinpackOperationCount) {
  EXPECT_DOUBLE_EQ(linpack_operations(3), 2.0 / 3.0 * 27 + 2 * 9);
  EXPECT_DOUBLE_EQ(linpack_operations(1000), 2.0 / 3.0 * 1e9 + 2e6);
  EXPECT_THROW(linpack_operations(0), Error);
}

TEST(CapabilityBenchmark, MflopsFromTheMedianTimeAndTheEmulatedSpeed) {
  const double operations = linpack_operations(600);
  // The median (0.1 s) rules out the disturbed 5 s run.
  EXPECT_DOUBLE_EQ(capability_mflops(600, {0.1, 5.0, 0.09}), operations / 0.1 * 1e-6);
  EXPECT_DOUBLE_EQ(capability_mflops(600, {0.1}, 0.5), operations / 0.1 * 1e-6 * 0.5);
}

TEST(CapabilityBenchmark, RejectsWhatCannotBeRated) {
  EXPECT_THROW(capability_mflops(600, {}), Error);
  EXPECT_THROW(capability_mflops(600, {0.0}), Error);
  EXPECT_THROW(capability_mflops(600, {0.1}, 0.0), Error);
  try {
    capability_mflops(600, {0.1}, 1.5);
    FAIL() << "a relative speed above 1 was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("relative speed"));
  }
}

TEST(HostSurvey, InterfacesAndSpeedsFromARecordedSysClassNet) {
  // eth0: 1000; veth0: -1 (virtual); lo and wlan0: no speed file (down links).
  const auto interfaces = read_network_interfaces(std::string(DRUM_FIXTURES) + "/sys_class_net");
  ASSERT_EQ(interfaces.size(), 4u);
  EXPECT_EQ(interfaces[0], (NetworkInterface{"eth0", 1000, false}));
  EXPECT_EQ(interfaces[1], (NetworkInterface{"lo", 0, false}));
  EXPECT_EQ(interfaces[2], (NetworkInterface{"veth0", 0, false}));
  EXPECT_EQ(interfaces[3], (NetworkInterface{"wlan0", 0, false}));
  EXPECT_THROW(read_network_interfaces(std::string(DRUM_FIXTURES) + "/no_such_dir"), Error);
}

TEST(HostSurvey, MonitorableInterfacesAreThoseProcNetDevCounts) {
  auto interfaces = read_network_interfaces(std::string(DRUM_FIXTURES) + "/sys_class_net");
  mark_monitorable(interfaces, fixture("proc/net_dev_before"));  // lo, ifb0, eth0, eth1
  EXPECT_TRUE(interfaces[0].monitorable);                        // eth0
  EXPECT_TRUE(interfaces[1].monitorable);                        // lo
  EXPECT_FALSE(interfaces[2].monitorable);                       // veth0
  mark_monitorable(interfaces, "eth0: not numbers at all\n");
  EXPECT_FALSE(interfaces[0].monitorable);
}

TEST(HostSurvey, CpuStatisticsReadableOnlyWithPerCpuLines) {
  EXPECT_TRUE(cpu_statistics_readable(fixture("proc/stat_before")));
  EXPECT_FALSE(cpu_statistics_readable(""));
  EXPECT_FALSE(cpu_statistics_readable("cpu  1 2 3 4\n"));
}

HostSurvey survey_of(const std::string& host, double mflops) {
  return {host, 2, mflops, true, {{"eth0", 1000, true}, {"veth0", 0, false}}};
}

TEST(HostSurvey, SurveyLineRoundTrips) {
  const HostSurvey survey = survey_of("node-1", 1234.5);
  EXPECT_EQ(encode_host_survey(survey), "node-1\t2\t1234.5\t1\teth0:1000;veth0:unknown;\teth0;");
  EXPECT_EQ(decode_host_survey(encode_host_survey(survey)), survey);
  EXPECT_THROW(decode_host_survey("node-1\t2"), Error);
  EXPECT_THROW(decode_host_survey("node-1\ttwo\t1\t1\t\t"), Error);
  EXPECT_THROW(decode_host_survey("node-1\t2\t1\t1\teth0-1000;\t"), Error);
}

TEST(FlatMachineXml, ReadsBackThroughTheExistingReader) {
  const std::string text = flat_machine_xml({survey_of("fast", 2000), survey_of("slow", 1000)});
  EXPECT_THAT(text, HasSubstr("CPUs=\"2\" interfaces=\"eth0:1000;veth0:unknown;\" "
                              "monitorableInterfaces=\"eth0;\""));
  const std::vector<NodeSpec> specs = parse_machine_xml(text, "written");
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].type, NodeType::computing);
  EXPECT_EQ(specs[0].description, "fast");
  EXPECT_DOUBLE_EQ(specs[0].mflops, 2000);
  EXPECT_DOUBLE_EQ(specs[1].mflops, 1000);
  EXPECT_EQ(specs[2].type, NodeType::network);
  EXPECT_THAT(specs[2].children, ElementsAre("fast", "slow"));
  EXPECT_TRUE(specs[2].monitorable);
  MachineModel model(specs, "written");
  model.attach_ranks({"fast", "slow", "slow"});
  EXPECT_EQ(model.node(model.leaf_of_rank(2)).spec.description, "slow");
}

TEST(FlatMachineXml, RootMonitorableOnlyIfEveryHostIs) {
  HostSurvey blind = survey_of("blind", 1000);
  blind.monitorable = false;
  const auto specs = parse_machine_xml(flat_machine_xml({survey_of("a", 1), blind}), "written");
  EXPECT_FALSE(specs[1].monitorable);
  EXPECT_FALSE(specs[2].monitorable);
  EXPECT_THROW(flat_machine_xml({survey_of("a", 1), survey_of("a", 1)}), Error);
}

TEST(MachineXmlWriter, Figure3_5RoundTrips) {
  const std::vector<NodeSpec> figure = read_machine_xml(std::string(DRUM_FIXTURES) + "/fig3_5.xml");
  const std::vector<NodeSpec> again = parse_machine_xml(write_machine_xml(figure), "written");
  ASSERT_EQ(again.size(), figure.size());
  for (std::size_t i = 0; i < figure.size(); ++i) {
    EXPECT_EQ(again[i].name, figure[i].name);
    EXPECT_EQ(again[i].type, figure[i].type);
    EXPECT_EQ(again[i].description, figure[i].description);
    EXPECT_EQ(again[i].children, figure[i].children);
    EXPECT_EQ(again[i].monitorable, figure[i].monitorable);
    if (figure[i].type == NodeType::computing) {
      EXPECT_DOUBLE_EQ(again[i].mflops, figure[i].mflops);
    }
  }
}

}  // namespace
}  // namespace flexmpi::machine
