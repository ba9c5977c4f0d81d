// Emulated speed functions: FLEXMPI_EMULATE_SPEED items of
// the form SPEED@SIZE:SPEED (a memory cliff), their arithmetic and their
// validation; constant speeds behave exactly as before.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/settings.hpp"
#include "emulation/speed_emulator.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

using ::testing::HasSubstr;

TEST(SpeedFunctionSyntax, ParsesConstantsAndCliffs) {
  const auto functions = parse_speed_list("1.0,0.9@2000:0.3");
  ASSERT_EQ(functions.size(), 2u);
  EXPECT_TRUE(functions[0].constant());
  EXPECT_EQ(functions[0], 1.0);
  EXPECT_FALSE(functions[1].constant());
  EXPECT_EQ(functions[1], SpeedFunction({0.9, 0.3}, {2000}));
  EXPECT_EQ(functions[1].text(), "0.9@2000:0.3");
  EXPECT_EQ(parse_speed_list("1@100:0.5@300:0.25")[0], SpeedFunction({1.0, 0.5, 0.25}, {100, 300}));
}

void expect_rejected(std::string_view text, const std::string& says) {
  SCOPED_TRACE(std::string(text));
  try {
    parse_speed_list(text);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(says));
  }
}

TEST(SpeedFunctionSyntax, RejectsMistakesNamingTheItemAndThePart) {
  expect_rejected("1.0,0.9@2000", "item 2 '0.9@2000': '2000' should be SIZE:SPEED");
  expect_rejected("0.9@:0.3", "size '' is not a positive number");
  expect_rejected("0.9@-5:0.3", "size '-5' is not a positive number");
  expect_rejected("0.9@0:0.3", "size '0'");
  expect_rejected("0.9@abc:0.3", "size 'abc'");
  expect_rejected("0.9@2000:", "speed '' is not a number");
  expect_rejected("0.9@2000:1.5", "speed '1.5' is outside (0, 1]");
  expect_rejected("0.9@2000:0", "speed '0' is outside (0, 1]");
  expect_rejected("x@2000:0.3", "speed 'x' is not a number");
  expect_rejected("0.9@2000:0.3@1000:0.2", "sizes must increase (1000 after 2000)");
  expect_rejected("0.9@2000:0.3@", "'' should be SIZE:SPEED");
  expect_rejected("1,0.9@2000:0.3:0.1", "speed '0.3:0.1' is not a number");
}

TEST(SpeedFunctionSyntax, ConfigurationNamesTheVariable) {
  const auto lookup = [](const char* name) -> const char* {
    return std::string(name) == "FLEXMPI_EMULATE_SPEED" ? "1.0,0.9@2000" : nullptr;
  };
  try {
    load_config(lookup, {"FLEXMPI_EMULATE_SPEED"});
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_EMULATE_SPEED='1.0,0.9@2000' is invalid"));
    EXPECT_THAT(e.what(), HasSubstr("SIZE:SPEED"));
  }
  const auto good = [](const char* name) -> const char* {
    return std::string(name) == "FLEXMPI_EMULATE_SPEED" ? "1.0,1.0@1000:0.2" : nullptr;
  };
  EXPECT_EQ(load_config(good, {"FLEXMPI_EMULATE_SPEED"}).emulate_speed,
            (std::vector<SpeedFunction>{1.0, SpeedFunction({1.0, 0.2}, {1000})}));
}

