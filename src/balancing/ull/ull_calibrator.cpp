#include "balancing/ull/ull_calibrator.hpp"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "balancing/ull/ull_partitioner.hpp"
#include "core/runtime.hpp"
#include "flexmpi/error.hpp"
#include "monitoring/clock.hpp"

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
    const std::string entry = "[" + std::to_string(i) + "]";
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

UllCalibrator::UllCalibrator(Runtime& runtime) : runtime_(runtime) {}

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
  mpi_start_ = runtime_.comm_profile().mpi_seconds();
  wall_start_ = wall_seconds();
}

bool UllCalibrator::end(int iteration, std::span<int> counts, std::span<int> displs,
                        int threshold_us, int size_object, int size_problem) {
  const int p = runtime_.size();
  const int rank = runtime_.rank();
  // Local checks first; their outcome is shared with the times so that a
  // mistake on one process fails all of them instead of hanging the others.
  std::string problem;
  Errc code = Errc::invalid_argument;
  double units = 0.0;
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
    if (static_cast<int>(counts.size()) != p || static_cast<int>(displs.size()) != p) {
      throw Error(Errc::invalid_argument,
                  "counts or displs is NULL: expected one entry per process");
    }
    check_ull_partition(counts, displs, size_object, size_problem);
    units = counts[static_cast<std::size_t>(rank)] / size_object;
  } catch (const Error& e) {
    problem = e.what();
    code = e.code();
  }
  open_ = false;

  // The section's computation: wall time minus MPI time (SPEC section 2),
  // stretched by the emulated speed of this process for its partition size.
  double seconds = 0.0;
  if (problem.empty()) {
    const double computed =
        (wall_seconds() - wall_start_) - (runtime_.comm_profile().mpi_seconds() - mpi_start_);
    runtime_.monitor().emulator().slow_down(computed, units);
    seconds = (wall_seconds() - wall_start_) - (runtime_.comm_profile().mpi_seconds() - mpi_start_);
    runtime_.set_work(units);  // what this process computes, for the work metric and emulation
  }
  std::array<double, 2> mine = {seconds * 1e6, problem.empty() ? 0.0 : static_cast<double>(code)};
  std::vector<double> all(2 * static_cast<std::size_t>(p));
  check_mpi(PMPI_Allgather(mine.data(), 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE,
                           runtime_.library_comm()),
            "MPI_Allgather (ULL times)");
  for (int q = 0; q < p; ++q) {
    if (all[2 * q + 1] != 0.0) {
      if (q == rank) throw Error(code, problem);
      throw Error(static_cast<Errc>(static_cast<int>(all[2 * q + 1])),
                  "ULL_MPI_calibrate failed on process " + std::to_string(q) +
                      (problem.empty() ? "" : " (and here: " + problem + ")"));
    }
  }
  ++calibrations_;
  std::vector<double> times_us(static_cast<std::size_t>(p));
  std::vector<std::int64_t> unit_counts(static_cast<std::size_t>(p));
  for (int q = 0; q < p; ++q) {
    times_us[q] = all[2 * q];
    unit_counts[q] = counts[q] / size_object;
  }
  // sec. 3: "If (Tmax - Tmin) > threshold then balance".
  if (!ull_should_balance(times_us, threshold_us)) return false;
  std::vector<std::int64_t> balanced;
  try {
    balanced = ull_counts(unit_counts, times_us, size_problem);
  } catch (const Error& e) {
    // A zero time (an empty section) gives no relative power: keep the counts.
    if (rank == 0) runtime_.log().warn("ULL_MPI_calibrate: {}: counts kept", e.what());
    return false;
  }
  bool changed = false;
  int displ = 0;
  for (int q = 0; q < p; ++q) {
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
