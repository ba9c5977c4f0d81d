// Metric backends: the work metric counts work units; an
// explicit PAPI request either really counts or fails, never fakes counts;
// "auto" falls back to work, and says so, where counters are missing.
// Written to pass both here (0 hardware counters) and on a machine with them.
#include "monitoring/metric.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Context {
  double work = 0.0;
  std::vector<std::string> logged;

  MetricContext make() {
    MetricContext context;
    context.current_work = [this] { return work; };
    context.log = [this](const std::string& message) { logged.push_back(message); };
    return context;
  }
};

std::vector<long long> count_one(MetricBackend& metric) {
  std::vector<long long> counts(metric.events().size(), -1);
  metric.start();
  metric.stop(counts);
  return counts;
}

// Floating point work the compiler cannot remove.
double flop_loop() {
  volatile double x = 1.0;
  for (int i = 0; i < 2'000'000; ++i) x = x * 0.9999999 + 1e-7;
  return x;
}

// Whether an explicit papi request works on this machine; nullptr if not.
std::unique_ptr<MetricBackend> try_papi(const std::string& setting, Context& ctx) {
  try {
    return make_metric(setting, ctx.make());
  } catch (const Error& e) {
    EXPECT_THAT(e.code(), AnyOf(Errc::event_unavailable, Errc::unsupported)) << e.what();
    EXPECT_STRNE(e.what(), "");
    return nullptr;
  }
}

TEST(WorkMetric, CountsTheCurrentWork) {
  Context ctx;
  ctx.work = 1234;
  const auto metric = make_metric("work", ctx.make());
  ASSERT_NE(metric, nullptr);
  EXPECT_EQ(metric->name(), "work");
  EXPECT_THAT(metric->events(), ElementsAre("WORK"));
  EXPECT_THAT(count_one(*metric), ElementsAre(1234));
  ctx.work = 77;  // read at every iteration, not once
  EXPECT_THAT(count_one(*metric), ElementsAre(77));
  ctx.work = 0;
  EXPECT_THAT(count_one(*metric), ElementsAre(0));
  EXPECT_TRUE(ctx.logged.empty());
}

TEST(WorkMetric, RequireAcceptsWorkOnly) {
  Context ctx;
  const auto metric = make_metric("work", ctx.make());
  EXPECT_EQ(metric->require("WORK"), 0u);
  try {
    metric->require("PAPI_L1_DCM");
    ADD_FAILURE() << "a work metric must not pretend to count PAPI_L1_DCM";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::event_unavailable);
    EXPECT_THAT(e.what(), HasSubstr("PAPI_L1_DCM"));
  }
  EXPECT_THAT(metric->events(), ElementsAre("WORK"));  // a failed require changes nothing
}

TEST(MetricRegistry, WorkIsAlwaysRegisteredWithHelp) {
  bool work = false;
  for (const MetricDescriptor& d : metric_backends()) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_FALSE(d.help.empty());
    EXPECT_TRUE(static_cast<bool>(d.create));
    work = work || d.name == "work";
  }
  EXPECT_TRUE(work);
}

TEST(PapiMetric, ExplicitRequestCountsOrFailsButNeverFakes) {
  Context ctx;
  ctx.work = 1000;  // a faked backend would likely report this
  const auto metric = try_papi("papi:PAPI_FP_OPS", ctx);
  if (metric == nullptr) return;  // no counters here: the failure was checked in try_papi
  EXPECT_EQ(metric->name(), "papi");
  ASSERT_FALSE(metric->events().empty());
  EXPECT_EQ(metric->events().front(), "PAPI_FP_OPS");
  std::vector<long long> counts(metric->events().size(), 0);
  metric->start();
  flop_loop();
  metric->stop(counts);
  EXPECT_GT(counts[0], 0);
}

TEST(PapiMetric, UnknownEventIsRefused) {
  Context ctx;
  EXPECT_EQ(try_papi("papi:NO_SUCH_EVENT_FLEXMPI", ctx), nullptr);
}

TEST(PapiMetric, RefusalNamesTheSettingAndItsValue) {
  Context ctx;
  try {
    make_metric("papi:FLEXMPI_NO_SUCH_EVENT", ctx.make());
    ADD_FAILURE() << "no machine has this event";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("FLEXMPI_METRIC='papi:FLEXMPI_NO_SUCH_EVENT'"));
  }
}

TEST(AutoMetric, FallsBackToWorkAndLogsWhereCountersAreMissing) {
  Context papi_ctx;
  const bool counters = try_papi("papi:PAPI_FP_OPS", papi_ctx) != nullptr;

  Context ctx;
  ctx.work = 42;
  const auto metric = make_metric("auto", ctx.make());
  ASSERT_NE(metric, nullptr);
  if (counters) {
    EXPECT_EQ(metric->name(), "papi");
    EXPECT_EQ(metric->events().front(), "PAPI_FP_OPS");
    return;
  }
  EXPECT_EQ(metric->name(), "work");
  EXPECT_THAT(metric->events(), ElementsAre("WORK"));
  EXPECT_THAT(count_one(*metric), ElementsAre(42));
  // The library says which metric it uses.
  ASSERT_EQ(ctx.logged.size(), 1u);
  EXPECT_THAT(ctx.logged[0], HasSubstr("work"));
}

TEST(MetricRegistry, UnknownBackendIsRefusedWithTheKnownOnes) {
  Context ctx;
  try {
    make_metric("flops", ctx.make());
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_THAT(e.what(), HasSubstr("'flops'"));
    for (const MetricDescriptor& backend : metric_backends()) {
      EXPECT_THAT(e.what(), HasSubstr(std::string(backend.name)));
    }
  }
}

}  // namespace
}  // namespace flexmpi
