#include "core/ull_calibrator.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "balancing/ull/ull_partitioner.hpp"
#include "base/mpi_check.hpp"
#include "core/runtime.hpp"
#include "util/agreement.hpp"
#include "util/collective_watchdog.hpp"

namespace flexmpi {

void check_ull_partition(std::span<const int> counts, std::span<const int> displs, int size_object,
                         int size_problem) {
  if (size_object < 1) {
    throw Error(Errc::invalid_argument,
                "size_object=" + std::to_string(size_object) + ": expected >= 1");
  }
  if (size_problem < 0) {
    throw Error(Errc::invalid_argument,
                "size_problem=" + std::to_string(size_problem) + ": expected >= 0");
  }
  if (static_cast<std::int64_t>(size_problem) * size_object > INT32_MAX) {
    throw Error(Errc::invalid_argument, "size_problem * size_object does not fit in an int");
  }
  std::int64_t next = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const std::string entry = fmt::format("[{}]", i);
    if (counts[i] < 0 || counts[i] % size_object != 0) {
      throw Error(Errc::invalid_argument,
                  "counts" + entry + "=" + std::to_string(counts[i]) +
                      ": expected a non-negative multiple of size_object (" +
                      std::to_string(size_object) + ")");
    }
    if (displs[i] != next) {
      throw Error(Errc::invalid_argument, "displs" + entry + "=" + std::to_string(displs[i]) +
                                              ": expected " + std::to_string(next) +
                                              " (blocks contiguous, in rank order)");
    }
    next += counts[i];
  }
  if (next != static_cast<std::int64_t>(size_problem) * size_object) {
    throw Error(Errc::invalid_argument,
                "counts add up to " + std::to_string(next) +
                    ": expected size_problem * size_object = " +
                    std::to_string(static_cast<std::int64_t>(size_problem) * size_object));
  }
}

void ull_block_partition(std::span<int> counts, std::span<int> displs, int size_object,
                         int size_problem) {
  const auto p = static_cast<int>(counts.size());
  int displ = 0;
  for (int i = 0; i < p; ++i) {
    const int units = size_problem / p + (i < size_problem % p ? 1 : 0);
    counts[i] = units * size_object;
    displs[i] = displ;
    displ += counts[i];
  }
}

UllCalibrator::UllCalibrator(Runtime& runtime)
    : runtime_(runtime), stopwatch_(runtime.comm_profile()) {}

void UllCalibrator::restart() { open_ = false; }

void UllCalibrator::begin(int iteration) {
  if (iteration < 0)
    throw Error(Errc::invalid_argument,
                "iteration=" + std::to_string(iteration) + ": expected >= 0");
  if (open_ && iteration == open_iteration_) return;
  // Iteration 0 begins a calibrated loop: an iteration left open by an
  // earlier loop is forgotten (the paper's "particular treatment").
  if (iteration == 0) restart();
  if (open_) {
    throw Error(Errc::bad_state, "ULL_MPI_INIT for iteration " + std::to_string(iteration) +
                                     " while iteration " + std::to_string(open_iteration_) +
                                     " is open (missing ULL_MPI_END)");
  }
  open_ = true;
  open_iteration_ = iteration;
  stopwatch_.start();
  runtime_.emulator().computation_starts();  // the section's CPU time is its work
}

std::optional<Error> UllCalibrator::check_end(int iteration, std::span<const int> counts,
                                              std::span<const int> displs, int threshold_us,
                                              int size_object, int size_problem) const {
  try {
    if (!open_ || open_iteration_ != iteration) {
      throw Error(Errc::bad_state,
                  "ULL_MPI_END for iteration " + std::to_string(iteration) +
                      (open_ ? " but iteration " + std::to_string(open_iteration_) + " is open"
                             : " without ULL_MPI_INIT"));
    }
    if (threshold_us < 0) {
      throw Error(Errc::invalid_argument,
                  "threshold=" + std::to_string(threshold_us) + ": expected >= 0 microseconds");
    }
    if (static_cast<int>(counts.size()) != runtime_.size() ||
        static_cast<int>(displs.size()) != runtime_.size()) {
      throw Error(Errc::invalid_argument,
                  "counts or displs is NULL: expected one entry per process");
    }
    check_ull_partition(counts, displs, size_object, size_problem);
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

double UllCalibrator::measure_section(double units) {
  // The section's computation time, stretched by the emulated
  // speed of this process for its partition size, as Monitor does.
  runtime_.emulator().slow_down(stopwatch_.computation(), units);
  runtime_.set_work(units);  // what this process computes, for the work metric and emulation
  return stopwatch_.computation();
}

bool UllCalibrator::end(int iteration, std::span<int> counts, std::span<int> displs,
                        int threshold_us, int size_object, int size_problem) {
  // A mistake on one process fails all of them instead of hanging the others.
  const std::optional<Error> problem =
      check_end(iteration, counts, displs, threshold_us, size_object, size_problem);
  open_ = false;
  const double seconds = problem
                             ? 0.0
                             : measure_section(counts[static_cast<std::size_t>(runtime_.rank())] /
                                               static_cast<double>(size_object));
  // The section measured, the collective part: a process that does not
  // come, or comes at another iteration, is named instead of hanging the others.
  await_same_iteration(runtime_.library_comm(), {CollectiveCall::ull_calibrate, iteration},
                       "iteration", "the loop's iteration");
  // A failed process sends a negative time: the times every process needs
  // anyway tell whether one failed, and only then does the agreement run
  // that gives everyone its error.
  std::vector<double> times_us(static_cast<std::size_t>(runtime_.size()));
  const double mine = problem ? -1.0 : seconds * 1e6;
  check_mpi(
      PMPI_Allgather(&mine, 1, MPI_DOUBLE, times_us.data(), 1, MPI_DOUBLE, runtime_.library_comm()),
      "MPI_Allgather (ULL times)");
  if (std::any_of(times_us.begin(), times_us.end(), [](double t) { return t < 0.0; })) {
    agree_on_failure(problem, runtime_.library_comm());
  }
  ++calibrations_;
  return rebalance(counts, displs, times_us, threshold_us, size_object, size_problem);
}

bool UllCalibrator::rebalance(std::span<int> counts, std::span<int> displs,
                              std::span<const double> times_us, int threshold_us, int size_object,
                              int size_problem) {
  // sec. 3: "If (Tmax - Tmin) > threshold then balance".
  if (!ull_should_balance({times_us.begin(), times_us.end()}, threshold_us)) return false;
  std::vector<std::int64_t> unit_counts(counts.size());
  for (std::size_t q = 0; q < counts.size(); ++q) unit_counts[q] = counts[q] / size_object;
  std::vector<std::int64_t> balanced;
  try {
    balanced = ull_counts(unit_counts, {times_us.begin(), times_us.end()}, size_problem);
  } catch (const Error& e) {
    // A zero time (an empty section) gives no relative power: keep the counts.
    if (runtime_.rank() == 0) runtime_.log().warn("ULL_MPI_calibrate: {}: counts kept", e.what());
    return false;
  }
  bool changed = false;
  int displ = 0;
  for (std::size_t q = 0; q < counts.size(); ++q) {
    const int count = static_cast<int>(balanced[q]) * size_object;
    changed = changed || count != counts[q];
    counts[q] = count;
    displs[q] = displ;
    displ += count;
  }
  if (changed) ++rebalances_;
  return changed;
}

}  // namespace flexmpi
