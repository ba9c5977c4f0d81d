#include "balancing/ull/ull_partitioner.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "flexmpi/error.hpp"

namespace flexmpi {

bool ull_should_balance(const std::vector<double>& times, double threshold) {
  if (times.empty()) return false;
  const auto [low, high] = std::minmax_element(times.begin(), times.end());
  return *high - *low > threshold;
}

std::vector<std::int64_t> ull_counts(const std::vector<std::int64_t>& counts,
                                     const std::vector<double>& times, std::int64_t size_problem) {
  const std::size_t p = counts.size();
  if (p == 0 || times.size() != p)
    throw Error(Errc::invalid_argument, "one count and one time per process are needed");
  if (size_problem < 0) throw Error(Errc::invalid_argument, "size_problem is negative");
  std::vector<double> power(p);
  for (std::size_t i = 0; i < p; ++i) {
    if (counts[i] < 0)
      throw Error(Errc::invalid_argument, "count of process " + std::to_string(i) + " is negative");
    if (!(times[i] > 0.0) || !std::isfinite(times[i])) {
      throw Error(Errc::invalid_argument,
                  "time of process " + std::to_string(i) + " is not a positive number");
    }
    power[i] = static_cast<double>(counts[i]) / times[i];  // RP[i] = counts[i] / T[i]
  }
  const double total_power = std::accumulate(power.begin(), power.end(), 0.0);  // SRP
  if (!(total_power > 0.0) || !std::isfinite(total_power))
    throw Error(Errc::invalid_argument, "no process did any work");
  std::vector<std::int64_t> result(p);
  std::int64_t given = 0;
  for (std::size_t i = 0; i + 1 < p; ++i) {
    // Truncation as in the paper; a share within round-off of an integer
    // (4000 computed as 3999.9999999) counts as that integer.
    const double share = static_cast<double>(size_problem) * power[i] / total_power;
    result[i] = static_cast<std::int64_t>(std::floor(share + 1e-9 * std::max(1.0, share)));
    given += result[i];
  }
  result[p - 1] = size_problem - given;  // >= 0: the truncated shares sum to at most size_problem
  if (size_problem >= static_cast<std::int64_t>(p)) {
    for (std::size_t i = 0; i < p; ++i) {
      while (result[i] < 1) {
        ++result[i];
        --*std::max_element(result.begin(), result.end());
      }
    }
  }
  return result;
}

PartitionResult UllPartitioner::partition(const PartitionInput& input) {
  const std::size_t p = input.current.size();
  auto keep = [&](const std::string& why) {
    return PartitionResult{input.current, "ull: " + why + ": partition kept"};
  };
  if (p == 0 || input.computation_time.size() != p)
    return keep("no computation time for every process");
  if (p == 1) return keep("one process, nothing to balance");
  // T_i of one iteration, for the threshold; counts_i: rows, or the block's
  // workload under the nnz/weight models.
  std::vector<double> times(p), work(p);
  std::vector<std::int64_t> counts(p);
  for (std::size_t i = 0; i < p; ++i) {
    const double iterations = input.iterations.empty() ? 1.0 : input.iterations[i];
    times[i] = iterations > 0.0 ? input.computation_time[i] / iterations : 0.0;
    counts[i] = input.current[i].count;
    if (!input.row_work.empty()) {
      const RowBlock& b = input.current[i];
      if (b.displ < 0 || b.displ + b.count > static_cast<std::int64_t>(input.row_work.size())) {
        return keep("the blocks do not match row_work");
      }
      work[i] = std::accumulate(input.row_work.begin() + b.displ,
                                input.row_work.begin() + b.displ + b.count, 0.0);
    }
  }
  for (std::size_t i = 0; i < p; ++i) {
    // A time that is not a positive number gives no relative power.
    if (!(times[i] > 0.0) || !std::isfinite(times[i])) {
      return keep("time of process " + std::to_string(i) + " is not a positive number");
    }
  }
  if (!ull_should_balance(times, threshold_)) return {input.current, ""};
  try {
    if (input.row_work.empty()) {
      return {blocks_from_counts(ull_counts(counts, times, input.global_size)), ""};
    }
    std::vector<double> power(p);
    for (std::size_t i = 0; i < p; ++i) power[i] = work[i] / times[i];
    return {cut_by_work(input.row_work, power), ""};
  } catch (const Error& e) {
    return keep(e.what());
  }
}

PartitionerDescriptor ull_partitioner() {
  return {"ull",
          "RP = rows / time of the last iteration (ULL calibrate library, Galindo et al. sec. 4)",
          {},
          false,
          [](const Config&) { return std::make_unique<UllPartitioner>(); }};
}

}  // namespace flexmpi
