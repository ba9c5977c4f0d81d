#include "balancing/load_balancer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../support/interval_reports.hpp"
#include "balancing/fpm/fpm_partitioner.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

using test::dedicated_report;
using test::situation;

TEST(LoadBalancer, HalfSpeedProcessGetsAThird) {
  LoadBalancer balancer(test::thesis_balancing());
  const BalanceDecision decision =
      balancer.evaluate(dedicated_report({{500, 1.0}, {500, 2.0}}),
                        situation({{500, 0}, {500, 500}}), RedistributionCost{});
  EXPECT_TRUE(decision.changed);
  EXPECT_EQ(decision.after, (Decomposition{{667, 0}, {333, 667}}));
  EXPECT_EQ(decision.to_json()["decision"], "rebalance");
  EXPECT_EQ(decision.to_json()["partition"], nlohmann::json({667, 333}));
}

TEST(LoadBalancer, BalancedRunMovesNothing) {
  LoadBalancer balancer(Config{});
  const Decomposition current = {{667, 0}, {333, 667}};
  for (int interval = 0; interval < 3; ++interval) {
    const BalanceDecision decision = balancer.evaluate(dedicated_report({{667, 1.0}, {333, 1.0}}),
                                                       situation(current), RedistributionCost{});
    EXPECT_FALSE(decision.changed);
    EXPECT_EQ(decision.after, current);
    EXPECT_EQ(decision.to_json()["decision"], "none");
    EXPECT_FALSE(decision.awaiting_confirmation());
  }
}

TEST(LoadBalancer, NoRebalanceWithoutIterationsLeft) {
  LoadBalancer balancer(test::thesis_balancing());
  const BalanceDecision decision =
      balancer.evaluate(dedicated_report({{500, 1.0}, {500, 2.0}}),
                        situation({{500, 0}, {500, 500}}, 0), RedistributionCost{});
  EXPECT_TRUE(decision.verdict.rebalance);
  EXPECT_FALSE(decision.changed);
  EXPECT_EQ(decision.to_json()["held"], "no iteration left to use a new partition");
  EXPECT_FALSE(decision.awaiting_confirmation());  // held for another reason: judged
}

// Hysteresis: with the default lb_confirm = 2, one unbalanced interval moves nothing.
TEST(LoadBalancer, OneDisturbedIntervalMovesNothing) {
  LoadBalancer balancer(Config{});
  const Decomposition current = {{500, 0}, {500, 500}};
  const auto even = dedicated_report({{500, 1.0}, {500, 1.0}});
  const auto disturbed = dedicated_report({{500, 1.0}, {500, 1.6}});
  for (const auto& report : {even, disturbed, even, disturbed, even}) {
    const BalanceDecision decision = balancer.evaluate(report, situation(current), {});
    EXPECT_FALSE(decision.changed);
    if (&report == &disturbed) {
      EXPECT_EQ(decision.confirmations, 1);
    }
  }
}

TEST(LoadBalancer, APersistentImbalanceMovesOnTheSecondInterval) {
  LoadBalancer balancer(Config{});
  const Decomposition current = {{500, 0}, {500, 500}};
  const auto slow = dedicated_report({{500, 1.0}, {500, 2.0}});
  const BalanceDecision first = balancer.evaluate(slow, situation(current), {});
  EXPECT_FALSE(first.changed);
  EXPECT_TRUE(first.verdict.rebalance);
  EXPECT_EQ(first.to_json()["held"],
            "unbalanced in 1 of the 2 consecutive intervals a move needs (FLEXMPI_LB_CONFIRM)");
  EXPECT_TRUE(first.awaiting_confirmation());
  const BalanceDecision second = balancer.evaluate(slow, situation(current), {});
  EXPECT_TRUE(second.changed);
  EXPECT_FALSE(second.awaiting_confirmation());
  EXPECT_EQ(second.after, (Decomposition{{667, 0}, {333, 667}}));
}

TEST(LoadBalancer, SpeedsAreTheMeanOverTheConfirmingIntervals) {
  LoadBalancer balancer(Config{});
  const Decomposition current = {{500, 0}, {500, 500}};
  // Rank 1 takes 2.5 s, then 1.5 s: on average 2 s, half the speed of rank 0.
  balancer.evaluate(dedicated_report({{500, 1.0}, {500, 2.5}}), situation(current), {});
  const BalanceDecision decision =
      balancer.evaluate(dedicated_report({{500, 1.0}, {500, 1.5}}), situation(current), {});
  ASSERT_TRUE(decision.changed);
  EXPECT_EQ(decision.after, (Decomposition{{667, 0}, {333, 667}}));
}

