#include <gtest/gtest.h>

#include "balancing/load_balancer.hpp"

namespace flexmpi {
namespace {

// An interval where each process computed `rows` rows per iteration for
// `seconds` of dedicated computation over 10 iterations.
IntervalReport report(const std::vector<std::pair<double, double>>& rows_and_seconds) {
  IntervalReport r;
  r.metric_name = "work";
  int rank = 0;
  for (const auto& [rows, seconds] : rows_and_seconds) {
    ProcessInterval p;
    p.rank = rank++;
    p.iterations = 10;
    p.wall = p.cpu = seconds;
    p.metric = rows * 10;
    r.processes.push_back(p);
  }
  return r;
}

TEST(LoadBalancer, HalfSpeedProcessGetsAThird) {
  Config config;
  LoadBalancer balancer(config);
  const Decomposition current = {{500, 0}, {500, 500}};
  const BalanceDecision decision = balancer.evaluate(report({{500, 1.0}, {500, 2.0}}), current, 1000, {}, true);
  EXPECT_TRUE(decision.changed);
  EXPECT_EQ(decision.after, (Decomposition{{667, 0}, {333, 667}}));
  EXPECT_EQ(decision.to_json()["decision"], "rebalance");
  EXPECT_EQ(decision.to_json()["partition"], nlohmann::json({667, 333}));
}

TEST(LoadBalancer, BalancedRunMovesNothing) {
  Config config;
  LoadBalancer balancer(config);
  const Decomposition current = {{667, 0}, {333, 667}};
  const BalanceDecision decision = balancer.evaluate(report({{667, 1.0}, {333, 1.0}}), current, 1000, {}, true);
  EXPECT_FALSE(decision.changed);
  EXPECT_EQ(decision.after, current);
  EXPECT_EQ(decision.to_json()["decision"], "none");
}

TEST(LoadBalancer, NoRebalanceWhenNotAllowed) {
  Config config;
  LoadBalancer balancer(config);
  const Decomposition current = {{500, 0}, {500, 500}};
  const BalanceDecision decision =
      balancer.evaluate(report({{500, 1.0}, {500, 2.0}}), current, 1000, {}, false);
  EXPECT_TRUE(decision.verdict.rebalance);
  EXPECT_FALSE(decision.changed);
}

}  // namespace
}  // namespace flexmpi
