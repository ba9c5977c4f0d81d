// Configuration: defaults, every setting's accepted values,
// and every kind of bad value rejected with a message naming the variable,
// the value and what is accepted, through a fake environment.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/settings.hpp"
#include "flexmpi/error.hpp"
#include "policies/amp/amp_constraint.hpp"

namespace flexmpi {
namespace {

using ::testing::HasSubstr;

using Environment = std::map<std::string, std::string>;

Config load(const Environment& env) {
  std::vector<std::string> names;
  for (const auto& [name, value] : env) names.push_back(name);
  return load_config(
      [&env](const char* name) -> const char* {
        const auto found = env.find(name);
        return found == env.end() ? nullptr : found->second.c_str();
      },
      names);
}

Config load_one(const std::string& variable, const std::string& value) {
  return load({{variable, value}});
}

// The typed value of a strategy's setting `variable`, nullopt when unset.
template <typename T>
std::optional<T> strategy_value(const Config& config, std::string_view variable) {
  const T* value = config.strategy_settings.find<T>(variable);
  return value != nullptr ? std::optional<T>(*value) : std::nullopt;
}

const SettingDescriptor& descriptor(std::string_view variable) {
  const auto& all = settings();
  const auto found = std::find_if(
      all.begin(), all.end(), [&](const SettingDescriptor& s) { return s.variable == variable; });
  if (found == all.end()) throw std::logic_error("no setting " + std::string(variable));
  return *found;
}

// The value must be rejected with bad_config and a message that names the
// variable, quotes the value and says what the setting accepts.
void expect_rejected(const std::string& variable, const std::string& value,
                     const std::string& also_in_message = "") {
  SCOPED_TRACE(variable + "='" + value + "'");
  try {
    load_one(variable, value);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    const std::string message = e.what();
    EXPECT_THAT(message, HasSubstr(variable));
    EXPECT_THAT(message, HasSubstr("'" + value + "'"));
    EXPECT_THAT(message, HasSubstr(std::string(descriptor(variable).accepted)));
    if (!also_in_message.empty()) {
      EXPECT_THAT(message, HasSubstr(also_in_message));
    }
  }
}

void expect_unknown_variable(const std::string& variable) {
  SCOPED_TRACE(variable);
  try {
    load({{variable, "1"}});
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_THAT(e.what(), HasSubstr(variable));
    // Listing the known settings lets the user spot the misspelling.
    EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_SAMPLING_INTERVAL"));
  }
}

// A scratch file in the test's working directory, removed afterwards.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : path_(std::filesystem::current_path() / name) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  [[nodiscard]] std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

TEST(Config, DefaultsAreTheSpecDefaults) {
  const Config c = load({});
  EXPECT_EQ(c.sampling_interval, 100);
  EXPECT_DOUBLE_EQ(c.imbalance_threshold, 0.15);
  EXPECT_DOUBLE_EQ(c.dedicated_threshold, 0.05);
  EXPECT_EQ(c.k, 3);
  EXPECT_EQ(c.lb_confirm, 2);
  EXPECT_EQ(c.lb_window, 5);
  EXPECT_DOUBLE_EQ(c.lb_margin, 2.0);
  EXPECT_DOUBLE_EQ(c.lb_refine, 0.08);
  EXPECT_EQ(c.lb_model, WorkloadModel::count);
  EXPECT_EQ(c.partitioner, "rcp");
  EXPECT_EQ(c.metric, "auto");
  EXPECT_EQ(c.policy, "lb");
  EXPECT_EQ(c.strategy_settings.find<double>("FLEXMPI_GOAL"), nullptr);  // a policy's own
  EXPECT_EQ(c.hostfile, "");
  EXPECT_EQ(c.scheduler, SchedulingPolicy::balance_all);
  EXPECT_EQ(c.trace, "");
  EXPECT_TRUE(c.emulate_speed.empty());
  EXPECT_EQ(c.report, "");
  EXPECT_EQ(c.log_level, "info");
}

TEST(Config, HelpDefaultsMatchTheParsedDefaults) {
  // The help text and the parser read one table: their defaults must agree.
  const Config c = load({});
  EXPECT_EQ(descriptor("FLEXMPI_SAMPLING_INTERVAL").default_text,
            std::to_string(c.sampling_interval));
  EXPECT_EQ(descriptor("FLEXMPI_K").default_text, std::to_string(c.k));
  EXPECT_EQ(descriptor("FLEXMPI_LB_CONFIRM").default_text, std::to_string(c.lb_confirm));
  EXPECT_EQ(descriptor("FLEXMPI_LB_WINDOW").default_text, std::to_string(c.lb_window));
  EXPECT_EQ(std::stod(std::string(descriptor("FLEXMPI_LB_MARGIN").default_text)), c.lb_margin);
  EXPECT_EQ(std::stod(std::string(descriptor("FLEXMPI_LB_REFINE").default_text)), c.lb_refine);
  EXPECT_EQ(std::stod(std::string(descriptor("FLEXMPI_IMBALANCE_THRESHOLD").default_text)),
            c.imbalance_threshold);
  EXPECT_EQ(std::stod(std::string(descriptor("FLEXMPI_DEDICATED_THRESHOLD").default_text)),
            c.dedicated_threshold);
  EXPECT_EQ(descriptor("FLEXMPI_LB_MODEL").default_text, to_string(c.lb_model));
  EXPECT_EQ(descriptor("FLEXMPI_PARTITIONER").default_text, c.partitioner);
  EXPECT_EQ(descriptor("FLEXMPI_METRIC").default_text, c.metric);
  EXPECT_EQ(descriptor("FLEXMPI_POLICY").default_text, c.policy);
  EXPECT_EQ(descriptor("FLEXMPI_SCHEDULER").default_text, to_string(c.scheduler));
  EXPECT_EQ(descriptor("FLEXMPI_LOG_LEVEL").default_text, c.log_level);
}

TEST(Config, TableHasEverySpecVariableOnceWithHelp) {
  const std::vector<std::string> spec = {"FLEXMPI_SAMPLING_INTERVAL",
                                         "FLEXMPI_IMBALANCE_THRESHOLD",
                                         "FLEXMPI_DEDICATED_THRESHOLD",
                                         "FLEXMPI_K",
                                         "FLEXMPI_LB_MODEL",
                                         "FLEXMPI_PARTITIONER",
                                         "FLEXMPI_METRIC",
                                         "FLEXMPI_POLICY",
                                         "FLEXMPI_GOAL",
                                         "FLEXMPI_CONSTRAINT",
                                         "FLEXMPI_HOSTFILE",
                                         "FLEXMPI_SCHEDULER",
                                         "FLEXMPI_TRACE",
                                         "FLEXMPI_EMULATE_SPEED"};
  std::set<std::string_view> variables, options;
  for (const SettingDescriptor& s : settings()) {
    SCOPED_TRACE(std::string(s.variable));
    EXPECT_TRUE(s.variable.starts_with("FLEXMPI_"));
    EXPECT_FALSE(s.option.empty());
    EXPECT_FALSE(s.accepted.empty());
    EXPECT_FALSE(s.help.empty());
    EXPECT_FALSE(s.default_text.empty());
    EXPECT_NE(static_cast<bool>(s.apply), static_cast<bool>(s.parse)) << "one way to read it";
    EXPECT_TRUE(variables.insert(s.variable).second) << "listed twice";
    EXPECT_TRUE(options.insert(s.option).second) << "option listed twice";
  }
  for (const std::string& name : spec) EXPECT_EQ(variables.count(name), 1u) << name;
}

TEST(Config, NullLookupKeepsDefaults) {
  // A name listed as present but whose lookup gives nullptr is not an error.
  const Config c = load_config([](const char*) -> const char* { return nullptr; },
                               {"FLEXMPI_SAMPLING_INTERVAL"});
  EXPECT_EQ(c.sampling_interval, 100);
}

TEST(Config, SamplingIntervalAndKAcceptWholeNumbers) {
  EXPECT_EQ(load_one("FLEXMPI_SAMPLING_INTERVAL", "1").sampling_interval, 1);
  EXPECT_EQ(load_one("FLEXMPI_SAMPLING_INTERVAL", "250").sampling_interval, 250);
  EXPECT_EQ(load_one("FLEXMPI_SAMPLING_INTERVAL", "1000000").sampling_interval, 1000000);
  EXPECT_EQ(load_one("FLEXMPI_K", "1").k, 1);
  EXPECT_EQ(load_one("FLEXMPI_K", "7").k, 7);
}

TEST(Config, SamplingIntervalAndKRejectBadNumbers) {
  for (const std::string variable : {"FLEXMPI_SAMPLING_INTERVAL", "FLEXMPI_K"}) {
    for (const std::string value : {"abc", "12abc", "", "-5", "0", "1.5", " 12", "12 ", "0x10",
                                    "1e3", "nan", "inf", "99999999999999999999999"}) {
      expect_rejected(variable, value);
    }
  }
}

TEST(Config, BalancingRulesAcceptTheirRanges) {
  EXPECT_EQ(load_one("FLEXMPI_LB_CONFIRM", "1").lb_confirm, 1);
  EXPECT_EQ(load_one("FLEXMPI_LB_CONFIRM", "4").lb_confirm, 4);
  EXPECT_EQ(load_one("FLEXMPI_LB_WINDOW", "1").lb_window, 1);
  EXPECT_EQ(load_one("FLEXMPI_LB_WINDOW", "9").lb_window, 9);
  EXPECT_DOUBLE_EQ(load_one("FLEXMPI_LB_MARGIN", "0").lb_margin, 0.0);
  EXPECT_DOUBLE_EQ(load_one("FLEXMPI_LB_MARGIN", "1.5").lb_margin, 1.5);
  EXPECT_DOUBLE_EQ(load_one("FLEXMPI_LB_MARGIN", "1e6").lb_margin, 1e6);
  EXPECT_DOUBLE_EQ(load_one("FLEXMPI_LB_REFINE", "0").lb_refine, 0.0);
  EXPECT_DOUBLE_EQ(load_one("FLEXMPI_LB_REFINE", "0.05").lb_refine, 0.05);
}

TEST(Config, BalancingRulesRejectBadValuesNamingTheVariable) {
  for (const std::string value : {"0", "-1", "1.5", "abc", "", "2x"}) {
    expect_rejected("FLEXMPI_LB_CONFIRM", value, "a whole number from 1");
    expect_rejected("FLEXMPI_LB_WINDOW", value, "a whole number from 1");
  }
  for (const std::string value : {"-0.1", "1e7", "nan", "inf", "abc", "", "2x"}) {
    expect_rejected("FLEXMPI_LB_MARGIN", value, "a number from 0 to 1000000");
  }
  for (const std::string value : {"-0.1", "1", "1.5", "nan", "inf", "abc", "", "0.1x"}) {
    expect_rejected("FLEXMPI_LB_REFINE", value, "a number from 0, under 1");
  }
}

TEST(Config, ThresholdsAcceptFractions) {
  EXPECT_DOUBLE_EQ(load_one("FLEXMPI_IMBALANCE_THRESHOLD", "0.3").imbalance_threshold, 0.3);
  EXPECT_DOUBLE_EQ(load_one("FLEXMPI_IMBALANCE_THRESHOLD", "1e-3").imbalance_threshold, 1e-3);
  EXPECT_DOUBLE_EQ(load_one("FLEXMPI_IMBALANCE_THRESHOLD", "0.999").imbalance_threshold, 0.999);
  EXPECT_DOUBLE_EQ(load_one("FLEXMPI_DEDICATED_THRESHOLD", "0.1").dedicated_threshold, 0.1);
  EXPECT_DOUBLE_EQ(load_one("FLEXMPI_DEDICATED_THRESHOLD", "0.5").dedicated_threshold, 0.5);
}

TEST(Config, ThresholdsRejectOutOfRangeAndNonNumbers) {
  for (const std::string variable :
       {"FLEXMPI_IMBALANCE_THRESHOLD", "FLEXMPI_DEDICATED_THRESHOLD"}) {
    for (const std::string value :
         {"0", "1", "1.5", "-0.1", "nan", "inf", "-inf", "abc", "", "0.1x", "0,1", "1e400"}) {
      expect_rejected(variable, value);
    }
  }
}

// The choices a "one of a, b, c" setting lists in its accepted text: the
// table is the single place they are declared, and each must be accepted.
std::vector<std::string> listed_choices(std::string_view variable) {
  std::string_view text = descriptor(variable).accepted;
  constexpr std::string_view prefix = "one of ";
  if (!text.starts_with(prefix)) throw std::logic_error("not a choice setting");
  text.remove_prefix(prefix.size());
  std::vector<std::string> choices;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(", ", start);
    choices.emplace_back(
        text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return choices;
    start = comma + 2;
  }
}

TEST(Config, ChoicesAcceptEachListedValue) {
  // Each setting's typed value, back as the name it was read from.
  using Name = std::function<std::string(const Config&)>;
  const std::vector<std::pair<std::string, Name>> settings_with_choices = {
      {"FLEXMPI_LB_MODEL", [](const Config& c) { return std::string(to_string(c.lb_model)); }},
      {"FLEXMPI_PARTITIONER", [](const Config& c) { return c.partitioner; }},
      {"FLEXMPI_POLICY", [](const Config& c) { return c.policy; }},
      {"FLEXMPI_CONSTRAINT",
       [](const Config& c) {
         return std::string(to_string(*strategy_value<AmpConstraint>(c, "FLEXMPI_CONSTRAINT")));
       }},
      {"FLEXMPI_SCHEDULER", [](const Config& c) { return std::string(to_string(c.scheduler)); }},
      {"FLEXMPI_LOG_LEVEL", [](const Config& c) { return c.log_level; }}};
  for (const auto& [variable, name_of] : settings_with_choices) {
    for (const std::string& choice : listed_choices(variable)) {
      SCOPED_TRACE(variable + "=" + choice);
      Environment env{{variable, choice}};
      if (variable == "FLEXMPI_POLICY" && choice == "amp") env["FLEXMPI_GOAL"] = "60";
      EXPECT_EQ(name_of(load(env)), choice);
    }
  }
}

TEST(Config, ChoicesIncludeWhatTheSpecRequiresNow) {
  // Strategies not implemented yet are rejected, but these exist from the start.
  using ::testing::IsSupersetOf;
  EXPECT_THAT(listed_choices("FLEXMPI_LB_MODEL"), IsSupersetOf({"count", "nnz", "weight"}));
  EXPECT_THAT(listed_choices("FLEXMPI_PARTITIONER"), IsSupersetOf({"rcp"}));
  EXPECT_THAT(listed_choices("FLEXMPI_POLICY"), IsSupersetOf({"none", "lb"}));
  EXPECT_THAT(listed_choices("FLEXMPI_CONSTRAINT"), IsSupersetOf({"efficiency", "cost", "energy"}));
  EXPECT_THAT(listed_choices("FLEXMPI_POLICY"), IsSupersetOf({"smp", "hpmp", "amp"}));
  EXPECT_THAT(listed_choices("FLEXMPI_SCHEDULER"),
              IsSupersetOf({"balance_all", "balance_occupied"}));
  EXPECT_THAT(listed_choices("FLEXMPI_LOG_LEVEL"),
              IsSupersetOf({"trace", "debug", "info", "warn", "error", "off"}));
}

TEST(Config, ChoicesRejectUnknownValues) {
  expect_rejected("FLEXMPI_LB_MODEL", "rows");
  expect_rejected("FLEXMPI_LB_MODEL", "COUNT");  // choices are case-sensitive
  expect_rejected("FLEXMPI_LB_MODEL", "");
  expect_rejected("FLEXMPI_PARTITIONER", "metis");
  expect_rejected("FLEXMPI_PARTITIONER", "rcp ");
  expect_rejected("FLEXMPI_POLICY", "greedy");
  expect_rejected("FLEXMPI_POLICY", "");
  expect_rejected("FLEXMPI_CONSTRAINT", "time");
  expect_rejected("FLEXMPI_SCHEDULER", "random");
  expect_rejected("FLEXMPI_LOG_LEVEL", "verbose");
}

// The drum partitioner's machine model is read when configured: a missing or
// malformed file is refused then, naming it, not at the first balancing.
TEST(Config, DrumTopologyMustBeAReadableModel) {
  EXPECT_EQ(
      strategy_value<std::string>(load_one("FLEXMPI_DRUM_TOPOLOGY", ""), "FLEXMPI_DRUM_TOPOLOGY"),
      "");
  expect_rejected("FLEXMPI_DRUM_TOPOLOGY", "/nonexistent/drum.xml", "/nonexistent/drum.xml");
  const std::string malformed = ::testing::TempDir() + "drum_malformed.xml";
  std::ofstream(malformed) << "<machinemodel numnode=\"1\"><node type=\"ROUTER\" name=\"r\"/>";
  expect_rejected("FLEXMPI_DRUM_TOPOLOGY", malformed, malformed);
  std::remove(malformed.c_str());
}

// Joining processes need a readable ompi-server URI file and Slurm helper jobs.
TEST(Config, SlurmJoinNeedsAReadableUriFileAndSlurm) {
  expect_rejected("FLEXMPI_SLURM_JOIN", "/nonexistent/ompi-server.uri",
                  "cannot read the ompi-server URI file '/nonexistent/ompi-server.uri'");
  expect_rejected("FLEXMPI_SLURM_JOIN", "/tmp", "'/tmp' is a directory: expected a file");
  expect_rejected("FLEXMPI_SLURM_MPIEXEC", "");
  const std::string uri = ::testing::TempDir() + "ompi_server.uri";
  std::ofstream(uri) << "1.0;tcp://127.0.0.1:1\n";
  try {
    (void)load_one("FLEXMPI_SLURM_JOIN", uri);  // FLEXMPI_RESOURCES is hostfile
    ADD_FAILURE() << "accepted without FLEXMPI_RESOURCES=slurm";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_SLURM_JOIN needs FLEXMPI_RESOURCES=slurm"));
  }
  std::remove(uri.c_str());
}

TEST(Config, MetricAcceptsWorkAutoAndPapiLists) {
  for (const std::string v :
       {"auto", "work", "papi:PAPI_FP_OPS", "papi:PAPI_FP_OPS,PAPI_L1_DCM", "papi:PAPI_TOT_INS"}) {
    EXPECT_EQ(load_one("FLEXMPI_METRIC", v).metric, v);
  }
}

TEST(Config, MetricRejectsEmptyEventNamesAndUnknownKinds) {
  expect_rejected("FLEXMPI_METRIC", "papi:", "empty");
  expect_rejected("FLEXMPI_METRIC", "papi:A,,B", "empty");
  expect_rejected("FLEXMPI_METRIC", "papi:,A", "empty");
  expect_rejected("FLEXMPI_METRIC", "papi:A,", "empty");
  expect_rejected("FLEXMPI_METRIC", "flops");
  expect_rejected("FLEXMPI_METRIC", "PAPI_FP_OPS");
  expect_rejected("FLEXMPI_METRIC", "");
}

TEST(Config, GoalAcceptsPositiveSeconds) {
  EXPECT_EQ(strategy_value<double>(load_one("FLEXMPI_GOAL", "120"), "FLEXMPI_GOAL"), 120.0);
  EXPECT_EQ(strategy_value<double>(load_one("FLEXMPI_GOAL", "0.5"), "FLEXMPI_GOAL"), 0.5);
}

TEST(Config, GoalRejectsNonPositiveAndNonNumbers) {
  for (const std::string value : {"0", "-1", "abc", "", "nan", "inf", "10s"}) {
    expect_rejected("FLEXMPI_GOAL", value);
  }
}

TEST(Config, GoalSpeedupIsAFractionStrictlyBetween0And1) {
  EXPECT_FALSE(strategy_value<double>(load({}), "FLEXMPI_GOAL_SPEEDUP").has_value());
  EXPECT_EQ(
      strategy_value<double>(load_one("FLEXMPI_GOAL_SPEEDUP", "0.35"), "FLEXMPI_GOAL_SPEEDUP"),
      0.35);
  for (const std::string value : {"0", "1", "-0.2", "1.5", "abc", "", "nan", "35%"}) {
    expect_rejected("FLEXMPI_GOAL_SPEEDUP", value);
  }
}

TEST(Config, GoalToleranceIsAFractionFrom0ToBelow1) {
  const auto tolerance = [](const std::string& value) {
    return strategy_value<double>(load_one("FLEXMPI_GOAL_TOLERANCE", value),
                                  "FLEXMPI_GOAL_TOLERANCE");
  };
  EXPECT_EQ(tolerance("0"), 0.0);
  EXPECT_EQ(tolerance("0.05"), 0.05);
  for (const std::string value : {"1", "-0.01", "2", "x", ""}) {
    expect_rejected("FLEXMPI_GOAL_TOLERANCE", value);
  }
}

TEST(Config, AmpNeedsExactlyOneGoal) {
  EXPECT_EQ(strategy_value<double>(load({{"FLEXMPI_POLICY", "amp"}, {"FLEXMPI_GOAL", "30"}}),
                                   "FLEXMPI_GOAL"),
            30.0);
  EXPECT_EQ(
      strategy_value<double>(load({{"FLEXMPI_POLICY", "amp"}, {"FLEXMPI_GOAL_SPEEDUP", "0.2"}}),
                             "FLEXMPI_GOAL_SPEEDUP"),
      0.2);
  EXPECT_EQ(strategy_value<AmpConstraint>(load({{"FLEXMPI_POLICY", "amp"},
                                                {"FLEXMPI_GOAL", "30"},
                                                {"FLEXMPI_CONSTRAINT", "energy"}}),
                                          "FLEXMPI_CONSTRAINT"),
            AmpConstraint::energy);
  // Another policy ignores the goals.
  EXPECT_NO_THROW(load({{"FLEXMPI_GOAL", "30"}, {"FLEXMPI_GOAL_SPEEDUP", "0.2"}}));
  const std::vector<Environment> bad = {
      {{"FLEXMPI_POLICY", "amp"}},
      {{"FLEXMPI_POLICY", "amp"}, {"FLEXMPI_GOAL", "30"}, {"FLEXMPI_GOAL_SPEEDUP", "0.2"}}};
  for (const Environment& env : bad) {
    SCOPED_TRACE(env.size());
    try {
      (void)load(env);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::bad_config);
      EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_POLICY=amp"));
      EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_GOAL"));
      EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_GOAL_SPEEDUP"));
    }
  }
}

TEST(Config, PathSettingsAcceptPathsAndRejectEmpty) {
  EXPECT_EQ(load_one("FLEXMPI_TRACE", "run.jsonl").trace, "run.jsonl");
  EXPECT_EQ(load_one("FLEXMPI_REPORT", "-").report, "-");
  const std::string in_a_directory = ::testing::TempDir() + "profile.json";
  EXPECT_EQ(load_one("FLEXMPI_REPORT", in_a_directory).report, in_a_directory);
  expect_rejected("FLEXMPI_TRACE", "");
  expect_rejected("FLEXMPI_REPORT", "");
  // An output's directory must exist: checked before any work.
  try {
    (void)load_one("FLEXMPI_REPORT", "no-such-directory/profile.json");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_REPORT='no-such-directory/profile.json': cannot open "
                                    "for writing (No such file or directory) in its directory "
                                    "'no-such-directory'"));
  }
}