// The weight model on a growing workload (EpiGraph's epidemic): rank 1's
// work doubles every interval, at the speed of rank 0. Its latest work must
// be timed at its speed, not by the median of its earlier, shorter intervals
// (which made it look 1.5 times faster and gave it 57 % of the rows' weight).
TEST(LoadBalancer, AGrowingWorkloadIsTimedAtItsLatestSize) {
  LoadBalancer balancer(Config{});  // confirm 2, window 5
  const Decomposition current = {{500, 0}, {500, 500}};
  LoadBalancer::Situation weighted = situation(current);
  weighted.row_work.assign(1000, 1.0);
  for (int row = 500; row < 1000; ++row) weighted.row_work[row] = 4.0;  // rank 1's rows now
  // (work per iteration / 10, seconds): rank 1 does 2x, then 4x rank 0's work.
  balancer.evaluate(dedicated_report({{500, 1.0}, {1000, 2.0}}), weighted, {});
  const BalanceDecision decision =
      balancer.evaluate(dedicated_report({{500, 1.0}, {2000, 4.0}}), weighted, {});
  ASSERT_TRUE(decision.changed);
  // Equal speeds: equal shares of the 2,500 units of weight, 1,250 each:
  // rank 0 takes its 500 rows of 1 and 187 or 188 rows of 4.
  EXPECT_NEAR(static_cast<double>(decision.after[0].count), 687.5, 1.0);
}

TEST(LoadBalancer, AJustBalancedPartitionIsNotMovedBackByOneInterval) {
  LoadBalancer balancer(Config{});
  const auto slow = dedicated_report({{500, 1.0}, {500, 2.0}});
  balancer.evaluate(slow, situation({{500, 0}, {500, 500}}), {});
  const Decomposition balanced =
      balancer.evaluate(slow, situation({{500, 0}, {500, 500}}), {}).after;
  ASSERT_EQ(balanced, (Decomposition{{667, 0}, {333, 667}}));
  // The first interval on the new blocks: rank 0 is slow on its new rows.
  const BalanceDecision after_move =
      balancer.evaluate(dedicated_report({{667, 1.8}, {333, 1.0}}), situation(balanced), {});
  EXPECT_TRUE(after_move.verdict.unbalanced);
  EXPECT_FALSE(after_move.changed);
  // Two such intervals are not enough either: after a move the majority of a
  // full window (3 of 5) must agree.
  const BalanceDecision second =
      balancer.evaluate(dedicated_report({{667, 1.8}, {333, 1.0}}), situation(balanced), {});
  EXPECT_FALSE(second.changed);
  EXPECT_EQ(second.confirmations_needed, 3);
  // The third judges the move: it delivered 30 % of its predicted gain
  // (0.2 s to 0.18 s per iteration, 0.133 predicted), so the balancer backs
  // off (do no harm) and a move now needs 6 unbalanced intervals.
  const BalanceDecision third =
      balancer.evaluate(dedicated_report({{667, 1.8}, {333, 1.0}}), situation(balanced), {});
  EXPECT_FALSE(third.changed);
  ASSERT_TRUE(third.move_outcome.has_value());
  EXPECT_NEAR(third.move_outcome->delivered(), 0.3, 0.01);
  EXPECT_EQ(third.backoff, 1);
  // The blocks before the move would be slower here, the proposed ones slower
  // in the state before it: summed over both, the move does not pay, and the
  // blocks stay until a window of steady speeds lowers the level; then the
  // lasting change is followed.
  int followed_at = 0;
  for (int interval = 4; interval <= 16 && followed_at == 0; ++interval) {
    const BalanceDecision d =
        balancer.evaluate(dedicated_report({{667, 1.8}, {333, 1.0}}), situation(balanced), {});
    if (d.changed) followed_at = interval;
    if (interval == 6) {
      EXPECT_NE(d.held.find("the load before the last change and now"), std::string::npos)
          << d.held;
    }
  }
  EXPECT_EQ(followed_at, 9);  // steady from interval 5 (the window full), 5 of them
}

