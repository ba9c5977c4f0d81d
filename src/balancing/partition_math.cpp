#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "balancing/partitioner.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {

std::vector<std::int64_t> proportional_counts(std::int64_t total, const std::vector<double>& shares,
                                              std::int64_t minimum) {
  const std::size_t n = shares.size();
  if (n == 0) throw Error(Errc::invalid_argument, "proportional_counts: no process");
  const double sum = std::accumulate(shares.begin(), shares.end(), 0.0);
  if (!(sum > 0.0) || !std::isfinite(sum))
    throw Error(Errc::invalid_argument, "proportional_counts: shares sum to zero");
  std::vector<std::int64_t> counts(n, 0);
  std::vector<std::pair<double, std::size_t>> remainders;
  std::int64_t given = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double exact = static_cast<double>(total) * shares[i] / sum;
    counts[i] = static_cast<std::int64_t>(std::floor(exact));
    given += counts[i];
    remainders.emplace_back(exact - static_cast<double>(counts[i]), i);
  }
  // Largest remainder: hand out the rows lost to flooring, so the sum is exact.
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t j = 0; given < total; ++j, ++given) ++counts[remainders[j % n].second];
  // A process with no rows could not be measured again: top it up from the
  // largest block, when there are enough rows for everybody.
  if (minimum * static_cast<std::int64_t>(n) <= total) {
    for (std::size_t i = 0; i < n; ++i) {
      while (counts[i] < minimum) {
        ++counts[i];
        --*std::max_element(counts.begin(), counts.end());
      }
    }
  }
  return counts;
}

Decomposition blocks_from_counts(const std::vector<std::int64_t>& counts) {
  Decomposition blocks;
  blocks.reserve(counts.size());
  std::int64_t displ = 0;
  for (const std::int64_t count : counts) {
    blocks.push_back({count, displ});
    displ += count;
  }
  return blocks;
}

Decomposition cut_by_work(const std::vector<double>& row_work, const std::vector<double>& shares) {
  const auto rows = static_cast<std::int64_t>(row_work.size());
  const auto n = static_cast<std::int64_t>(shares.size());
  const double share_sum = std::accumulate(shares.begin(), shares.end(), 0.0);
  if (n == 0 || !(share_sum > 0.0)) throw Error(Errc::invalid_argument, "cut_by_work: bad shares");
  const double total = std::accumulate(row_work.begin(), row_work.end(), 0.0);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(n), 0);
  std::int64_t row = 0;
  double done = 0.0;    // work of rows already assigned
  double target = 0.0;  // cumulative work the processes so far should hold
  for (std::int64_t p = 0; p < n; ++p) {
    target += total * shares[p] / share_sum;
    const std::int64_t reserved = rows >= n ? n - p - 1 : 0;  // one row for each later process
    std::int64_t end = row;
    if (p == n - 1) {
      end = rows;
    } else {
      // Take rows while that brings the cumulative work closer to the target.
      while (end < rows - reserved &&
             std::abs(done + row_work[end] - target) <= std::abs(done - target)) {
        done += row_work[end++];
      }
      if (end == row && rows >= n && end < rows - reserved) done += row_work[end++];
    }
    counts[static_cast<std::size_t>(p)] = end - row;
    row = end;
  }
  return blocks_from_counts(counts);
}

std::vector<std::int64_t> split_rows(std::int64_t rows, const std::vector<double>& row_work,
                                     const std::vector<double>& shares) {
  const bool known = rows > 0 && row_work.size() == static_cast<std::size_t>(rows) &&
                     std::accumulate(row_work.begin(), row_work.end(), 0.0) > 0.0;
  if (!known) return proportional_counts(rows, shares, 1);
  std::vector<std::int64_t> counts;
  for (const RowBlock& block : cut_by_work(row_work, shares)) counts.push_back(block.count);
  return counts;
}

PartitionResult partition_by_speed(const PartitionInput& input) {
  for (std::size_t p = 0; p < input.speed.size(); ++p) {
    // A process whose speed could not be measured (no work, no time, NaN)
    // gives no basis for a new partition: keep the current one.
    if (!(std::isfinite(input.speed[p]) && input.speed[p] > 0.0)) {
      return {input.current, "speed of process " + std::to_string(p) +
                                 " is not a positive number: partition kept"};
    }
  }
  if (input.row_work.empty()) {
    // computeDataDistribution: count_i = size * RCP_i, rounded exactly.
    return {blocks_from_counts(proportional_counts(input.global_size, input.speed, 1)), ""};
  }
  return {cut_by_work(input.row_work, input.speed), ""};
}

bool covers_exactly(const Decomposition& blocks, std::int64_t size) {
  std::int64_t next = 0;
  for (const RowBlock& block : blocks) {
    if (block.count < 0 || block.displ != next) return false;
    next += block.count;
  }
  return next == size;
}

}  // namespace flexmpi
