// Per-iteration samples and their aggregation per sampling interval
// (thesis 3.3, 4.2): the record the load balancer and the policies read.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace flexmpi {

/// One monitored iteration of one process.
struct IterationSample {
  double wall = 0.0;    ///< Treal of the monitored region, seconds
  double cpu = 0.0;     ///< Tcpu the computing thread got, seconds
  double mpi = 0.0;     ///< time inside MPI calls within the region, seconds
  double metric = 0.0;  ///< speed-metric count (work units or FLOP)
  /// The emulated slower core could not keep up: the real computation
  /// already took longer than the emulated time (SpeedEmulator::slow_down).
  bool emulation_late = false;
  /// CPU time of the computation (the thread CPU clock read where each MPI
  /// call begins and ends); only on the iterations that read it there
  /// (Monitor::kStretchSamples an interval), else 0.
  double computation_cpu = 0.0;

  /// wall - MPI, never negative: MPI time is read from the TSC and wall
  /// time from CLOCK_MONOTONIC, so a region spent almost entirely waiting
  /// can differ by the timers' calibration error (~1e-5).
  [[nodiscard]] double computation() const { return wall > mpi ? wall - mpi : 0.0; }
};

/// The typical computation of an interval from its per-iteration computation
/// times: their median times their number (ProcessInterval::typical_computation).
double typical_computation(const std::vector<double>& iteration_computation);

/// How many times the median iteration's wall time an iteration's computation
/// must exceed to be a stall (stall_free_computation).
inline constexpr double kStallIterations = 4.0;

/**
 * The computation of an interval without the stalls every process waited for
 * (docs/design/shared-cores.md, point 5). On a core
 * time-sliced with another program the scheduler takes the core away for a
 * slice of milliseconds. Where iterations are much shorter than a slice (CG:
 * 0.1 ms), an iteration caught by it computes for the whole slice while the
 * other processes finish their work and wait: the pause costs the run the
 * same whatever the blocks, and between pauses the process computes at its
 * full speed. Summed, those pauses made a process twice as fast as its
 * neighbour look slower, and the balancer moved rows the wrong way. An
 * iteration whose computation exceeds kStallIterations times the median
 * iteration's wall time counts as the median iteration's computation; where
 * slices are shorter than iterations (Jacobi at 2000 rows) no iteration is
 * that long and this is the sum. `computation` and `wall` are per iteration.
 */
double stall_free_computation(const std::vector<double>& computation,
                              const std::vector<double>& wall);

/// An iteration that read the CPU clock (Monitor): its wall, CPU, computation
/// and computation CPU times.
struct CpuSample {
  double wall = 0.0;
  double cpu = 0.0;
  double computation = 0.0;
  double computation_cpu = 0.0;
};

/**
 * What a shared PE's computation time is multiplied by to be the time the
 * computation needs at the share of the core the process gets over the
 * interval, not the share it happened to get while computing
 * (docs/design/shared-cores.md, point 6). A process
 * that spins in its MPI waits (Open MPI and MPICH poll) is runnable all the
 * time, so its CPU time over wall time is its share of the core; the
 * scheduler does not spread that share evenly between computing and
 * waiting: Jacobi's fast rank on a core shared with stress-ng computed its
 * block at 85 % of the core in some runs and at 50 % in others, polled on
 * the rest, and read as 1.8x faster than it was with the same CPU share.
 * With the computation's CPU time measured, the time at the interval's
 * share is computation CPU x wall / CPU; the factor is that over the
 * measured computation time, summed over `sampled`.
 * 0 (unknown; the computation time stands) without samples, when the
 * process slept through its MPI time (its CPU time over the interval is then
 * not the share it gets when it computes), or when an iteration of the
 * interval stalled (stall_free_computation: the pauses of a core time-sliced
 * under iterations shorter than a slice cost the run alike whatever the
 * blocks, and the rest ran at the full core).
 */
double share_correction(const std::vector<CpuSample>& sampled,
                        const std::vector<double>& iteration_computation,
                        const std::vector<double>& iteration_wall);

/// One process over one sampling interval: sums of its iteration samples
/// plus its communication totals. Exchanged among all processes.
struct ProcessInterval {
  int rank = 0;
  int iterations = 0;
  double wall = 0.0;
  double cpu = 0.0;
  double mpi = 0.0;
  double metric = 0.0;
  double mpi_calls = 0.0;
  double bytes_sent = 0.0;
  double bytes_received = 0.0;
  double host_id = 0.0;     ///< 52-bit hash of the node's name: processes on one node share it
  double node_cores = 0.0;  ///< online cores of the node
  /// The median computation time of one iteration of the interval times the
  /// iterations: the interval's computation without its odd slow iterations
  /// (the first touches of a block just received, a cold cache, a one-off
  /// preemption), which a sum would read as a slower processor. 0: unknown.
  double typical_computation = 0.0;
  /// The interval's computation with its stalls replaced by the median
  /// iteration's computation (stall_free_computation below). 0: unknown.
  double stall_free_computation = 0.0;
  /// share_correction() of the interval; 0: unknown.
  double share_correction = 0.0;
  /// Wall time this process spent redistributing data since the previous
  /// interval (0: none): the measured cost the prediction model learns from.
  double redistribution_seconds = 0.0;
  /// Iterations of the interval the speed emulation could not keep up with
  /// (IterationSample::emulation_late): their real computation alone
  /// exceeded the emulated time, so they ran at the real core's speed.
  int emulation_late_iterations = 0;
  /// Σ_t i_t over the node's CPUs during the interval: how many CPUs of the
  /// node stood idle (DRUM thesis 3.1.2.1), from /proc/stat; 0 where unknown.
  double node_idle_cpus = 0.0;
  /// c_n of the node during the interval (DRUM thesis 3.1.2.2, the
  /// available-bandwidth form: Σ_i C_i − (λ_i + μ_i) over its interfaces of
  /// known speed, octets/s); negative where unknown.
  double node_communication_power = -1.0;
  /// CAF_n: the node's mean λ + μ over its interfaces that carried traffic, octets/s.
  double node_caf = 0.0;
  /// Wall time this process spent in spawns and removals since the previous
  /// interval, with the data handed over with them (0: none; a process
  /// spawned by them reports 0).
  double reconfiguration_seconds = 0.0;
  /// Wall seconds from this process's first monitored iteration to the end
  /// of the interval: for a process started with the job, the run's clock
  /// (IntervalReport::run_seconds).
  double run_seconds = 0.0;
  /// Not exchanged: set from every process's host_id and node_cores once the
  /// report is complete (IntervalReport::mark_oversubscribed_nodes). True if
  /// this process's node runs more processes of the application than it has
  /// cores: CPU time then goes to other processes of the application too,
  /// which is not a smaller PE (see effective_computation).
  bool node_oversubscribed = false;