TEST(LoadBalancer, ABurstShorterThanHalfTheWindowIsIgnored) {
  LoadBalancer balancer(Config{});  // confirm 2, window 5
  const Decomposition current = {{500, 0}, {500, 500}};
  const auto even = dedicated_report({{500, 1.0}, {500, 1.0}});
  const auto slow = dedicated_report({{500, 1.0}, {500, 2.0}});
  for (int interval = 0; interval < 3; ++interval) balancer.evaluate(even, situation(current), {});
  EXPECT_FALSE(balancer.evaluate(slow, situation(current), {}).changed);
  const BalanceDecision second = balancer.evaluate(slow, situation(current), {});
  EXPECT_FALSE(second.changed);  // 2 of 5: the medians are still balanced
  EXPECT_EQ(second.confirmations, 2);
  EXPECT_NE(second.held.find("median times of the last 5 intervals"), std::string::npos)
      << second.held;
  // A third slow interval: a long-term change, now the median.
  const BalanceDecision third = balancer.evaluate(slow, situation(current), {});
  EXPECT_TRUE(third.changed);
  EXPECT_EQ(third.after, (Decomposition{{667, 0}, {333, 667}}));
}

// Gain against cost: the same imbalance moves with many iterations left and
// stays with few.
TEST(LoadBalancer, MovesOnlyWhenTheGainExceedsTheCost) {
  Config config;
  config.lb_confirm = 1;
  LoadBalancer balancer(config);
  // 1 s per 10 iterations on rank 0, 2 s on rank 1: an iteration takes 0.2 s,
  // balanced 0.1333 s, so each remaining iteration gains 0.0667 s. Rank 1
  // sends 167 rows of 16 KiB to rank 0: ~0.1 ms + 2.7 MB x 1 ns = ~2.8 ms.
  const auto slow = dedicated_report({{500, 1.0}, {500, 2.0}});
  const BalanceDecision few =
      balancer.evaluate(slow, situation({{500, 0}, {500, 500}}, /*remaining=*/0 + 1), {});
  ASSERT_TRUE(few.assessment.has_value());
  EXPECT_NEAR(few.assessment->gain_seconds, 0.2 - 0.13333, 1e-3);
  EXPECT_NEAR(few.assessment->bytes, 167 * 16384.0, 1.0);
  EXPECT_TRUE(few.changed);  // 0.067 s > 2 x 2.8 ms

  RedistributionCost expensive;
  expensive.observe(167 * 16384.0, 1.0);  // a slow network: 1 s for the move
  LoadBalancer again(config);             // the same imbalance, a new run
  const BalanceDecision refused =
      again.evaluate(slow, situation({{500, 0}, {500, 500}}, 5), expensive);
  ASSERT_TRUE(refused.assessment.has_value());
  EXPECT_FALSE(refused.changed);
  EXPECT_FALSE(refused.assessment->pays);
  EXPECT_EQ(refused.to_json()["held"], "the move does not pay (FLEXMPI_LB_MARGIN)");
  const BalanceDecision accepted =
      again.evaluate(slow, situation({{500, 0}, {500, 500}}, 1000), expensive);
  EXPECT_TRUE(accepted.changed);
}

// Settled imbalance (FLEXMPI_LB_REFINE): rank 1 is 10.7 % slower than its
// share, under the 15 % threshold, in every interval of a full window.
TEST(LoadBalancer, ASettledImbalanceIsRefinedOnceAFullWindowShowsIt) {
  LoadBalancer balancer(Config{});  // window 5, refine 0.08, threshold 0.15
  const Decomposition current = {{600, 0}, {400, 600}};
  const auto settled = dedicated_report({{600, 1.0}, {400, 1.12}});
  for (int interval = 0; interval < 4; ++interval) {
    const BalanceDecision decision = balancer.evaluate(settled, situation(current), {});
    EXPECT_FALSE(decision.changed) << "interval " << interval;
    EXPECT_FALSE(decision.verdict.rebalance);
    EXPECT_EQ(decision.to_json()["decision"], "none");
  }
  const BalanceDecision fifth = balancer.evaluate(settled, situation(current), {});
  ASSERT_TRUE(fifth.changed);
  EXPECT_TRUE(fifth.settled);
  EXPECT_EQ(fifth.to_json()["settled_imbalance"], true);
  // Speeds 600 and 357 rows/s: 627 and 373 rows.
  EXPECT_EQ(fifth.after, (Decomposition{{627, 0}, {373, 627}}));
  // On the new blocks the evidence starts again: no second move before a new full window.
  const auto balanced = dedicated_report({{627, 1.0}, {373, 1.0}});
  for (int interval = 0; interval < 8; ++interval) {
    EXPECT_FALSE(balancer.evaluate(balanced, situation(fifth.after), {}).changed);
  }
}