// The collective watchdog's timeout and what lost output does.
TEST(Config, FailureSettingsAcceptTheirRanges) {
  EXPECT_EQ(Config{}.collective_timeout, 30.0);
  EXPECT_EQ(load_one("FLEXMPI_COLLECTIVE_TIMEOUT", "0").collective_timeout, 0.0);
  EXPECT_EQ(load_one("FLEXMPI_COLLECTIVE_TIMEOUT", "2.5").collective_timeout, 2.5);
  EXPECT_EQ(load_one("FLEXMPI_COLLECTIVE_TIMEOUT", "1000000").collective_timeout, 1e6);
  EXPECT_TRUE(Config{}.output_errors_fail);
  EXPECT_TRUE(load_one("FLEXMPI_OUTPUT_ERRORS", "fail").output_errors_fail);
  EXPECT_FALSE(load_one("FLEXMPI_OUTPUT_ERRORS", "warn").output_errors_fail);
}

TEST(Config, FailureSettingsRejectBadValues) {
  for (const std::string value : {"", "abc", "-1", "1000001", "1e308", "inf", "nan", "2s", " 2"}) {
    expect_rejected("FLEXMPI_COLLECTIVE_TIMEOUT", value, "from 0 to 1000000 (0 = off)");
  }
  for (const std::string value : {"", "FAIL", "ignore", "0", "warn "}) {
    expect_rejected("FLEXMPI_OUTPUT_ERRORS", value, "one of fail, warn");
  }
}

