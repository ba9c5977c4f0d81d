// The dynamic load balancing procedure of the FPM paper (sec. 4) offline:
// each decision measures the true speed of the current partition, adds it
// to the models and repartitions. A process whose speed falls beyond 1000
// rows (a memory cliff: the rows beyond run 5 times slower) makes the
// constant-speed models of rcp and ull oscillate, while the functional
// models converge (the paper: optimum by the 7th iteration).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <string>

#include "balancing/fpm/speed_history.hpp"
#include "balancing/partitioner.hpp"
#include "config/config.hpp"

namespace flexmpi {
namespace {

using TimeOf = std::function<double(double rows)>;  // seconds per iteration

// 1 us per row; beyond `cliff` rows each row costs `factor` times more.
TimeOf cliff(double cliff_rows, double factor) {
  return [=](double x) {
    return 1e-6 * (x <= cliff_rows ? x : cliff_rows + factor * (x - cliff_rows));
  };
}
TimeOf constant(double speed) {
  return [=](double x) { return 1e-6 * x / speed; };
}

struct Trajectory {
  std::vector<Decomposition> partitions;  // after each decision
  std::vector<double> imbalance;          // true imbalance of each partition
};

// `decisions` rounds of measure -> partition. noise: relative amplitude of a
// deterministic perturbation of the measured times.
Trajectory simulate(const std::string& name, const std::vector<TimeOf>& truth, std::int64_t rows,
                    int decisions, double noise = 0.0) {
  auto partitioner = make_partitioner(name, Config{});
  Decomposition current = block_decomposition(rows, static_cast<int>(truth.size()));
  Trajectory run;
  for (int d = 0; d < decisions; ++d) {
    PartitionInput input;
    input.global_size = rows;
    input.current = current;
    std::vector<double> times;
    for (std::size_t i = 0; i < truth.size(); ++i) {
      const double t = truth[i](static_cast<double>(current[i].count));
      times.push_back(t);
      const double wobble = noise * std::sin(12.9898 * (d + 1) + 78.233 * (i + 1));
      input.computation_time.push_back(10.0 * t * (1.0 + wobble));  // 10 iterations
      input.iterations.push_back(10.0);
      input.speed.push_back(current[i].count / (t * (1.0 + wobble)));
    }
    current = partitioner->partition(input).blocks;
    EXPECT_TRUE(covers_exactly(current, rows));
    std::vector<double> after;
    for (std::size_t i = 0; i < truth.size(); ++i)
      after.push_back(truth[i](static_cast<double>(current[i].count)));
    run.partitions.push_back(current);
    run.imbalance.push_back(relative_imbalance(after));
  }
  return run;
}

std::string trajectory(const Trajectory& run, std::size_t process) {
  std::string text;
  for (std::size_t d = 0; d < run.partitions.size(); ++d) {
    text += std::to_string(run.partitions[d][process].count) + " (" +
            std::to_string(static_cast<int>(100 * run.imbalance[d])) + "%) ";
  }
  return text;
}

// 3000 rows, process 1 with a cliff at 1000: balanced at 7000/6 = 1166.7 rows.
const std::vector<TimeOf> kTwo = {constant(1.0), cliff(1000, 5.0)};

TEST(DynamicBalancing, AkimaConvergesOnAMemoryCliffByTheSeventhDecision) {
  const Trajectory run = simulate("fpm-akima", kTwo, 3000, 12);
  SCOPED_TRACE(trajectory(run, 1));
  for (std::size_t d = 6; d < run.partitions.size(); ++d) {
    EXPECT_NEAR(run.partitions[d][1].count, 1167, 6) << "decision " << d + 1;
    EXPECT_LT(run.imbalance[d], 0.02) << "decision " << d + 1;
  }
}

TEST(DynamicBalancing, GeometricConvergesOnAMemoryCliff) {
  const Trajectory run = simulate("fpm-geometric", kTwo, 3000, 16);
  SCOPED_TRACE(trajectory(run, 1));
  for (std::size_t d = 11; d < run.partitions.size(); ++d) {
    EXPECT_NEAR(run.partitions[d][1].count, 1167, 15) << "decision " << d + 1;
  }
}

TEST(DynamicBalancing, ConstantModelsOscillateOnAMemoryCliff) {
  for (const char* name : {"rcp", "ull"}) {
    const Trajectory run = simulate(name, kTwo, 3000, 12);
    SCOPED_TRACE(std::string(name) + ": " + trajectory(run, 1));
    // Between 900 rows (measured beyond the cliff: slow) and 1500 (measured
    // below it: fast), never near the balanced 1167.
    for (std::size_t d = 2; d < run.partitions.size(); ++d) {
      EXPECT_GT(std::abs(run.partitions[d][1].count - 1167), 200) << "decision " << d + 1;
      EXPECT_GT(run.imbalance[d], 0.3) << "decision " << d + 1;
    }
  }
}

TEST(DynamicBalancing, AkimaOnFourProcessesWithTwoCliffsAndNoise) {
  // Like the paper's cluster 2: two processes with little memory.
  const std::vector<TimeOf> four = {constant(1.0), cliff(2000, 4.0), constant(0.7),
                                    cliff(1500, 6.0)};
  const Trajectory run = simulate("fpm-akima", four, 12000, 14, 0.02);
  SCOPED_TRACE(trajectory(run, 1) + " / " + trajectory(run, 3));
  for (std::size_t d = 9; d < run.partitions.size(); ++d) {
    EXPECT_LT(run.imbalance[d], 0.08) << "decision " << d + 1;  // 2% noise on every measurement
  }
}

TEST(DynamicBalancing, ConstantSpeedsAreBalancedAtTheFirstDecision) {
  const std::vector<TimeOf> speeds = {constant(1.0), constant(0.5), constant(0.25)};
  for (const char* name : {"rcp", "ull", "fpm-akima", "fpm-geometric"}) {
    const Trajectory run = simulate(name, speeds, 7000, 3);
    SCOPED_TRACE(name);
    EXPECT_EQ(run.partitions[0], (Decomposition{{4000, 0}, {2000, 4000}, {1000, 6000}}));
    EXPECT_EQ(run.partitions[2], run.partitions[0]);
  }
}

}  // namespace
}  // namespace flexmpi
