// The ULL calibrating library (Galindo, Almeida and Badia-Contelles, sec. 3-4)
// on flexmpi's runtime: ULL_MPI_calibrate(ULL_MPI_INIT) and (ULL_MPI_END)
// bracket the section of an iteration to balance; at the end every process
// shares its time, and when max(T) - min(T) exceeds the threshold all of them
// compute the same new counts/displs by RP = counts / T. Only the counts
// change: the ULL library serves SPMD programs with replicated data, so
// nothing is redistributed.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "flexmpi/error.hpp"
#include "monitoring/computation_stopwatch.hpp"

namespace flexmpi {

class Runtime;

/// Checks that counts/displs describe size_problem units of size_object
/// elements, contiguous and in rank order; throws Error(invalid_argument)
/// naming the first wrong entry.
void check_ull_partition(std::span<const int> counts, std::span<const int> displs, int size_object,
                         int size_problem);

/// The homogeneous start of the paper's example: units split in equal
/// blocks (the first size_problem % p processes get one more), in elements.
void ull_block_partition(std::span<int> counts, std::span<int> displs, int size_object,
                         int size_problem);

class UllCalibrator {
 public:
  /// Binds to the running flexmpi runtime (its communicator, MPI timer and
  /// speed emulation).
  explicit UllCalibrator(Runtime& runtime);

  /**
   * ULL_MPI_INIT: starts timing `iteration`. Calling it again for the open
   * iteration does nothing: the paper's Listing 1.3 calls it for every row.
   * Throws Error(bad_state) if another iteration is open.
   */
  void begin(int iteration);

  /**
   * ULL_MPI_END: stops timing `iteration` and, collectively over every
   * process, rebalances counts/displs (one entry per process, in elements of
   * the communication: units of size_object elements each) when
   * max(T) - min(T) > threshold_us. size_problem: units of the whole problem.
   * Every process gets the same error if any process's arguments or state
   * are wrong. Returns true if the counts changed.
   */
  bool end(int iteration, std::span<int> counts, std::span<int> displs, int threshold_us,
           int size_object, int size_problem);

  /// Forgets an open iteration (iteration 0 starts the calibration of a loop).
  void restart();

  [[nodiscard]] int calibrations() const { return calibrations_; }
  [[nodiscard]] int rebalances() const { return rebalances_; }

 private:
  /// The arguments' and the state's error on this process, if any.
  [[nodiscard]] std::optional<Error> check_end(int iteration, std::span<const int> counts,
                                               std::span<const int> displs, int threshold_us,
                                               int size_object, int size_problem) const;
  /// This process's computation since begin(), stretched by its emulated speed (seconds).
  double measure_section(double units);
  /// The ULL rule over every process's time: new counts/displs if they change.
  bool rebalance(std::span<int> counts, std::span<int> displs, std::span<const double> times_us,
                 int threshold_us, int size_object, int size_problem);

  Runtime& runtime_;
  bool open_ = false;
  int open_iteration_ = 0;
  ComputationStopwatch stopwatch_;
  int calibrations_ = 0;
  int rebalances_ = 0;
};

}  // namespace flexmpi