TEST(Config, EmulateSpeedAcceptsSpeedLists) {
  using Speeds = std::vector<SpeedFunction>;
  EXPECT_EQ(load_one("FLEXMPI_EMULATE_SPEED", "1.0,0.5").emulate_speed, (Speeds{1.0, 0.5}));
  EXPECT_EQ(load_one("FLEXMPI_EMULATE_SPEED", "0.25").emulate_speed, (Speeds{0.25}));
  EXPECT_EQ(load_one("FLEXMPI_EMULATE_SPEED", "1,1,0.75,0.1").emulate_speed,
            (Speeds{1.0, 1.0, 0.75, 0.1}));
}

TEST(Config, EmulateSpeedRejectsBadItemsNamingTheItem) {
  expect_rejected("FLEXMPI_EMULATE_SPEED", "1,0", "item 2");
  expect_rejected("FLEXMPI_EMULATE_SPEED", "1,abc", "item 2");
  expect_rejected("FLEXMPI_EMULATE_SPEED", "1.5", "item 1");
  expect_rejected("FLEXMPI_EMULATE_SPEED", "", "item 1");
  expect_rejected("FLEXMPI_EMULATE_SPEED", "1,", "item 2");
  expect_rejected("FLEXMPI_EMULATE_SPEED", "0.5,-1", "item 2");
  expect_rejected("FLEXMPI_EMULATE_SPEED", "nan", "item 1");
  expect_rejected("FLEXMPI_EMULATE_SPEED", "0.5;0.5", "item 1");
}

