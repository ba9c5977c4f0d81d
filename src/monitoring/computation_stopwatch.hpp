// The computation time of a section of code: its wall time minus the time it
// spent inside MPI calls (docs/reference/behaviour.md, Computation time), both read from the PMPI
// wrappers' timer (IntervalTimer: the time-stamp counter where there is one, ~10 ns a read against
// 27 ns for CLOCK_MONOTONIC's vDSO; the per-iteration path reads it three times). One definition
// for the monitored iterations (Monitor) and for the ULL_MPI_calibrate sections (UllCalibrator).
#pragma once

#include <cstdint>

#include "profiling/comm_profile.hpp"

namespace flexmpi {

class ComputationStopwatch {
 public:
  explicit ComputationStopwatch(const CommProfile& profile) : profile_(&profile) {}

  void start() {
    wall_start_ = profile_->timer().now();
    mpi_start_ = profile_->mpi_seconds();
  }
  [[nodiscard]] double wall() const {
    return profile_->timer().seconds(profile_->timer().now() - wall_start_);
  }
  [[nodiscard]] double mpi() const { return profile_->mpi_seconds() - mpi_start_; }
  /// wall() - mpi() now; may be slightly negative for a section that only waited.
  [[nodiscard]] double computation() const { return wall() - mpi(); }

 private:
  const CommProfile* profile_;
  std::uint64_t wall_start_ = 0;  // ticks of the profile's timer
  double mpi_start_ = 0.0;
};

}  // namespace flexmpi
