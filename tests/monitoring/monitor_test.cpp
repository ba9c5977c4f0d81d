// Monitor's CPU time on short iterations: the thread CPU clock is read on
// one iteration of a stride (its cost kept to ~1 % of an iteration), and the
// others get their wall time x the CPU share the read ones measured. The
// interval's CPU time must still say whether the process computed or waited.
#include "monitoring/monitor.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "emulation/speed_emulator.hpp"
#include "monitoring/metric.hpp"
#include "profiling/comm_profile.hpp"
#include "util/clock.hpp"

namespace flexmpi {
namespace {

struct Monitored {
  CommProfile profile;
  std::unique_ptr<MetricBackend> metric =
      make_work_metric(MetricContext{.events = {}, .current_work = [] { return 1.0; }, .log = {}});
  Monitor monitor{*metric, profile, nullptr, 1000};

  // `iterations` iterations of `body`; returns the interval's record.
  template <class Body>
  ProcessInterval run(int iterations, Body body) {
    for (int i = 0; i < iterations; ++i) {
      monitor.begin({});
      body();
      std::vector<long long> counts;
      monitor.end(counts);
    }
    return monitor.take_interval();
  }
};

TEST(Monitor, ShortComputingIterationsReadAsComputing) {
  // 20 us of CPU time each: the clock is read on about one in six.
  Monitored m;
  const double cpu_start = cpu_seconds();
  const ProcessInterval interval = m.run(500, [] { burn_cpu(20e-6); });
  const double used = cpu_seconds() - cpu_start;
  EXPECT_EQ(interval.iterations, 500);
  // The estimate is within 25 % of the CPU the iterations really used.
  EXPECT_GT(interval.cpu, 0.75 * used);
  EXPECT_LT(interval.cpu, 1.25 * used);
}

TEST(Monitor, ShortWaitingIterationsReadAsWaiting) {
  // Iterations that sleep: CPU time far below their wall time.
  Monitored m;
  const ProcessInterval interval = m.run(200, [] { sleep_wait(30e-6); });
  EXPECT_GT(interval.wall, 200 * 30e-6);
  EXPECT_LT(interval.cpu, 0.5 * interval.wall);
}

TEST(Monitor, LongIterationsReadTheClockEveryTime) {
  // 2 ms iterations: every one is read, so a CPU-free one among them shows.
  Monitored m;
  int i = 0;
  const ProcessInterval interval = m.run(10, [&] {
    if (i++ % 2 == 0) {
      burn_cpu(2e-3);
    } else {
      sleep_wait(2e-3);
    }
  });
  EXPECT_GT(interval.cpu, 0.3 * interval.wall);
  EXPECT_LT(interval.cpu, 0.7 * interval.wall);
}

}  // namespace
}  // namespace flexmpi
