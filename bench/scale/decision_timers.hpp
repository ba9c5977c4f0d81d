// One timed decision per flexmpi component that reads the gathered interval
// records, on a SyntheticJob (decision_scale_bench.cpp prints them).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "synthetic_job.hpp"

namespace flexmpi::bench {

struct Measurement {
  std::string component;
  std::string outcome;               ///< what the last decision did, for a sanity check
  std::vector<double> milliseconds;  ///< one per repetition
  /// Heap the component's state holds after the decision (glibc mallinfo2):
  /// what it keeps of the gathered records between intervals.
  std::size_t kept_bytes = 0;
};

/// The components, in the order of the table.
std::vector<std::string> decision_components();

/// `repetitions` decisions of decision_components()[component]; the state a
/// decision needs (a balancer's window of intervals, a forecaster's history,
/// an FPM partitioner's models) is built before each one, untimed.
Measurement measure_decision(const SyntheticJob& job, std::size_t component, int repetitions);

}  // namespace flexmpi::bench