TEST(SpeedFunctionArithmetic, RowsBeyondTheCliffRunAtTheSecondSpeed) {
  const SpeedFunction f({0.9, 0.3}, {2000});
  // 1000 rows: all at 0.9.
  EXPECT_DOUBLE_EQ(f.emulated_units(1000), 1000 / 0.9);
  EXPECT_DOUBLE_EQ(f.effective_speed(1000), 0.9);
  EXPECT_DOUBLE_EQ(f.effective_speed(2000), 0.9);
  // 3000 rows: 2000 at 0.9 and 1000 at 0.3.
  EXPECT_DOUBLE_EQ(f.emulated_units(3000), 2000 / 0.9 + 1000 / 0.3);
  EXPECT_DOUBLE_EQ(f.effective_speed(3000), 3000 / (2000 / 0.9 + 1000 / 0.3));
  // The time is continuous at the cliff; the speed keeps falling beyond it.
  EXPECT_NEAR(f.emulated_units(2000.001), f.emulated_units(2000), 1e-2);
  EXPECT_GT(f.effective_speed(2500), f.effective_speed(5000));
  EXPECT_GT(f.effective_speed(5000), 0.3);
  // Unknown size: the speed of small partitions.
  EXPECT_DOUBLE_EQ(f.effective_speed(0), 0.9);
  EXPECT_DOUBLE_EQ(f.effective_speed(-1), 0.9);
}

TEST(SpeedFunctionArithmetic, SeveralSteps) {
  const SpeedFunction f({1.0, 0.5, 0.25}, {100, 300});
  EXPECT_DOUBLE_EQ(f.emulated_units(50), 50);
  EXPECT_DOUBLE_EQ(f.emulated_units(200), 100 + 100 / 0.5);
  EXPECT_DOUBLE_EQ(f.emulated_units(400), 100 + 200 / 0.5 + 100 / 0.25);
  EXPECT_TRUE(f.slows_down());
  EXPECT_FALSE(SpeedFunction({1.0, 1.0}, {100}).slows_down());
}

TEST(SpeedFunctionArithmetic, InvalidFunctionsAreRejected) {
  EXPECT_THROW(SpeedFunction({0.9}, {2000}), Error);
  EXPECT_THROW(SpeedFunction({0.9, 0.3}, {-1}), Error);
  EXPECT_THROW(SpeedFunction({0.9, 0.3, 0.2}, {20, 10}), Error);
  EXPECT_THROW(SpeedFunction({0.9, 1.3}, {20}), Error);
}

TEST(SpeedEmulatorFunctions, UseTheWorkUnitsOfThePartition) {
  double work = 1000.0;
  const auto functions = parse_speed_list("1.0,1.0@1000:0.2");
  const SpeedEmulator full = SpeedEmulator::for_rank(functions, 0, [&] { return work; });
  const SpeedEmulator cliff = SpeedEmulator::for_rank(functions, 1, [&] { return work; });
  EXPECT_FALSE(full.active());
  EXPECT_TRUE(cliff.active());  // slow beyond the cliff, even if not yet there
  EXPECT_EQ(cliff.speed(), 1.0);
  EXPECT_THAT(cliff.describe(), HasSubstr("1@1000:0.2"));
  EXPECT_FALSE(SpeedEmulator::for_rank(functions, 2, [&] { return work; }).active());
  // The delay of an iteration follows the partition: none up to the cliff,
  // (1000 + 5 * 500) / 1500 - 1 of the computation for 1500 rows.
  const double unit = 0.1 / 1000;
  EXPECT_DOUBLE_EQ(emulation_delay(0.1, unit * cliff.function().emulated_units(1000)), 0.0);
  EXPECT_NEAR(emulation_delay(0.15, unit * cliff.function().emulated_units(1500)),
              0.15 * (3500.0 / 1500 - 1), 1e-12);
}

TEST(SpeedEmulatorFunctions, ConstantSpeedsAreUnchanged) {
  const auto functions = parse_speed_list("1.0,0.5");
  const SpeedEmulator half = SpeedEmulator::for_rank(functions, 1, nullptr);
  EXPECT_TRUE(half.active());
  EXPECT_EQ(half.speed(), 0.5);
  for (double work : {0.0, 1.0, 1e6}) EXPECT_EQ(half.function().effective_speed(work), 0.5);
  EXPECT_EQ(half.describe(), "0.5");
}

}  // namespace
}  // namespace flexmpi
