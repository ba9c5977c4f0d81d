// The computation time of a section of code: its wall time minus the time it
// spent inside MPI calls (SPEC section 2), read from CLOCK_MONOTONIC and the
// PMPI profile. One definition for the monitored iterations (Monitor) and for
// the ULL_MPI_calibrate sections (UllCalibrator).
#pragma once

#include "profiling/comm_profile.hpp"
#include "util/clock.hpp"

namespace flexmpi {

class ComputationStopwatch {
 public:
  explicit ComputationStopwatch(const CommProfile& profile) : profile_(&profile) {}

  void start() {
    wall_start_ = wall_seconds();
    mpi_start_ = profile_->mpi_seconds();
  }
  [[nodiscard]] double wall() const { return wall_seconds() - wall_start_; }
  [[nodiscard]] double mpi() const { return profile_->mpi_seconds() - mpi_start_; }
  /// wall() - mpi() now; may be slightly negative for a section that only waited.
  [[nodiscard]] double computation() const { return wall() - mpi(); }

 private:
  const CommProfile* profile_;
  double wall_start_ = 0.0;
  double mpi_start_ = 0.0;
};

}  // namespace flexmpi
