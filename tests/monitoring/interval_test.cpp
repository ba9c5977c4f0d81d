// Aggregation of iteration samples per sampling interval (thesis 3.3, 4.2)
// and the interval report the balancer reads, on hand-computed examples.
// Values are binary fractions so the sums are exact.
#include "monitoring/interval.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

namespace flexmpi {
namespace {

using ::testing::ElementsAre;

constexpr double kDedicated = 0.05;  // default dedicated_threshold

ProcessInterval process(double wall, double cpu, double mpi, double metric = 0.0) {
  ProcessInterval p;
  p.iterations = 1;
  p.wall = wall;
  p.cpu = cpu;
  p.mpi = mpi;
  p.metric = metric;
  return p;
}

TEST(IterationSample, ComputationIsWallMinusMpi) {
  const IterationSample s{.wall = 1.5, .cpu = 1.25, .mpi = 0.25, .metric = 100};
  EXPECT_DOUBLE_EQ(s.computation(), 1.25);
}

TEST(ProcessInterval, AddSumsSamplesAndCountsIterations) {
  ProcessInterval p;
  p.add({.wall = 1.0, .cpu = 0.75, .mpi = 0.25, .metric = 10});
  p.add({.wall = 2.0, .cpu = 1.5, .mpi = 0.5, .metric = 20});
  p.add({.wall = 0.5, .cpu = 0.5, .mpi = 0.0, .metric = 5, .emulation_late = true});
  EXPECT_EQ(p.iterations, 3);
  EXPECT_EQ(p.emulation_late_iterations, 1);
  EXPECT_DOUBLE_EQ(p.wall, 3.5);
  EXPECT_DOUBLE_EQ(p.cpu, 2.75);
  EXPECT_DOUBLE_EQ(p.mpi, 0.75);
  EXPECT_DOUBLE_EQ(p.metric, 35);
  EXPECT_DOUBLE_EQ(p.computation(), 2.75);
  // Communication totals come from the profile, not from the samples.
  EXPECT_EQ(p.mpi_calls, 0.0);
  EXPECT_EQ(p.bytes_sent, 0.0);
  EXPECT_EQ(p.bytes_received, 0.0);
}

TEST(ProcessInterval, SharedFractionIsLostCpuShare) {
  EXPECT_DOUBLE_EQ(process(4.0, 3.0, 0.0).shared_fraction(), 0.25);
  EXPECT_DOUBLE_EQ(process(2.0, 2.0, 0.0).shared_fraction(), 0.0);
  EXPECT_DOUBLE_EQ(process(2.0, 0.0, 0.0).shared_fraction(), 1.0);
}

TEST(ProcessInterval, SharedFractionClampsAndHandlesZeroTime) {
  // CPU slightly above wall (clock granularity) is a dedicated PE, not negative sharing.
  EXPECT_DOUBLE_EQ(process(1.0, 1.25, 0.0).shared_fraction(), 0.0);
  EXPECT_DOUBLE_EQ(process(1.0, -1.0, 0.0).shared_fraction(), 1.0);
  EXPECT_DOUBLE_EQ(process(0.0, 0.0, 0.0).shared_fraction(), 0.0);
  EXPECT_DOUBLE_EQ(process(0.0, 0.5, 0.0).shared_fraction(), 0.0);
}

TEST(ProcessInterval, SpeedIsMetricPerSecondOfComputation) {
  EXPECT_DOUBLE_EQ(process(3.0, 3.0, 1.0, 500).speed(kDedicated), 250.0);
  EXPECT_DOUBLE_EQ(process(0.5, 0.5, 0.0, 100).speed(kDedicated), 200.0);
  EXPECT_DOUBLE_EQ(process(1.0, 1.0, 1.0, 100).speed(kDedicated), 0.0);  // no computation time
  EXPECT_DOUBLE_EQ(process(0.0, 0.0, 0.0, 100).speed(kDedicated), 0.0);
}

TEST(ProcessInterval, EffectiveComputationIsComputationOnADedicatedPe) {
  // shared fraction 0.03 <= 0.05: the thesis's computation time, exactly
  EXPECT_DOUBLE_EQ(process(1.0, 0.97, 0.25).effective_computation(kDedicated), 0.75);
  EXPECT_DOUBLE_EQ(process(1.0, 0.97, 0.25, 300).speed(kDedicated), 400.0);
}

TEST(ProcessInterval, EffectiveComputationOnASharedPeIsItsComputationAtItsShare) {
  // Preempted while computing: wall 2, CPU 1 (half of the PE), no MPI: the
  // 2 seconds it took.
  EXPECT_DOUBLE_EQ(process(2.0, 1.0, 0.0).effective_computation(kDedicated), 2.0);
  // A loaded rank that also waits in MPI: its CPU time (0.6 s) is below its
  // computation (1 s). Scaling by cpu/wall made this the whole wall time (2 s),
  // so a loaded rank kept losing rows however few it had.
  EXPECT_DOUBLE_EQ(process(2.0, 0.6, 1.0).effective_computation(kDedicated), 1.0);
  EXPECT_DOUBLE_EQ(process(2.0, 0.6, 1.0, 100).speed(kDedicated), 100.0);
  // Preempted while it waited in MPI: the computation ran at the share it got
  // while computing, 0.5 s.
  EXPECT_DOUBLE_EQ(process(2.0, 1.0, 1.5).effective_computation(kDedicated), 0.5);
  // No CPU time measured: computation time, not a division by zero.
  EXPECT_DOUBLE_EQ(process(2.0, 0.0, 0.5).effective_computation(kDedicated), 1.5);
}

TEST(ProcessInterval, SharedPeCountsEverySlowIteration) {
  // A duty-cycled outside load slows 6 iterations of 10: the median
  // iteration is a slow one, the sum is what the block takes at that share.
  ProcessInterval p = process(1.5, 0.9, 0.2);
  p.typical_computation = 1.6;
  EXPECT_DOUBLE_EQ(p.effective_computation(kDedicated), 1.3);
  // The same figures on a PE of its own (CPU = wall) use the median.
  p.cpu = 1.5;
  EXPECT_DOUBLE_EQ(p.effective_computation(kDedicated), 1.6);
}

TEST(StallFreeComputation, AStallLongerThanIterationsCountsAsTheMedianIteration) {
  // CG on a core shared with a busy program: iterations of 0.25 ms wall,
  // 0.125 ms computation, and the scheduler takes the core away for 4 ms in
  // two of them. The others waited those 4 ms whatever the blocks.
  std::vector<double> computation(10, 0.125e-3), wall(10, 0.25e-3);
  computation[3] = computation[7] = 4.125e-3;
  wall[3] = wall[7] = 4.25e-3;
  EXPECT_DOUBLE_EQ(stall_free_computation(computation, wall), 10 * 0.125e-3);
  // Slices shorter than iterations: every iteration computes at half its
  // speed, or some twice as long as others (a duty cycle). Nothing exceeds
  // 4 median iterations: the sum.
  std::vector<double> duty = {2.0, 1.0, 2.0, 1.0, 2.0, 2.0, 1.0, 2.0, 2.0, 1.0};
  EXPECT_DOUBLE_EQ(stall_free_computation(duty, duty), 16.0);
  // Unknown, or mismatched: 0 (effective_computation falls back to the sum).
  EXPECT_DOUBLE_EQ(stall_free_computation({}, {}), 0.0);
  EXPECT_DOUBLE_EQ(stall_free_computation({1.0}, {}), 0.0);
}

TEST(ProcessInterval, SharedPeDoesNotCountStalls) {
  // The summed computation (1.3 s) holds stalls; without them 0.5 s.
  ProcessInterval p = process(1.5, 0.9, 0.2);
  p.stall_free_computation = 0.5;
  EXPECT_DOUBLE_EQ(p.effective_computation(kDedicated), 0.5);
}

// Recorded from Jacobi's fast rank (1000 rows, 25 iterations of ~8 ms) on a
// core shared with `stress-ng --cpu 1`, Open MPI polling in its waits: per
// iteration 7.8 ms wall, 3.9 ms CPU (half the core), 2 ms of computation CPU.
// Phase-locked, the scheduler ran the computation almost alone (2.3 ms of
// wall) and took the core during the wait; in other runs the computation got
// its half of the core (4 ms of wall). The same block, the same share.
TEST(ShareCorrection, TheComputationTakesTheShareOfTheWholeInterval) {
  const std::vector<double> wall(25, 7.8e-3);
  std::vector<CpuSample> locked(25, CpuSample{7.8e-3, 3.9e-3, 2.3e-3, 2.0e-3});
  std::vector<CpuSample> even(25, CpuSample{7.8e-3, 3.9e-3, 4.0e-3, 2.0e-3});
  const double locked_factor = share_correction(locked, std::vector<double>(25, 2.3e-3), wall);
  const double even_factor = share_correction(even, std::vector<double>(25, 4.0e-3), wall);
  // Both are 4 ms of computation at the interval's half of the core.
  EXPECT_NEAR(2.3e-3 * locked_factor, 4.0e-3, 1e-12);
  EXPECT_NEAR(4.0e-3 * even_factor, 4.0e-3, 1e-12);
  // On the interval record: the shared PE's time is corrected.
  ProcessInterval p = process(25 * 7.8e-3, 25 * 3.9e-3, 25 * 5.5e-3);
  p.stall_free_computation = 25 * 2.3e-3;
  p.share_correction = locked_factor;
  EXPECT_NEAR(p.effective_computation(kDedicated), 0.1, 1e-12);
}

TEST(ShareCorrection, UnknownWhereTheShareOfTheIntervalIsNotTheComputations) {
  const std::vector<double> wall(10, 8e-3), computation(10, 4e-3);
  // A process that sleeps in its waits (no CPU there): its CPU over the
  // interval is not the share it gets while it computes.
  const std::vector<CpuSample> sleeping(10, CpuSample{8e-3, 2.1e-3, 4e-3, 2e-3});
  EXPECT_EQ(share_correction(sleeping, computation, wall), 0.0);
  // An iteration that stalled (CG's pauses): the stall-free computation stands.
  const std::vector<CpuSample> spinning(10, CpuSample{8e-3, 4e-3, 4e-3, 2e-3});
  EXPECT_GT(share_correction(spinning, computation, wall), 0.0);
  std::vector<double> stalled = computation;
  stalled[4] = 40e-3;
  EXPECT_EQ(share_correction(spinning, stalled, wall), 0.0);
  // No iteration read the CPU clock, or nothing measured.
  EXPECT_EQ(share_correction({}, computation, wall), 0.0);
  EXPECT_EQ(share_correction({CpuSample{}}, computation, wall), 0.0);
  // Without a correction the time is the computation's, as before.
  ProcessInterval p = process(1.5, 0.9, 0.2);
  p.stall_free_computation = 0.5;
  EXPECT_DOUBLE_EQ(p.effective_computation(kDedicated), 0.5);
}

TEST(ProcessInterval, PackUnpackRoundTrip) {
  ProcessInterval p;
  p.rank = 5;
  p.iterations = 100;
  p.wall = 1.125;
  p.cpu = 1.0;
  p.mpi = 0.0625;
  p.metric = 123456789.0;
  p.mpi_calls = 400;
  p.bytes_sent = 8e9;
  p.bytes_received = 3.5e6;
  p.host_id = 4503599627370495.0;  // 2^52 - 1
  p.node_cores = 64;
  p.typical_computation = 1.0416;
  p.redistribution_seconds = 0.003;
  p.emulation_late_iterations = 7;
  p.reconfiguration_seconds = 0.25;
  p.run_seconds = 12.5;
  p.node_communication_power = 1.2e9;
  p.node_caf = 3.5e5;
  p.stall_free_computation = 0.75;
  p.share_correction = 1.875;
  std::array<double, ProcessInterval::kFieldCount> packed{};
  p.pack(packed);
  const ProcessInterval q = ProcessInterval::unpack(packed);
  EXPECT_EQ(q.rank, 5);
  EXPECT_EQ(q.iterations, 100);
  EXPECT_EQ(q.wall, p.wall);
  EXPECT_EQ(q.cpu, p.cpu);
  EXPECT_EQ(q.mpi, p.mpi);
  EXPECT_EQ(q.metric, p.metric);
  EXPECT_EQ(q.mpi_calls, p.mpi_calls);
  EXPECT_EQ(q.bytes_sent, p.bytes_sent);
  EXPECT_EQ(q.bytes_received, p.bytes_received);
  EXPECT_EQ(q.host_id, p.host_id);
  EXPECT_EQ(q.node_cores, p.node_cores);
  EXPECT_EQ(q.typical_computation, p.typical_computation);
  EXPECT_EQ(q.redistribution_seconds, p.redistribution_seconds);
  EXPECT_EQ(q.emulation_late_iterations, 7);
  EXPECT_EQ(q.reconfiguration_seconds, p.reconfiguration_seconds);
  EXPECT_EQ(q.run_seconds, p.run_seconds);
  EXPECT_EQ(q.node_communication_power, p.node_communication_power);
  EXPECT_EQ(q.node_caf, p.node_caf);
  EXPECT_EQ(q.stall_free_computation, p.stall_free_computation);
  EXPECT_EQ(q.share_correction, p.share_correction);
  // Every field has its own slot.
  std::array<double, ProcessInterval::kFieldCount> sorted = packed;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
}

TEST(ProcessInterval, DedicatedTimeIsTheTypicalComputationWhereKnown) {
  ProcessInterval p = process(1.5, 1.5, 0.5);
  EXPECT_DOUBLE_EQ(p.effective_computation(kDedicated), 1.0);  // unknown: the sum
  p.typical_computation = 0.8;  // two slow iterations of ten made the sum 1.0
  EXPECT_DOUBLE_EQ(p.robust_computation(), 0.8);
  EXPECT_DOUBLE_EQ(p.effective_computation(kDedicated), 0.8);
}

// The speed estimate of one interval: the median iteration, so
// that the first iterations on a block just received do not count as a
// slower processor.
TEST(TypicalComputation, IgnoresTheSlowFirstIterationsAfterARedistribution) {
  std::vector<double> iterations(10, 0.010);
  iterations[0] = iterations[1] = iterations[2] = 0.014;       // first touch, cold cache
  EXPECT_NEAR(typical_computation(iterations), 0.100, 1e-12);  // the sum says 0.112
}

TEST(TypicalComputation, FollowsTheMeanOfSymmetricNoise) {
  std::vector<double> iterations;
  for (int i = 0; i < 20; ++i) iterations.push_back(i % 2 == 0 ? 0.009 : 0.011);
  iterations.push_back(0.010);
  EXPECT_NEAR(typical_computation(iterations), 21 * 0.010, 1e-12);
}

TEST(TypicalComputation, TwoEqualProcessesStayBalancedDespiteAOneOffStall) {
  // Homogeneous: rank 1 was preempted once for 8 iterations' worth of time.
  std::vector<double> rank0(10, 0.010), rank1(10, 0.010);
  rank1[4] = 0.090;
  IntervalReport r;
  r.processes = {process(0.1, 0.1, 0.0), process(0.18, 0.18, 0.0)};
  EXPECT_GT(r.imbalance(kDedicated), 0.4);  // the sums: 44 % imbalance
  r.processes[0].typical_computation = typical_computation(rank0);
  r.processes[1].typical_computation = typical_computation(rank1);
  EXPECT_NEAR(r.imbalance(kDedicated), 0.0, 1e-12);
}

TEST(TypicalComputation, NoIterationNoTime) { EXPECT_EQ(typical_computation({}), 0.0); }

TEST(IntervalReport, RedistributionSecondsIsTheSlowestProcesss) {
  IntervalReport r;
  r.processes = {process(1.0, 1.0, 0.0), process(1.0, 1.0, 0.0)};
  EXPECT_EQ(r.redistribution_seconds(), 0.0);
  r.processes[1].redistribution_seconds = 0.25;
  EXPECT_EQ(r.redistribution_seconds(), 0.25);
}

TEST(IntervalReport, ImbalanceIsMaxMinusMinOverMaxOfComputation) {
  IntervalReport r;
  // computations 1, 2, 4 (MPI time is not computation)
  r.processes = {process(1.5, 1.5, 0.5), process(2.0, 2.0, 0.0), process(5.0, 5.0, 1.0)};
  EXPECT_DOUBLE_EQ(r.imbalance(kDedicated), 0.75);
  r.processes = {process(2.0, 2.0, 0.0), process(2.5, 2.5, 0.5)};
  EXPECT_DOUBLE_EQ(r.imbalance(kDedicated), 0.0);
  r.processes = {process(8.0, 8.0, 0.0), process(6.0, 6.0, 0.0)};
  EXPECT_DOUBLE_EQ(r.imbalance(kDedicated), 0.25);
}

TEST(IntervalReport, ImbalanceComparesEffectiveComputationOfSharedPes) {
  IntervalReport r;
  // Measured: both cores loaded by two outside processes
  // each, speeds 1.0 and 0.5. Each rank gets a third of its core (CPU 0.24 s
  // of 0.72 s wall) and computes 0.354 and 0.662 s. Scaled by the share of
  // the whole interval both times were the wall time: imbalance 0.01.
  r.processes = {process(0.72, 0.24, 0.72 - 0.354), process(0.72, 0.24, 0.72 - 0.662)};
  EXPECT_NEAR(r.imbalance(kDedicated), (0.662 - 0.354) / 0.662, 1e-12);
  // A dedicated PE against a loaded one that waits in MPI: 2 s against 1 s.
  r.processes = {process(2.0, 2.0, 0.0), process(2.0, 0.6, 1.0)};
  EXPECT_DOUBLE_EQ(r.imbalance(kDedicated), 0.5);
}

TEST(IntervalReport, OversubscribedNodesKeepTheComputationTime) {
  // Node 7 has 2 cores and runs 3 processes; node 9 has 2 cores and 1.
  ProcessInterval a = process(2.0, 1.0, 1.0);
  a.typical_computation = 0.8;
  ProcessInterval b = a, c = a, d = a;
  a.host_id = b.host_id = c.host_id = 7;
  d.host_id = 9;
  a.node_cores = b.node_cores = c.node_cores = d.node_cores = 2;
  IntervalReport r;
  r.processes = {a, b, c, d};
  r.mark_oversubscribed_nodes();
  EXPECT_TRUE(r.processes[0].node_oversubscribed);
  EXPECT_TRUE(r.processes[2].node_oversubscribed);
  EXPECT_FALSE(r.processes[3].node_oversubscribed);
  // The CPU time these lack went to the application's own processes: not a
  // smaller PE, so the median iteration. Alone on its node, the same
  // figures are a shared PE, where every slow iteration counts.
  EXPECT_DOUBLE_EQ(r.processes[0].effective_computation(kDedicated), 0.8);
  EXPECT_DOUBLE_EQ(r.processes[3].effective_computation(kDedicated), 1.0);
}

// Shared processes (20 % of a core) whose CPU-share correction is known or
// not (0), beside a dedicated one, which never has it.
TEST(IntervalReport, TimesAreCorrectedOnEveryRankOrOnNone) {
  const auto report = [](double first, double second) {
    ProcessInterval shared = process(10.0, 2.0, 9.0);
    ProcessInterval other = shared;
    shared.share_correction = first;
    other.share_correction = second;
    IntervalReport r;
    r.processes = {shared, other, process(10.0, 10.0, 5.0)};
    return r;
  };
  const auto corrections = [](const IntervalReport& r) {
    std::vector<double> out;
    for (const ProcessInterval& p : r.processes) out.push_back(p.share_correction);
    return out;
  };
  IntervalReport both = report(5.0, 4.0);
  both.make_times_comparable(kDedicated);
  EXPECT_THAT(corrections(both), ElementsAre(5.0, 4.0, 0.0));
  // One known, one not: 5x on rank 0 beside rank 1's raw time inverts their speeds.
  IntervalReport half = report(5.0, 0.0);
  const double uncorrected = half.processes[0].effective_computation(kDedicated) / 5.0;
  half.make_times_comparable(kDedicated);
  EXPECT_THAT(corrections(half), ElementsAre(0.0, 0.0, 0.0));
  EXPECT_DOUBLE_EQ(half.processes[0].effective_computation(kDedicated), uncorrected);
  // An oversubscribed node's processes compare their median iteration, not the share.
  IntervalReport crowded = report(5.0, 0.0);
  crowded.processes[1].node_oversubscribed = true;
  crowded.make_times_comparable(kDedicated);
  EXPECT_THAT(corrections(crowded), ElementsAre(5.0, 0.0, 0.0));
}

TEST(IntervalReport, ImbalanceOfEmptyOrZeroTimeIsZero) {
  IntervalReport r;
  EXPECT_EQ(r.imbalance(kDedicated), 0.0);
  r.processes = {process(0.0, 0.0, 0.0), process(0.0, 0.0, 0.0)};
  EXPECT_EQ(r.imbalance(kDedicated), 0.0);
  r.processes = {process(1.0, 1.0, 0.0)};
  EXPECT_EQ(r.imbalance(kDedicated), 0.0);
  r.processes = {process(0.0, 0.0, 0.0), process(2.0, 2.0, 0.0)};
  EXPECT_DOUBLE_EQ(r.imbalance(kDedicated), 1.0);
}

TEST(IntervalReport, SharedFlagsAreStrictlyAboveThreshold) {
  IntervalReport r;
  r.processes = {process(4.0, 4.0, 0.0),   // 0
                 process(4.0, 3.0, 0.0),   // 0.25
                 process(4.0, 1.0, 0.0),   // 0.75
                 process(0.0, 0.0, 0.0),   // no time: dedicated
                 process(4.0, 4.5, 0.0)};  // clamped to 0
  EXPECT_THAT(r.shared_flags(0.05), ElementsAre(false, true, true, false, false));
  EXPECT_THAT(r.shared_flags(0.25), ElementsAre(false, false, true, false, false));
  EXPECT_THAT(r.shared_flags(0.8), ElementsAre(false, false, false, false, false));
  EXPECT_TRUE(IntervalReport{}.shared_flags(0.05).empty());
}

}  // namespace
}  // namespace flexmpi