// One refinement per move of Alg. 5: a settled imbalance after a refinement
// stays until Alg. 5 itself moves (above the threshold), which re-arms it.
TEST(LoadBalancer, ARefinementIsNotRefinedAgain) {
  LoadBalancer balancer(Config{});
  Decomposition current = {{600, 0}, {400, 600}};
  const auto settled = dedicated_report({{600, 1.0}, {400, 1.12}});
  for (int interval = 0; interval < 5; ++interval) {
    const BalanceDecision decision = balancer.evaluate(settled, situation(current), {});
    if (decision.changed) current = decision.after;
  }
  ASSERT_EQ(current, (Decomposition{{627, 0}, {373, 627}}));
  const auto drifted = dedicated_report({{627, 1.12}, {373, 1.0}});  // the other way, 10.7 %
  for (int interval = 0; interval < 10; ++interval) {
    EXPECT_FALSE(balancer.evaluate(drifted, situation(current), {}).changed);
  }
  // A lasting change above the threshold moves (3 of a window after a move)
  // and re-arms the refinement.
  const auto slow = dedicated_report({{627, 1.0}, {373, 2.0}});
  BalanceDecision moved;
  for (int interval = 0; interval < 3; ++interval) {
    moved = balancer.evaluate(slow, situation(current), {});
  }
  ASSERT_TRUE(moved.changed);
  EXPECT_FALSE(moved.settled);
  current = moved.after;
  const auto after = dedicated_report({{static_cast<double>(current[0].count), 1.0},
                                       {static_cast<double>(current[1].count), 1.12}});
  BalanceDecision refined;
  for (int interval = 0; interval < 5; ++interval) {
    refined = balancer.evaluate(after, situation(current), {});
  }
  EXPECT_TRUE(refined.changed);
  EXPECT_TRUE(refined.settled);
}

// A window with a shared (preempted) interval is not refined on.
TEST(LoadBalancer, AWindowWithASharedIntervalIsNotRefined) {
  LoadBalancer balancer(Config{});
  const Decomposition current = {{600, 0}, {400, 600}};
  const auto settled = dedicated_report({{600, 1.0}, {400, 1.12}});
  auto preempted = settled;
  preempted.processes[1].cpu = 0.9 * preempted.processes[1].wall;  // 10 % of the PE not ours
  for (const auto& report : {settled, settled, preempted, settled, settled}) {
    EXPECT_FALSE(balancer.evaluate(report, situation(current), {}).changed);
  }
  // Once the shared interval has left the window, the refinement comes.
  EXPECT_TRUE(balancer.evaluate(settled, situation(current), {}).changed == false);
  EXPECT_TRUE(balancer.evaluate(settled, situation(current), {}).changed == false);
  EXPECT_TRUE(balancer.evaluate(settled, situation(current), {}).changed);
}

TEST(LoadBalancer, AnImbalanceUnderTheRefinementThresholdStays) {
  LoadBalancer balancer(Config{});
  const Decomposition current = {{500, 0}, {500, 500}};
  const auto close = dedicated_report({{500, 1.0}, {500, 1.06}});  // 5.7 %
  for (int interval = 0; interval < 12; ++interval) {
    const BalanceDecision decision = balancer.evaluate(close, situation(current), {});
    EXPECT_FALSE(decision.changed);
    EXPECT_FALSE(decision.settled);
    EXPECT_FALSE(decision.to_json().contains("settled_imbalance"));
  }
}

TEST(LoadBalancer, OneSlowIntervalInAFullWindowRefinesNothing) {
  LoadBalancer balancer(Config{});
  const Decomposition current = {{500, 0}, {500, 500}};
  const auto even = dedicated_report({{500, 1.0}, {500, 1.0}});
  const auto slower = dedicated_report({{500, 1.0}, {500, 1.12}});
  for (const auto& report : {even, even, slower, even, even, slower, even, even}) {
    EXPECT_FALSE(balancer.evaluate(report, situation(current), {}).changed);
  }
}

TEST(LoadBalancer, RefinementOffIsThesisAlgorithm5) {
  Config config;
  config.lb_refine = 0.0;
  LoadBalancer balancer(config);
  const Decomposition current = {{600, 0}, {400, 600}};
  const auto settled = dedicated_report({{600, 1.0}, {400, 1.12}});
  for (int interval = 0; interval < 12; ++interval) {
    EXPECT_FALSE(balancer.evaluate(settled, situation(current), {}).changed);
  }
}

