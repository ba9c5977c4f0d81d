// Partial functional performance models (FPM paper, Rychkov, Clarke and
// Lastovetsky, sec. 2.2 and 4): for each process, the history of
// (partition size, speed) measurements from which its speed function
// s_i(x) = x / t_i(x) is approximated. Shared by the FPM partitioners.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "balancing/partitioner.hpp"

namespace flexmpi {

/// One measurement: a partition of `size` workload units ran at `speed` units per second.
struct SpeedPoint {
  double size = 0.0;
  double speed = 0.0;

  friend bool operator==(const SpeedPoint&, const SpeedPoint&) = default;
};

class SpeedHistory {
 public:
  /// max_points: points kept per process (the oldest go first). A new point
  /// closer than merge_fraction times its size to an earlier one is averaged
  /// with it (relative: near a memory cliff a few rows change the time a lot).
  explicit SpeedHistory(std::size_t max_points = 32, double merge_fraction = 0.002);

  /// Forgets everything; the next points are for `processes` processes and a
  /// problem of `total` workload units.
  void reset(std::size_t processes, double total);
  [[nodiscard]] std::size_t processes() const { return models_.size(); }
  [[nodiscard]] double total() const { return total_; }

  /// Adds process p's measurement (step 3 of the paper's sec. 4 procedure).
  /// A point at nearly the same size as an earlier one is merged with it
  /// (mean size and speed): two knots a few rows apart would turn
  /// measurement noise into huge spline slopes, and near convergence the
  /// partitions cluster, so averaging them cancels much of the noise of a
  /// shared machine. Ignores sizes <= 0 and speeds that are not positive and finite.
  void add(std::size_t p, double size, double speed);
  /// Process p's points, by increasing size.
  [[nodiscard]] std::vector<SpeedPoint> points(std::size_t p) const;

 private:
  struct Entry {
    SpeedPoint point;
    std::uint64_t stamp = 0;  // insertion order, to drop the oldest
  };
  std::size_t max_points_;
  double merge_fraction_;
  double total_ = 0.0;
  std::uint64_t clock_ = 0;
  std::vector<std::vector<Entry>> models_;  // per process, sorted by size
};

/// What one sampling interval measured, in the units FPM works in.
struct FpmMeasurement {
  double total = 0.0;        ///< n: workload units of the whole decomposition
  std::vector<double> size;  ///< x_i: workload units of each process's current block
  std::vector<double> time;  ///< t_i(x_i): seconds one iteration of that block took
};

/// Reads input into m: sizes from the blocks (rows, or the row_work of the
/// nnz/weight models), times per iteration from computation_time and
/// iterations. Both papers model dedicated processing elements, so when
/// wall and CPU times are given the share of the interval another job held
/// the core is removed: t = computation * Tcpu / Treal (at most 1). A
/// functional model then describes the processor, not the neighbours it had
/// during one interval. Returns why the input cannot be used ("" if it can).
std::string measure(const PartitionInput& input, FpmMeasurement& m);

/// Blocks whose workload follows the real-valued sizes x (sum ~ total):
/// rows rounded by largest remainder so they add up exactly (count model),
/// or cut along row_work (nnz/weight). Negative or non-finite x count as 0.
Decomposition blocks_for_sizes(const PartitionInput& input, const std::vector<double>& x);

/// (max - min) / max of the given times: the imbalance measure of thesis
/// Alg. 5, used for the residual imbalance of a computed partition.
double relative_imbalance(const std::vector<double>& times);

}  // namespace flexmpi