  void add(const IterationSample& sample);
  /// Computation time = wall - MPI time (docs/reference/behaviour.md, Computation time), never
  /// negative.
  [[nodiscard]] double computation() const { return wall > mpi ? wall - mpi : 0.0; }
  /// typical_computation where known, else computation().
  [[nodiscard]] double robust_computation() const {
    return typical_computation > 0.0 ? typical_computation : computation();
  }
  /// (Treal - Tcpu) / Treal: the share of the interval the PE was not ours.
  [[nodiscard]] double shared_fraction() const;
  /// The time the balancer compares: what the process needs for its block on
  /// the share of its PE it gets while computing.
  /// - Dedicated PE: robust_computation(), the median iteration, so that a
  ///   few iterations slowed by the OS do not count as a slower PE.
  /// - Shared PE (shared_fraction() > dedicated_threshold): the sum of the
  ///   computation without its stalls (stall_free_computation, where known),
  ///   times share_correction where known: at the share of the core the
  ///   process got over the interval, where it spun through its MPI waits.
  ///   Its wall time outside MPI already ran at the share the process got
  ///   while computing; under a duty-cycled outside load the slow iterations
  ///   are that share, not noise, so the median would be biased. A stall
  ///   longer than a whole iteration is not that share: see
  ///   stall_free_computation(). The share over the whole interval (cpu/wall) is not used:
  ///   it counts the wait in MPI, which spins or sleeps whatever the load,
  ///   and scaling by it made every rank's time its wall time when the CPU
  ///   time fell below the computation time (both ranks loaded: no
  ///   imbalance seen), or kept taking rows from a loaded rank that waited.
  /// - Oversubscribed node (node_oversubscribed): robust_computation(); the
  ///   CPU time a process lacks went to other processes of the application,
  ///   mostly while it waited for them, which is not a smaller PE.
  [[nodiscard]] double effective_computation(double dedicated_threshold) const;
  /// Metric count per second of effective computation (work units/s or FLOP/s).
  [[nodiscard]] double speed(double dedicated_threshold) const;

  static constexpr int kFieldCount = 21;
  void pack(std::span<double, kFieldCount> out) const;
  static ProcessInterval unpack(std::span<const double, kFieldCount> in);
};

/// All processes over one sampling interval.
struct IntervalReport {
  int index = 0;  ///< 0 for the first sampling interval
  long long first_iteration = 0;
  std::string metric_name;  ///< "work" or "papi"
  std::vector<ProcessInterval> processes;

  /// (max - min) / max of effective computation time (thesis Alg. 5,
  /// evaluateLoadBalance; robust computation time on dedicated PEs).
  [[nodiscard]] double imbalance(double dedicated_threshold) const;
  /// Sets every process's node_oversubscribed from the host ids and cores.
  void mark_oversubscribed_nodes();
  /// Gives every process a time of one kind. Each process scales its
  /// computation on a shared PE by its CPU share only where it can tell that
  /// share (share_correction), and a loaded machine leaves some processes of
  /// an interval with it and some without: a full-speed rank's 2.4 ms scaled
  /// by its 20 % share to 11 ms beside a half-speed rank's unscaled 5 ms read
  /// as the half-speed rank twice as fast (docs/design/balancing.md, point 8).
  /// Where any shared process (shared_fraction() above `dedicated_threshold`,
  /// node not oversubscribed) lacks the correction, every process goes
  /// without it. Called once the report is complete, after
  /// mark_oversubscribed_nodes, so that whatever reads it compares like with like.
  void make_times_comparable(double dedicated_threshold);
  /// true where shared_fraction() exceeds `dedicated_threshold`.
  [[nodiscard]] std::vector<bool> shared_flags(double dedicated_threshold) const;
  /// The longest value of a seconds field of any process (0 with none): the
  /// same on every process, which a policy's decision may depend on.
  [[nodiscard]] double longest(double ProcessInterval::*seconds) const;
  /// The shortest value of a seconds field of any process (0 with none).
  [[nodiscard]] double shortest(double ProcessInterval::*seconds) const;
  /// The longest redistribution_seconds of any process (0: none since the last interval).
  [[nodiscard]] double redistribution_seconds() const {
    return longest(&ProcessInterval::redistribution_seconds);
  }
  /// The longest reconfiguration_seconds of any process.
  [[nodiscard]] double reconfiguration_seconds() const {
    return longest(&ProcessInterval::reconfiguration_seconds);
  }
  /// The longest run_seconds of any process: the time since the loop
  /// started, everything included (spawns, data handed over, the
  /// application's own work between intervals).
  [[nodiscard]] double run_seconds() const { return longest(&ProcessInterval::run_seconds); }
};

}  // namespace flexmpi