TEST(LoadBalancer, ARefinementThatDoesNotPayIsNotMade) {
  LoadBalancer balancer(Config{});
  const Decomposition current = {{600, 0}, {400, 600}};
  const auto settled = dedicated_report({{600, 1.0}, {400, 1.12}});
  RedistributionCost expensive;
  expensive.observe(27 * 16384.0, 1.0);  // 1 s for the 27 rows the move needs
  BalanceDecision decision;
  for (int interval = 0; interval < 5; ++interval) {
    // 10 iterations left gain ~0.08 s: less than 2 x 1 s.
    decision = balancer.evaluate(settled, situation(current, /*remaining=*/10), expensive);
  }
  EXPECT_TRUE(decision.settled);
  ASSERT_TRUE(decision.assessment.has_value());
  EXPECT_FALSE(decision.changed);
  EXPECT_EQ(decision.to_json()["held"], "the move does not pay (FLEXMPI_LB_MARGIN)");
}

TEST(RebalanceModel, BusiestProcessBytesCountsOnlyRowsThatChangeOwner) {
  const Decomposition from = {{500, 0}, {500, 500}};
  EXPECT_EQ(busiest_process_bytes(from, from, 8.0), 0.0);
  // Rank 0 gains 167 rows that rank 1 loses: each moves 167 rows.
  EXPECT_EQ(busiest_process_bytes(from, {{667, 0}, {333, 667}}, 8.0), 167 * 8.0);
  // Three processes: the middle one sends to both sides.
  EXPECT_EQ(busiest_process_bytes({{300, 0}, {400, 300}, {300, 700}},
                                  {{400, 0}, {200, 400}, {400, 600}}, 1.0),
            200.0);
}

TEST(RebalanceModel, TheMeasuredCostReplacesTheDefaultPrice) {
  RedistributionCost cost;
  const double latency = RedistributionCost::kDefaultLatencySeconds;
  EXPECT_DOUBLE_EQ(cost.predict(1e6), latency + 1e6 * 1e-9);
  // 1 MB: the bytes are 10/11 of the prediction, and learn that share of the
  // measured 4 ns per byte; the handshake's 1/11 share learns little.
  cost.observe(1e6, latency + 4e-3);
  EXPECT_NEAR(cost.seconds_per_byte(), 1e-9 * std::pow(4.0, 10.0 / 11.0), 1e-15);
  EXPECT_GT(cost.latency_seconds(), latency);
  EXPECT_LT(cost.latency_seconds(), 2 * latency);
  const double per_byte = cost.seconds_per_byte();
  cost.observe(1e8, cost.latency_seconds() + 1e8 * 2e-9);  // later: half a step to 2 ns
  EXPECT_LT(cost.seconds_per_byte(), per_byte);
  EXPECT_GT(cost.seconds_per_byte(), 2e-9);
  cost.observe(0.0, 5.0);  // nothing moved: no information
  cost.observe(1e6, -1.0);
  EXPECT_EQ(cost.observations(), 2);
}

// A move of a few hundred bytes that took 4 ms (a busy machine: the
// handshake waited for a descheduled process) says the handshake is slow,
// not that bytes are: charged to the bytes, it would price a later megabyte
// at 1.5 s.
TEST(RebalanceModel, ATinyMoveTeachesTheHandshakeNotThePricePerByte) {
  RedistributionCost cost;
  cost.observe(432.0, 4e-3);
  EXPECT_GT(cost.latency_seconds(), 3e-3);
  EXPECT_LT(cost.seconds_per_byte(), 2e-9);
  EXPECT_LT(cost.predict(1e6), 6e-3);
  // A large move afterwards teaches the price per byte (half a step).
  const double per_byte = cost.seconds_per_byte();
  cost.observe(1e7, cost.latency_seconds() + 1e7 * 5e-9);
  EXPECT_GT(cost.seconds_per_byte(), 1.5 * per_byte);
  EXPECT_LT(cost.seconds_per_byte(), 5e-9);
}

