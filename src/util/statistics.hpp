// Small statistics shared by monitoring, emulation and the model.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace flexmpi {

/// The median of `values` (the mean of the middle pair for an even count;
/// 0 for none). Takes a copy: nth_element reorders it.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  return 0.5 * (*middle + *std::max_element(values.begin(), middle));
}

/// The lower median: the middle element, the lower of the middle pair for an
/// even count (0 for none). For times that disturbances can only lengthen,
/// the better estimate of the undisturbed time of the two.
inline double lower_median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace flexmpi
