// The policy registry and the smp policy's schedule (thesis 5.4.1): unknown
// names are refused with the known ones, schedule files parse or name the line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "config/config.hpp"
#include "flexmpi/error.hpp"
#include "policies/policy.hpp"
#include "policies/schedule.hpp"

namespace flexmpi {
namespace {

using ::testing::HasSubstr;

TEST(PolicyRegistry, EveryRegisteredNameMakesItsPolicy) {
  const Config config;
  for (const PolicyDescriptor& descriptor : policies()) {
    const auto policy = make_policy(descriptor.name, config);
    ASSERT_NE(policy, nullptr);
    EXPECT_EQ(policy->name(), descriptor.name);
    EXPECT_FALSE(descriptor.help.empty());
  }
}

TEST(PolicyRegistry, UnknownNameIsRefusedWithTheKnownOnes) {
  try {
    (void)make_policy("greedy", Config{});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_THAT(e.what(), HasSubstr("'greedy'"));
    EXPECT_THAT(e.what(), HasSubstr(policy_names()));
  }
  EXPECT_THAT(policy_names(), HasSubstr("none, lb, smp"));
}

TEST(Schedule, ParsesActionsInIterationOrder) {
  const auto actions = parse_schedule(
      "# comment\n\n300 remove 1 C1  # back\n100 spawn 2\n100 spawn 1 C7\n", "s.txt");
  ASSERT_EQ(actions.size(), 3u);
  EXPECT_EQ(actions[0], (ScheduledAction{100, true, 2, ""}));
  EXPECT_EQ(actions[1], (ScheduledAction{100, true, 1, "C7"}));  // stable: file order kept
  EXPECT_EQ(actions[2], (ScheduledAction{300, false, 1, "C1"}));
}

TEST(Schedule, BadLinesAreRefusedNamingTheLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"x spawn 1", "iteration"},
      {"-5 spawn 1", "iteration"},
      {"10 grow 1", "action 'grow'"},
      {"10 spawn", "count"},
      {"10 spawn 0", "count"},
      {"10 spawn 2x", "count"},
      {"10 spawn 1 C1 extra", "'extra'"},
  };
  for (const auto& [line, what] : cases) {
    SCOPED_TRACE(line);
    try {
      (void)parse_schedule(std::string("# first\n") + line + "\n", "plan.txt");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::bad_config);
      EXPECT_THAT(e.what(), HasSubstr("plan.txt line 2"));
      EXPECT_THAT(e.what(), HasSubstr(what));
      EXPECT_THAT(e.what(), HasSubstr("spawn|remove"));
    }
  }
}

TEST(Schedule, ConfigReadsTheFileOnceIntoTypedActions) {
  const std::string path = ::testing::TempDir() + "flexmpi_schedule_test.txt";
  std::ofstream(path) << "20 spawn 2\n40 remove 1\n";
  const Config config = load_config(
      [&](const char* name) -> const char* {
        return std::string(name) == "FLEXMPI_SCHEDULE" ? path.c_str() : nullptr;
      },
      {"FLEXMPI_SCHEDULE"});
  ASSERT_EQ(config.schedule.size(), 2u);
  EXPECT_EQ(config.schedule[1], (ScheduledAction{40, false, 1, ""}));
  EXPECT_EQ(config.schedule_file, path);
}

TEST(Schedule, ConfigRefusesAMissingOrBadFileNamingTheVariable) {
  const std::string bad = ::testing::TempDir() + "flexmpi_bad_schedule.txt";
  std::ofstream(bad) << "20 spawn lots\n";
  for (const std::string& path : {std::string("/nonexistent/schedule.txt"), bad}) {
    SCOPED_TRACE(path);
    try {
      (void)load_config(
          [&](const char* name) -> const char* {
            return std::string(name) == "FLEXMPI_SCHEDULE" ? path.c_str() : nullptr;
          },
          {"FLEXMPI_SCHEDULE"});
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::bad_config);
      EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_SCHEDULE"));
      EXPECT_THAT(e.what(), HasSubstr(path));
    }
  }
}

}  // namespace
}  // namespace flexmpi