// Equal processes on two hosts, host 1 behind a saturated link (c_n = 0):
// times are balanced, so only the drum partitioner's own target (the
// communication term, w_comm = 0.5) can move rows, and only after a full
// window; without the term nothing moves.
TEST(LoadBalancer, DrumsCommunicationTermMovesBalancedTimesAfterAWindow) {
  const auto run = [](double communication_weight) {
    Config config;  // confirm 2, window 5
    config.partitioner = "drum";
    config.strategy_settings.set("FLEXMPI_DRUM_COMM_WEIGHT", std::to_string(communication_weight),
                                 std::optional<double>(communication_weight));
    LoadBalancer balancer(config);
    IntervalReport report = test::dedicated_report({{500, 1.0}, {500, 1.0}});
    for (std::size_t p = 0; p < 2; ++p) {
      report.processes[p].host_id = static_cast<double>(p + 1);
      report.processes[p].node_communication_power = p == 0 ? 1e9 : 0.0;
    }
    std::vector<BalanceDecision> decisions;
    for (int interval = 0; interval < 5; ++interval) {
      decisions.push_back(balancer.evaluate(report, situation({{500, 0}, {500, 500}}), {}));
    }
    return decisions;
  };
  const std::vector<BalanceDecision> with_term = run(0.5);
  for (int interval = 0; interval < 4; ++interval) EXPECT_FALSE(with_term[interval].changed);
  ASSERT_TRUE(with_term[4].changed);
  EXPECT_EQ(with_term[4].after[1].count, 250);  // 0.5 x 0 + 0.5 x 1/2 of 1000 rows
  for (const BalanceDecision& decision : run(0.0)) EXPECT_FALSE(decision.changed);
}

TEST(RebalanceModel, StartsFromTheCalibratedPrice) {
  RedistributionCost cost(7e-5, 3e-10);  // a machine profile's "redistribution"
  EXPECT_DOUBLE_EQ(cost.predict(1e6), 7e-5 + 1e6 * 3e-10);
  cost.observe(1e8, 7e-5 + 1e8 * 2e-9);  // the run's own measurement moves it
  EXPECT_NEAR(cost.seconds_per_byte(), 2e-9, 1e-11);
  RedistributionCost unknown(0.0, 0.0);  // zero prices: the measurement sets them
  unknown.observe(1e6, 2e-3);
  EXPECT_NEAR(unknown.seconds_per_byte(), 2e-9, 1e-15);
  EXPECT_THROW(RedistributionCost(-1e-5, 1e-9), Error);
  EXPECT_THROW(RedistributionCost(1e-4, std::nan("")), Error);
}

TEST(RebalanceModel, NoGainNoMove) {
  RebalanceCase c;
  c.current = {{500, 0}, {500, 500}};
  c.proposed = {{400, 0}, {600, 400}};
  c.iteration_seconds = {0.1, 0.1};  // already balanced: the proposal would be slower
  c.current_work = {500, 500};
  c.proposed_work = {400, 600};
  c.remaining_iterations = 1'000'000;
  const RebalanceAssessment a = assess_rebalance(c, RedistributionCost{}, 0.0);
  EXPECT_LT(a.gain_seconds, 0.0);
  EXPECT_FALSE(a.pays);
}

// Do no harm: a move is judged on the blocks it made.
TEST(LoadBalancer, AMoveThatDeliversLeavesNoBackoff) {
  LoadBalancer balancer(Config{});
  Decomposition current = {{500, 0}, {500, 500}};
  const auto slow = dedicated_report({{500, 1.0}, {500, 2.0}});
  balancer.evaluate(slow, situation(current), {});
  const BalanceDecision move = balancer.evaluate(slow, situation(current), {});
  ASSERT_TRUE(move.changed);
  current = move.after;  // 667 : 333, both 1.333 s for 10 iterations now
  const auto even = dedicated_report({{667, 1.334}, {333, 1.332}});
  std::optional<MoveOutcome> outcome;
  for (int interval = 0; interval < 3; ++interval) {
    const BalanceDecision d = balancer.evaluate(even, situation(current), {});
    EXPECT_FALSE(d.changed);
    if (d.move_outcome) outcome = d.move_outcome;
    EXPECT_EQ(d.backoff, 0);
  }
  ASSERT_TRUE(outcome.has_value());  // judged after a window's majority (3 of 5)
  EXPECT_DOUBLE_EQ(outcome->before_seconds, 0.2);
  EXPECT_NEAR(outcome->predicted_seconds, 0.1333, 1e-3);
  EXPECT_NEAR(outcome->delivered(), 1.0, 0.02);
  EXPECT_EQ(outcome->to_json().at("delivered").get<double>(), outcome->delivered());
}

