// The new partitioners are in the registry, selectable with
// FLEXMPI_PARTITIONER, and their history is reset with the load balancer's.
#include <gtest/gtest.h>

#include <string>

#include "../support/interval_reports.hpp"
#include "balancing/fpm/fpm_partitioner.hpp"
#include "balancing/load_balancer.hpp"
#include "core/settings.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

TEST(PartitionerRegistry, KnowsTheNewPartitioners) {
  for (const char* name : {"rcp", "ull", "fpm-akima", "fpm-geometric", "drum"}) {
    EXPECT_EQ(make_partitioner(name, Config{})->name(), name);
    const auto lookup = [&](const char* variable) -> const char* {
      return std::string(variable) == "FLEXMPI_PARTITIONER" ? name : nullptr;
    };
    EXPECT_EQ(load_config(lookup, {"FLEXMPI_PARTITIONER"}).partitioner, name);
  }
  // An unregistered name is refused.
  const auto unknown = [](const char* variable) -> const char* {
    return std::string(variable) == "FLEXMPI_PARTITIONER" ? "zoltan" : nullptr;
  };
  EXPECT_THROW(load_config(unknown, {"FLEXMPI_PARTITIONER"}), Error);
}

using test::dedicated_report;

TEST(LoadBalancerWithFpm, PassesIterationsAndResetsTheHistory) {
  Config config = test::thesis_balancing();
  config.partitioner = "fpm-akima";
  LoadBalancer balancer(config);
  const Decomposition current = {{500, 0}, {500, 500}};
  const BalanceDecision decision =
      balancer.evaluate(dedicated_report({{500, 1.0}, {500, 2.0}}), test::situation(current), {});
  EXPECT_TRUE(decision.changed);
  EXPECT_EQ(decision.after, (Decomposition{{667, 0}, {333, 667}}));
  const auto& fpm = dynamic_cast<const FpmPartitioner&>(balancer.partitioner());
  ASSERT_EQ(fpm.history().processes(), 2u);
  // Speed = rows / (seconds / iterations).
  EXPECT_DOUBLE_EQ(fpm.history().points(1).front().speed, 500 / 0.2);
  balancer.reset_history();
  EXPECT_EQ(fpm.history().processes(), 0u);
}

TEST(LoadBalancerWithFpm, DegenerateTimesAreTracedAsFallback) {
  Config config = test::thesis_balancing();
  config.partitioner = "fpm-geometric";
  LoadBalancer balancer(config);
  const Decomposition current = {{500, 0}, {500, 500}};
  const BalanceDecision decision =
      balancer.evaluate(dedicated_report({{500, 0.0}, {500, 2.0}}), test::situation(current), {});
  EXPECT_FALSE(decision.changed);
  EXPECT_NE(decision.to_json().value("fallback", "").find("fpm-geometric"), std::string::npos)
      << decision.to_json().dump();
}

}  // namespace
}  // namespace flexmpi
