// DRUM parameters (thesis A.2, Table A.1): defaults, case-insensitive names
// and values, TRUE/FALSE, warnings for values not honoured, clear errors for
// unknown names and bad values (the settings unchanged), parameter files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "flexmpi/error.hpp"
#include "machine/drum_parameters.hpp"

namespace flexmpi::machine {
namespace {

using ::testing::HasSubstr;

std::string rejection(DrumParameters& parameters, const std::string& name,
                      const std::string& value) {
  try {
    set_parameter(parameters, name, value);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    return e.what();
  }
  ADD_FAILURE() << name << "=" << value << " accepted";
  return "";
}

TEST(DrumParameters, DefaultsOfTableA1) {
  const DrumParameters defaults;
  EXPECT_EQ(defaults.monitoring_period, std::chrono::seconds(1));
  EXPECT_TRUE(defaults.use_dynamic_monitoring);
  EXPECT_FALSE(defaults.monitor_memory);
  EXPECT_TRUE(defaults.use_flat_model);
  EXPECT_EQ(defaults.communication_weight.mode, CommunicationWeightMode::fixed);
  EXPECT_EQ(defaults.xml_topology_file, "drum.xml");
}

TEST(DrumParameters, NamesAndValuesAreCaseInsensitive) {
  DrumParameters parameters;
  EXPECT_EQ(set_parameter(parameters, "use_flat_model", "false"), "");
  EXPECT_FALSE(parameters.use_flat_model);
  set_parameter(parameters, "Monitor_Memory", "TRUE");
  EXPECT_TRUE(parameters.monitor_memory);
  set_parameter(parameters, "MONITORING_FREQUENCY", "3");  // seconds, as in Table A.1
  EXPECT_EQ(parameters.monitoring_period, std::chrono::seconds(3));
  set_parameter(parameters, "USE_NETWORK_POWERS", "2");
  EXPECT_EQ(parameters.communication_weight.mode, CommunicationWeightMode::from_caf);
  set_parameter(parameters, "communication_weight", "0.3");
  EXPECT_DOUBLE_EQ(parameters.communication_weight.fixed, 0.3);
  set_parameter(parameters, "COMMUNICATION_POWER", "inverse_mean_caf");
  EXPECT_EQ(parameters.communication_power, CommunicationPowerForm::inverse_mean_caf);
  set_parameter(parameters, "PROCESSING_POWER", "early");
  EXPECT_TRUE(parameters.early_processing_power);
  set_parameter(parameters, "XML_TOPOLOGY_FILE", "Cluster.xml");  // file names keep their case
  EXPECT_EQ(parameters.xml_topology_file, "Cluster.xml");
}

TEST(DrumParameters, ValuesNotHonouredGiveAWarning) {
  DrumParameters parameters;
  EXPECT_THAT(set_parameter(parameters, "USE_SNMP", "1"), HasSubstr("/proc/net/dev"));
  EXPECT_THAT(set_parameter(parameters, "USE_KSTAT", "TRUE"), HasSubstr("Solaris"));
  EXPECT_EQ(set_parameter(parameters, "USE_SNMP", "0"), "");
}

TEST(DrumParameters, UnknownNamesAndBadValuesAreNamedAndChangeNothing) {
  DrumParameters parameters;
  const std::string unknown = rejection(parameters, "MONITORING_FREQ", "1");
  EXPECT_THAT(unknown, HasSubstr("unknown DRUM parameter 'MONITORING_FREQ'"));
  EXPECT_THAT(unknown, HasSubstr("MONITORING_FREQUENCY (INT, default 1)"));
  EXPECT_THAT(rejection(parameters, "USE_FLAT_MODEL", "maybe"),
              HasSubstr("USE_FLAT_MODEL: 'maybe' is not an integer from 0 to 1 (or TRUE/FALSE)"));
  EXPECT_THAT(rejection(parameters, "USE_NETWORK_POWERS", "3"),
              HasSubstr("is not an integer from 0 to 2"));
  EXPECT_THAT(rejection(parameters, "COMMUNICATION_WEIGHT", "1.5"),
              HasSubstr("is not a number from 0 to 1"));
  EXPECT_THAT(rejection(parameters, "COMMUNICATION_POWER", "snmp"),
              HasSubstr("is not one of LOG_SPEED_OVER_CAF INVERSE_MEAN_CAF AVAILABLE_BANDWIDTH"));
  EXPECT_THAT(rejection(parameters, "MONITORING_FREQUENCY", "0"), HasSubstr("from 1 to"));
  const DrumParameters defaults;
  EXPECT_TRUE(parameters.use_flat_model);
  EXPECT_EQ(parameters.communication_weight.mode, defaults.communication_weight.mode);
  EXPECT_DOUBLE_EQ(parameters.communication_weight.fixed, defaults.communication_weight.fixed);
}

TEST(DrumParameters, ParameterFileLines) {
  const auto pairs = parse_parameter_file(
      "# DRUM settings\n"
      "USE_FLAT_MODEL 0\n"
      "\n"
      "  XML_TOPOLOGY_FILE   cluster.xml   # the hierarchy\n",
      "drum.params");
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0], (std::pair<std::string, std::string>{"USE_FLAT_MODEL", "0"}));
  EXPECT_EQ(pairs[1].second, "cluster.xml");
  try {
    parse_parameter_file("USE_FLAT_MODEL 0\nDEBUG_LEVEL\n", "drum.params");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("drum.params:2: expected \"PARAM VALUE\""));
  }
}

}  // namespace
}  // namespace flexmpi::machine
