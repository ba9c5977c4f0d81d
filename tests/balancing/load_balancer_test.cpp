#include "balancing/load_balancer.hpp"

#include <gtest/gtest.h>

#include "../support/interval_reports.hpp"

namespace flexmpi {
namespace {

using test::dedicated_report;

TEST(LoadBalancer, HalfSpeedProcessGetsAThird) {
  Config config;
  LoadBalancer balancer(config);
  const Decomposition current = {{500, 0}, {500, 500}};
  const BalanceDecision decision =
      balancer.evaluate(dedicated_report({{500, 1.0}, {500, 2.0}}), current, 1000, {}, true);
  EXPECT_TRUE(decision.changed);
  EXPECT_EQ(decision.after, (Decomposition{{667, 0}, {333, 667}}));
  EXPECT_EQ(decision.to_json()["decision"], "rebalance");
  EXPECT_EQ(decision.to_json()["partition"], nlohmann::json({667, 333}));
}

TEST(LoadBalancer, BalancedRunMovesNothing) {
  Config config;
  LoadBalancer balancer(config);
  const Decomposition current = {{667, 0}, {333, 667}};
  const BalanceDecision decision =
      balancer.evaluate(dedicated_report({{667, 1.0}, {333, 1.0}}), current, 1000, {}, true);
  EXPECT_FALSE(decision.changed);
  EXPECT_EQ(decision.after, current);
  EXPECT_EQ(decision.to_json()["decision"], "none");
}

TEST(LoadBalancer, NoRebalanceWhenNotAllowed) {
  Config config;
  LoadBalancer balancer(config);
  const Decomposition current = {{500, 0}, {500, 500}};
  const BalanceDecision decision =
      balancer.evaluate(dedicated_report({{500, 1.0}, {500, 2.0}}), current, 1000, {}, false);
  EXPECT_TRUE(decision.verdict.rebalance);
  EXPECT_FALSE(decision.changed);
}

}  // namespace
}  // namespace flexmpi
