// Partitioner "ull": the time-based balancing rule of the ULL calibrating
// library (Galindo, Almeida and Badia-Contelles, "Dynamic Load Balancing on
// Dedicated Heterogeneous Systems", sec. 4). Each process's relative power
// is the work it did per unit of time, RP_i = counts_i / T_i, and the new
// counts are size_problem * RP_i / sum RP. The same arithmetic serves
// FLEXMPI_PARTITIONER=ull and the ULL_MPI_calibrate compatibility API.
#pragma once

#include <cstdint>
#include <vector>

#include "balancing/partitioner.hpp"

namespace flexmpi {

/// The paper's test: balance when max(T) - min(T) > threshold (same unit).
bool ull_should_balance(const std::vector<double>& times, double threshold);

/**
 * New counts by the paper's rule: RP_i = counts_i / T_i, counts_i =
 * size_problem * RP_i / SRP truncated, the last process taking what
 * truncation left so that they add up to size_problem. This reproduces the
 * paper's example: 500/500/500 in 400/200/100 us -> 214/428/858. A process
 * left with no rows is given one (from the largest count) when
 * size_problem >= p, so that it can still be timed. Throws
 * Error(invalid_argument) naming the process on degenerate input: sizes that
 * differ, a time that is not a positive number, a negative count, no work.
 */
std::vector<std::int64_t> ull_counts(const std::vector<std::int64_t>& counts,
                                     const std::vector<double>& times, std::int64_t size_problem);

class UllPartitioner final : public Partitioner {
 public:
  /// threshold_seconds: per-iteration max(T) - min(T) below which the
  /// partition is kept. Through FLEXMPI_PARTITIONER it is 0: the imbalance
  /// detector of Alg. 5 (FLEXMPI_IMBALANCE_THRESHOLD) already decided.
  explicit UllPartitioner(double threshold_seconds = 0.0) : threshold_(threshold_seconds) {}
  std::string_view name() const override { return "ull"; }
  PartitionResult partition(const PartitionInput& input) override;

 private:
  double threshold_;
};

}  // namespace flexmpi