TEST(Config, EmulateUnitSecondsIsMeasuredUnlessGivenAsAPositiveNumber) {
  EXPECT_DOUBLE_EQ(load({}).emulate_unit_seconds, 0.0);
  EXPECT_DOUBLE_EQ(load_one("FLEXMPI_EMULATE_UNIT_SECONDS", "2.5e-8").emulate_unit_seconds, 2.5e-8);
  for (const std::string value : {"0", "-1e-8", "abc", "", "nan", "inf", "1e-8s"}) {
    expect_rejected("FLEXMPI_EMULATE_UNIT_SECONDS", value);
  }
}

TEST(Config, HostfileAcceptsAWellFormedFile) {
  const TempFile file("config_good_hostfile.txt", "# nodes\nn1:C1:4\nn2:C2:2:0.5\n");
  EXPECT_EQ(load_one("FLEXMPI_HOSTFILE", file.path()).hostfile, file.path());
}

TEST(Config, HostfileRejectsMissingFile) {
  const std::string path = (std::filesystem::current_path() / "no_such_hostfile.txt").string();
  std::filesystem::remove(path);
  expect_rejected("FLEXMPI_HOSTFILE", path, "cannot read");
}

TEST(Config, HostfileRejectsMalformedFileNamingTheLine) {
  const TempFile file("config_bad_hostfile.txt", "n1:C1:4\nn2:C2\n");
  expect_rejected("FLEXMPI_HOSTFILE", file.path(), file.path() + ":2:");
}

