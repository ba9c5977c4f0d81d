#include "balancing/fpm/speed_history.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace flexmpi {

SpeedHistory::SpeedHistory(std::size_t max_points, double merge_fraction)
    : max_points_(std::max<std::size_t>(max_points, 1)), merge_fraction_(merge_fraction) {}

void SpeedHistory::reset(std::size_t processes, double total) {
  models_.assign(processes, {});
  total_ = total;
  clock_ = 0;
}

void SpeedHistory::add(std::size_t p, double size, double speed) {
  if (p >= models_.size() || !(size > 0.0) || !std::isfinite(size) || !(speed > 0.0) ||
      !std::isfinite(speed)) {
    return;
  }
  std::vector<Entry>& model = models_[p];
  const auto near = std::find_if(model.begin(), model.end(), [&](const Entry& e) {
    return std::abs(e.point.size - size) <= merge_fraction_ * std::max(e.point.size, size);
  });
  if (near != model.end()) {
    size = 0.5 * (size + near->point.size);
    speed = 0.5 * (speed + near->point.speed);
    model.erase(near);
  }
  if (model.size() >= max_points_) {
    model.erase(std::min_element(model.begin(), model.end(),
                                 [](const Entry& a, const Entry& b) { return a.stamp < b.stamp; }));
  }
  const Entry entry{{size, speed}, ++clock_};
  model.insert(std::upper_bound(model.begin(), model.end(), size,
                                [](double s, const Entry& e) { return s < e.point.size; }),
               entry);
}

std::vector<SpeedPoint> SpeedHistory::points(std::size_t p) const {
  std::vector<SpeedPoint> out;
  if (p >= models_.size()) return out;
  out.reserve(models_[p].size());
  for (const Entry& e : models_[p]) out.push_back(e.point);
  return out;
}

std::string measure(const PartitionInput& input, FpmMeasurement& m) {
  const std::size_t p = input.current.size();
  if (p == 0) return "no process";
  if (input.computation_time.size() != p) return "no computation time for every process";
  if (!input.iterations.empty() && input.iterations.size() != p)
    return "iterations not given for every process";
  if (!input.row_work.empty() &&
      static_cast<std::int64_t>(input.row_work.size()) != input.global_size) {
    return "row_work does not have one entry per row";
  }
  if (!covers_exactly(input.current, input.global_size))
    return "the current blocks do not cover the rows";
  m = FpmMeasurement{};
  if (input.row_work.empty()) {
    m.total = static_cast<double>(input.global_size);
    for (const RowBlock& block : input.current) m.size.push_back(static_cast<double>(block.count));
  } else {
    // Workload of each block under the nnz/weight model (thesis 5.2).
    for (const RowBlock& block : input.current) {
      const auto first = input.row_work.begin() + block.displ;
      m.size.push_back(std::accumulate(first, first + block.count, 0.0));
    }
    m.total = std::accumulate(m.size.begin(), m.size.end(), 0.0);
  }
  if (!(m.total > 0.0) || !std::isfinite(m.total)) return "the decomposition has no work";
  for (std::size_t i = 0; i < p; ++i) {
    const double iterations = input.iterations.empty() ? 1.0 : input.iterations[i];
    const double seconds = input.computation_time[i];
    if (!(iterations > 0.0) || !std::isfinite(iterations)) {
      return "process " + std::to_string(i) + " ran no iteration";
    }
    if (!(seconds > 0.0) || !std::isfinite(seconds)) {
      return "computation time of process " + std::to_string(i) + " is not a positive number";
    }
    if (!(m.size[i] >= 0.0) || !std::isfinite(m.size[i])) {
      return "workload of process " + std::to_string(i) + " is not a number";
    }
    double dedicated = 1.0;  // share of the interval the process had its core
    if (input.wall_time.size() == p && input.cpu_time.size() == p && input.wall_time[i] > 0.0 &&
        input.cpu_time[i] > 0.0 && std::isfinite(input.cpu_time[i] / input.wall_time[i])) {
      dedicated = std::min(1.0, input.cpu_time[i] / input.wall_time[i]);
    }
    m.time.push_back(seconds * dedicated / iterations);
  }
  return "";
}

Decomposition blocks_for_sizes(const PartitionInput& input, const std::vector<double>& x) {
  std::vector<double> shares(x.size());
  std::transform(x.begin(), x.end(), shares.begin(),
                 [](double v) { return std::isfinite(v) && v > 0.0 ? v : 0.0; });
  if (input.row_work.empty()) {
    // The sizes sum to global_size: proportional_counts rounds each to a
    // neighbouring integer (largest remainder), keeping the sum exact.
    return blocks_from_counts(proportional_counts(input.global_size, shares, 1));
  }
  return cut_by_work(input.row_work, shares);
}

double relative_imbalance(const std::vector<double>& times) {
  if (times.empty()) return 0.0;
  const auto [low, high] = std::minmax_element(times.begin(), times.end());
  return *high > 0.0 ? (*high - *low) / *high : 0.0;
}

}  // namespace flexmpi
