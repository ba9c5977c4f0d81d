// The balancer on a machine that other programs load: an outside load that
// slows every rank alike, and an interval in which the CPU-share correction
// could be made for some ranks and not for others.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "../support/interval_reports.hpp"
#include "balancing/load_balancer.hpp"

namespace flexmpi {
namespace {

using test::dedicated_report;
using test::situation;

/// A rank's interval on a loaded machine: it computed `rows` rows per
/// iteration for `computation` seconds of its `wall` seconds, waited in MPI
/// for the rest, and got 20 % of a core; `share_correction` as the monitor
/// found it (0: unknown).
struct LoadedRank {
  double rows;
  double computation;
  double wall;
  double share_correction;
};

IntervalReport loaded_report(const std::vector<LoadedRank>& ranks) {
  IntervalReport report;
  report.metric_name = "work";
  int rank = 0;
  for (const LoadedRank& r : ranks) {
    ProcessInterval p;
    p.rank = rank++;
    p.iterations = 10;
    p.wall = r.wall;
    p.mpi = r.wall - r.computation;
    p.cpu = 0.2 * r.wall;
    p.metric = r.rows * 10;
    p.share_correction = r.share_correction;
    report.processes.push_back(p);
  }
  return report;
}

// After a right move (rank 1 at half speed gets a third), the machine gets
// busier and every iteration takes twice as long on both ranks: the blocks
// are still balanced, and the even ones would be slower still at these
// speeds. The move stays; undoing it on the longer wall time alone went back
// to the even blocks, and the next window moved again, over and over.
TEST(LoadBalancerSharedMachine, AnOutsideLoadOnEveryRankDoesNotUndoAMove) {
  LoadBalancer balancer(Config{});
  const Decomposition even_blocks = {{500, 0}, {500, 500}};
  const auto slow = dedicated_report({{500, 1.0}, {500, 2.0}});
  balancer.evaluate(slow, situation(even_blocks), {});
  const Decomposition moved = balancer.evaluate(slow, situation(even_blocks), {}).after;
  ASSERT_EQ(moved, (Decomposition{{667, 0}, {333, 667}}));
  const auto busier = dedicated_report({{667, 2.668}, {333, 2.664}});
  bool judged = false;
  for (int interval = 0; interval < 5; ++interval) {
    const BalanceDecision d = balancer.evaluate(busier, situation(moved), {});
    EXPECT_FALSE(d.undo);
    EXPECT_FALSE(d.changed);
    if (d.move_outcome) {
      judged = true;
      EXPECT_GT(d.move_outcome->measured_seconds, d.move_outcome->before_seconds);
    }
  }
  EXPECT_TRUE(judged);
}

// Rank 1 runs at half the speed of rank 0. Both wait most of the interval on
// a loaded machine; the monitor could scale rank 0's computation by its CPU
// share (x5) but not rank 1's. Compared as they come, rank 1 looks 2.5 times
// faster and gets more rows; in the report as the interval exchange
// completes it (make_times_comparable), both uncorrected, it gets a third.
TEST(LoadBalancerSharedMachine, TimesCorrectedOnSomeRanksOnlyAreComparedUncorrected) {
  LoadBalancer balancer(Config{});
  const Decomposition even_blocks = {{500, 0}, {500, 500}};
  IntervalReport mixed = loaded_report({{500, 0.5, 10.0, 5.0}, {500, 1.0, 10.0, 0.0}});
  mixed.make_times_comparable(Config{}.dedicated_threshold);
  std::optional<Decomposition> moved;
  for (int interval = 0; interval < 6 && !moved; ++interval) {
    const BalanceDecision d = balancer.evaluate(mixed, situation(even_blocks), {});
    if (d.changed) moved = d.after;
  }
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(*moved, (Decomposition{{667, 0}, {333, 667}}));
}

}  // namespace
}  // namespace flexmpi