// The load moves to the other core as soon as the rows did: the move made the
// iterations slower, so it is undone at once, and the next move needs twice
// the confirmations and margin; a move that delivers brings the balancer back.
TEST(LoadBalancer, AMoveThatDoesHarmIsUndoneAndTheBalancerBacksOff) {
  LoadBalancer balancer(Config{});
  const Decomposition even_blocks = {{500, 0}, {500, 500}};
  Decomposition current = even_blocks;
  const auto slow = dedicated_report({{500, 1.0}, {500, 2.0}});
  balancer.evaluate(slow, situation(current), {});
  current = balancer.evaluate(slow, situation(current), {}).after;
  ASSERT_EQ(current, (Decomposition{{667, 0}, {333, 667}}));
  // Rank 0 is now the slow one: 667 rows at half speed, 2.668 s.
  const auto moved_load = dedicated_report({{667, 2.668}, {333, 0.666}});
  std::vector<BalanceDecision> decisions;
  for (int interval = 0; interval < 3; ++interval) {
    decisions.push_back(balancer.evaluate(moved_load, situation(current), {}));
  }
  EXPECT_FALSE(decisions[0].changed);
  EXPECT_FALSE(decisions[1].changed);
  const BalanceDecision& judged = decisions[2];
  ASSERT_TRUE(judged.move_outcome.has_value());
  EXPECT_DOUBLE_EQ(judged.move_outcome->before_seconds, 0.2);
  EXPECT_DOUBLE_EQ(judged.move_outcome->measured_seconds, 0.2668);
  EXPECT_LT(judged.move_outcome->delivered(), 0.0);  // slower than before the move
  EXPECT_EQ(judged.backoff, 1);
  ASSERT_TRUE(judged.changed);
  EXPECT_TRUE(judged.undo);
  EXPECT_EQ(judged.after, even_blocks);
  EXPECT_EQ(judged.to_json().at("undo"), true);
  EXPECT_EQ(judged.to_json().at("backoff"), 1);
  // Back on the even blocks the load stays on rank 0's core: a move now
  // needs 6 unbalanced intervals instead of 3.
  current = judged.after;
  const auto loaded_rank0 = dedicated_report({{500, 2.0}, {500, 1.0}});
  for (int interval = 0; interval < 5; ++interval) {
    const BalanceDecision d = balancer.evaluate(loaded_rank0, situation(current), {});
    EXPECT_FALSE(d.changed);
    EXPECT_EQ(d.confirmations_needed, 6);
    if (interval == 4) {
      EXPECT_NE(d.held.find("x2: backing off"), std::string::npos) << d.held;
    }
  }
  const BalanceDecision sixth = balancer.evaluate(loaded_rank0, situation(current), {});
  ASSERT_TRUE(sixth.changed);
  EXPECT_FALSE(sixth.undo);
  current = sixth.after;
  EXPECT_LT(current[0].count, 500);
  // That move delivers, which lowers the level again.
  const auto balanced = dedicated_report({{static_cast<double>(current[0].count), 1.34},
                                          {static_cast<double>(current[1].count), 1.33}});
  int backoff = -1;
  for (int interval = 0; interval < 3; ++interval) {
    const BalanceDecision d = balancer.evaluate(balanced, situation(current), {});
    EXPECT_FALSE(d.changed);
    backoff = d.backoff;
  }
  EXPECT_EQ(backoff, 0);
}