TEST(Config, WorkProfileIsLoadedAtStartUp) {
  const TempFile file("config_work_profile.jsonl",
                      R"({"interval": 0, "iterations": 5, "metric_count": [10, 20], )"
                      R"("partition": [3, 3]})"
                      "\n");
  const Config c = load_one("FLEXMPI_PROFILE", file.path());
  EXPECT_EQ(c.work_profile_file, file.path());
  ASSERT_NE(c.work_profile, nullptr);
  EXPECT_DOUBLE_EQ(c.work_profile->find(0)->total(), 30.0);
}

TEST(Config, WorkProfileRejectsMissingOrBadFilesNamingTheKey) {
  const std::string path = (std::filesystem::current_path() / "no_such_profile.jsonl").string();
  std::filesystem::remove(path);
  expect_rejected("FLEXMPI_PROFILE", path);
  const TempFile file("config_bad_work_profile.jsonl", R"({"interval": 0, "iterations": 5})");
  expect_rejected("FLEXMPI_PROFILE", file.path(), "metric_count");
}

TEST(Config, UnknownOrMisspeltVariableIsRejected) {
  expect_unknown_variable("FLEXMPI_FOO");
  expect_unknown_variable("FLEXMPI_SAMPLNG_INTERVAL");
  expect_unknown_variable("FLEXMPI_sampling_interval");
}

TEST(Config, SeveralSettingsTogether) {
  const Config c = load({{"FLEXMPI_SAMPLING_INTERVAL", "20"},
                         {"FLEXMPI_POLICY", "none"},
                         {"FLEXMPI_GOAL", "300"},
                         {"FLEXMPI_CONSTRAINT", "cost"},
                         {"FLEXMPI_METRIC", "work"}});
  EXPECT_EQ(c.sampling_interval, 20);
  EXPECT_EQ(c.policy, "none");
  EXPECT_EQ(strategy_value<double>(c, "FLEXMPI_GOAL"), 300.0);
  EXPECT_EQ(strategy_value<AmpConstraint>(c, "FLEXMPI_CONSTRAINT"), AmpConstraint::cost);
  EXPECT_EQ(c.metric, "work");
  EXPECT_EQ(c.k, 3);  // untouched settings keep their defaults
}

TEST(Config, OneBadValueAmongGoodOnesIsStillAnError) {
  EXPECT_THROW(load({{"FLEXMPI_SAMPLING_INTERVAL", "20"}, {"FLEXMPI_K", "0"}}), Error);
}

}  // namespace
}  // namespace flexmpi