// A partitioner with a memory learns what the blocks it is taken back from
// measured: fpm-akima proposed the undone blocks again a few intervals later
// and they were undone again, in cycles (the memory-cliff test in CI).
TEST(LoadBalancer, TheBlocksOfAnUndoneMoveAreNotProposedAgain) {
  Config config;
  config.partitioner = "fpm-akima";
  LoadBalancer balancer(config);
  const Decomposition even_blocks = {{500, 0}, {500, 500}};
  Decomposition current = even_blocks;
  const auto slow = dedicated_report({{500, 1.0}, {500, 2.0}});
  balancer.evaluate(slow, situation(current), {});
  const Decomposition moved = balancer.evaluate(slow, situation(current), {}).after;
  ASSERT_NE(moved, even_blocks);
  // On the new blocks rank 0 turns out slower than its speed promised.
  const double rows0 = static_cast<double>(moved[0].count);
  const auto harmful = dedicated_report({{rows0, 2.6}, {1000 - rows0, 0.7}});
  BalanceDecision judged;
  for (int interval = 0; interval < 3; ++interval) {
    judged = balancer.evaluate(harmful, situation(moved), {});
  }
  ASSERT_TRUE(judged.undo);
  current = judged.after;
  ASSERT_EQ(current, even_blocks);
  const auto& fpm = dynamic_cast<const FpmPartitioner&>(balancer.partitioner());
  const std::vector<SpeedPoint> points = fpm.history().points(0);
  EXPECT_TRUE(std::any_of(points.begin(), points.end(),
                          [&](const SpeedPoint& point) { return point.size == rows0; }));
  // The even blocks measure as before; the next move (after the back-off's
  // confirmations) is not the one just undone.
  std::optional<Decomposition> next;
  for (int interval = 0; interval < 8 && !next; ++interval) {
    const BalanceDecision d = balancer.evaluate(slow, situation(current), {});
    if (d.changed) next = d.after;
  }
  ASSERT_TRUE(next.has_value());
  EXPECT_NE(*next, moved);
  EXPECT_LT((*next)[0].count, moved[0].count);
}

// A load that alternates between the cores: the first move (rank 1's core
// loaded) was right for that state; then the load moved to rank 0's core, the
// move delivered a third of its gain, and the balancer backs off. Following
// the new state would be right for it and wrong for the old one; summed over
// both, the blocks it has are better, and they stay.
TEST(LoadBalancer, AtABackoffLevelAMoveMustPayOverBothLoadStates) {
  LoadBalancer balancer(Config{});
  Decomposition current = {{500, 0}, {500, 500}};
  const auto rank1_loaded = dedicated_report({{500, 1.0}, {500, 2.0}});
  balancer.evaluate(rank1_loaded, situation(current), {});
  current = balancer.evaluate(rank1_loaded, situation(current), {}).after;
  ASSERT_EQ(current, (Decomposition{{667, 0}, {333, 667}}));
  // Rank 0's core loaded now: rank 0 at 3/4 of its speed, rank 1 at full speed.
  const auto rank0_loaded = dedicated_report({{667, 1.779}, {333, 0.666}});
  std::vector<BalanceDecision> decisions;
  for (int interval = 0; interval < 8; ++interval) {
    decisions.push_back(balancer.evaluate(rank0_loaded, situation(current), {}));
  }
  ASSERT_TRUE(decisions[2].move_outcome.has_value());
  EXPECT_LT(decisions[2].move_outcome->delivered(), 0.5);
  EXPECT_FALSE(decisions[2].undo);
  EXPECT_EQ(decisions[2].backoff, 1);
  for (const BalanceDecision& d : decisions) EXPECT_FALSE(d.changed);
  EXPECT_NE(decisions.back().held.find("the load before the last change and now"),
            std::string::npos)
      << decisions.back().held;
  // The same load state for good: a window of steady speeds lowers the level,
  // and the move follows.
  bool moved = false;
  for (int interval = 0; interval < 8 && !moved; ++interval) {
    const BalanceDecision d = balancer.evaluate(rank0_loaded, situation(current), {});
    if (d.changed) {
      moved = true;
      EXPECT_LT(d.after[0].count, 500);
    }
  }
  EXPECT_TRUE(moved);
}

TEST(LoadBalancer, AWindowOfSteadySpeedsUndoesABackoffLevel) {
  LoadBalancer balancer(Config{});
  Decomposition current = {{500, 0}, {500, 500}};
  const auto slow = dedicated_report({{500, 1.0}, {500, 2.0}});
  balancer.evaluate(slow, situation(current), {});
  current = balancer.evaluate(slow, situation(current), {}).after;
  // Moved load, but only 6 % apart: under the threshold, so nothing moves.
  const auto moved_load = dedicated_report({{667, 2.0}, {333, 1.88}});
  std::vector<int> levels;
  for (int interval = 0; interval < 12; ++interval) {
    const BalanceDecision d = balancer.evaluate(moved_load, situation(current), {});
    EXPECT_FALSE(d.changed);
    levels.push_back(d.backoff);
  }
  // Judged at the third interval (it gained nothing), then a full window of
  // steady intervals, counted from the fifth (the window full), lowers it.
  EXPECT_EQ(levels[2], 1);
  EXPECT_EQ(levels[7], 1);
  EXPECT_EQ(levels[8], 0);
}

}  // namespace
}  // namespace flexmpi
