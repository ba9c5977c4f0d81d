// Computation cost of the prediction model (computation_model.hpp; thesis
// 5.3.1, eq. 5.3).
#include "model/computation_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "flexmpi/error.hpp"
#include "util/json_keys.hpp"
#include "util/number_range.hpp"
#include "util/statistics.hpp"
#include "util/text_file.hpp"

namespace flexmpi {

namespace {

using nlohmann::json;

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Errc::invalid_argument, "computation model: " + message);
}

bool finite_non_negative(double x) { return x >= 0.0 && std::isfinite(x); }

// The ranges of a work profile's numbers: an interval's work (rows,
// nonzeros, counted operations) and speed up to 1e18, its seconds up to 1e9
// (31 years), partitions of int rows. Beyond them a sum or a quotient
// overflowed to infinity inside a policy's search, mid-run, far from the file.
constexpr int kIntMax = std::numeric_limits<int>::max();
constexpr NumberRange kInterval{0, kIntMax, false, true};
constexpr NumberRange kIterations{1, kIntMax, false, true};
constexpr NumberRange kWork{0.0, 1e18};
constexpr NumberRange kSeconds{0.0, 1e9};
constexpr NumberRange kRows{0, kIntMax, false, true};

// One line of a work profile; every failure names the source, the line and the key.
class LineReader {
 public:
  LineReader(std::string_view source, int line) : source_(source), line_(line) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(Errc::bad_config, "work profile " + std::string(source_) + ":" +
                                      std::to_string(line_) + ": key '" + key + "': " + what);
  }

  int integer(const json& record, const char* key, const NumberRange& range) const {
    const auto it = record.find(key);
    if (it == record.end()) fail(key, "missing");
    if (!it->is_number_integer() || !range.contains(it->get<double>())) {
      fail(key, range.expected(it->dump()));
    }
    return it->get<int>();
  }

  std::vector<double> numbers(const json& record, const char* key, const NumberRange& range) const {
    const auto it = record.find(key);
    if (it == record.end()) fail(key, "missing");
    if (!it->is_array() || it->empty()) fail(key, "expected a non-empty array of numbers");
    std::vector<double> values;
    for (const json& value : *it) {
      if (!value.is_number() || !range.contains(value.get<double>())) {
        fail(key, range.expected(value.dump()) + " (in the array)");
      }
      values.push_back(value.get<double>());
    }
    return values;
  }

  ProfiledInterval interval(const json& record) const {
    if (!record.is_object()) fail("(line)", "expected a JSON object");
    ProfiledInterval p{integer(record, "interval", kInterval),
                       integer(record, "iterations", kIterations),
                       numbers(record, "metric_count", kWork),
                       {}};
    if (record.contains("wall_time")) {
      const std::vector<double> wall = numbers(record, "wall_time", kSeconds);
      p.seconds = *std::max_element(wall.begin(), wall.end());
    }
    if (record.contains("speed")) {
      const std::vector<double> speeds = numbers(record, "speed", kWork);
      p.speed = std::accumulate(speeds.begin(), speeds.end(), 0.0);
    }
    if (record.contains("mpi_time")) {
      const std::vector<double> mpi = numbers(record, "mpi_time", kSeconds);
      p.least_mpi = *std::min_element(mpi.begin(), mpi.end());
    }
    const char* key = record.contains("partition_before") ? "partition_before" : "partition";
    if (!record.contains(key)) return p;  // a run that did not balance traces no partition
    for (double rows : numbers(record, key, kRows))
      p.rows.push_back(static_cast<std::int64_t>(rows));
    if (p.rows.size() != p.work.size()) {
      fail(key, "expected one entry per process of metric_count (" + std::to_string(p.work.size()) +
                    "), got " + std::to_string(p.rows.size()));
    }
    return p;
  }

 private:
  std::string_view source_;
  int line_;
};

}  // namespace

double ProfiledInterval::total() const { return std::accumulate(work.begin(), work.end(), 0.0); }

WorkProfile WorkProfile::load(const std::string& path) {
  std::istringstream in(read_text_file(path, "work profile (FLEXMPI_PROFILE)", Errc::bad_config));
  return parse(in, path);
}

WorkProfile WorkProfile::parse(std::istream& in, std::string_view source) {
  WorkProfile profile;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const LineReader reader(source, line);
    json record;
    try {
      record = parse_json_with_unique_keys(text);
    } catch (const json::exception& error) {
      reader.fail("(line)", std::string("not valid JSON: ") + error.what());
    } catch (const DuplicateJsonKey& duplicate) {
      reader.fail(duplicate.key, std::string(kDuplicateJsonKeyWhat));
    }
    // A checkpoint's record says when one was written: no interval.
    if (record.is_object() && record.contains("checkpoint")) continue;
    profile.intervals_.push_back(reader.interval(record));
  }
  if (profile.intervals_.empty()) {
    throw Error(Errc::bad_config, "work profile " + std::string(source) + ": no interval");
  }
  std::stable_sort(profile.intervals_.begin(), profile.intervals_.end(),
                   [](const auto& a, const auto& b) { return a.interval < b.interval; });
  return profile;
}

double WorkProfile::traced_seconds() const {
  double seconds = 0.0;
  for (const ProfiledInterval& p : intervals_) {
    if (!(p.seconds > 0.0)) return 0.0;
    seconds += p.seconds;
  }
  return seconds;
}

const ProfiledInterval* WorkProfile::find(int interval) const {
  const auto it = std::lower_bound(intervals_.begin(), intervals_.end(), interval,
                                   [](const ProfiledInterval& p, int i) { return p.interval < i; });
  return it != intervals_.end() && it->interval == interval ? &*it : nullptr;
}

double extrapolate(std::span<const double> history, int window) {
  if (history.empty() || window < 1) {
    invalid("extrapolation: expected a non-empty history and window >= 1");
  }
  for (double value : history) {
    if (!finite_non_negative(value)) invalid("extrapolation: expected work >= 0");
  }
  const auto recent = history.last(std::min(history.size(), static_cast<std::size_t>(window)));
  const double n = static_cast<double>(recent.size());
  if (recent.size() == 1) return recent[0];
  // Least squares of y = a + b x at x = 0 .. n-1, evaluated at x = n.
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < recent.size(); ++i) {
    const double x = static_cast<double>(i);
    sx += x;
    sy += recent[i];
    sxx += x * x;
    sxy += x * recent[i];
  }
  const double b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  const double a = (sy - b * sx) / n;
  return std::max(0.0, a + b * n);
}

ProfileCorrection::ProfileCorrection(double threshold) : threshold_(threshold) {
  if (!finite_non_negative(threshold)) {
    invalid("profile correction threshold: expected a fraction >= 0, got " +
            std::to_string(threshold));
  }
}

void ProfileCorrection::observe(double profiled, double measured) {
  if (!finite_non_negative(profiled) || !finite_non_negative(measured)) {
    invalid("profile correction: expected profiled and measured work >= 0");
  }
  if (profiled == 0.0) return;
  const double ratio = measured / profiled;
  factor_ = std::abs(ratio - 1.0) > threshold_ ? ratio : 1.0;
}

std::vector<ProfiledStep> profiled_steps(const WorkProfile& profile, int current) {
  const std::vector<ProfiledInterval>& intervals = profile.intervals();
  const auto first = std::find_if(intervals.begin(), intervals.end(),
                                  [&](const ProfiledInterval& p) { return p.interval == current; });
  if (first == intervals.end()) return {};
  // Per profiled interval (0: not traced): its summed speed, the overhead of
  // an iteration, and the computation's measured over modelled time.
  std::vector<double> speed, overhead, inefficiency;
  for (const ProfiledInterval& p : intervals) {
    const double seconds = p.seconds / p.iterations, extra = p.least_mpi / p.iterations;
    const double modelled = p.speed > 0.0 ? p.total() / p.iterations / p.speed : 0.0;
    speed.push_back(p.speed);
    overhead.push_back(p.seconds > 0.0 ? extra : 0.0);
    inefficiency.push_back(seconds > extra && modelled > 0.0 ? (seconds - extra) / modelled : 0.0);
  }
  // The median of the traced values within two intervals of `i` (0: none traced).
  const auto smoothed = [](const std::vector<double>& values, std::size_t i) {
    std::vector<double> window;
    for (std::size_t k = i >= 2 ? i - 2 : 0; k <= i + 2 && k < values.size(); ++k) {
      if (values[k] > 0.0) window.push_back(values[k]);
    }
    return window.empty() ? 0.0 : median(window);
  };
  const auto start = static_cast<std::size_t>(first - intervals.begin());
  const double speed_now = smoothed(speed, start);
  std::vector<ProfiledStep> steps;
  for (std::size_t i = start; i < intervals.size(); ++i) {
    const ProfiledInterval& p = intervals[i];
    const double speed_then = smoothed(speed, i);
    const double rescale = speed_now > 0.0 && speed_then > 0.0 ? speed_now / speed_then : 1.0;
    const double measured = smoothed(inefficiency, i);
    steps.push_back({p.iterations, static_cast<int>(p.work.size()),
                     p.total() / p.iterations * rescale, measured > 0.0 ? measured : 1.0,
                     smoothed(overhead, i)});
  }
  return steps;
}

double profiled_work(const WorkProfile& profile, int next, int iterations,
                     const ProfileCorrection& correction) {
  const ProfiledInterval* p = profile.find(next);
  if (p == nullptr) invalid("the work profile has no interval " + std::to_string(next));
  if (iterations < 1) invalid("iterations: expected >= 1, got " + std::to_string(iterations));
  return p->total() / p->iterations * iterations * correction.factor();
}

void spread_work(double total, std::span<const double> measured_work,
                 std::span<const std::int64_t> measured_rows, std::span<const std::int64_t> rows,
                 std::span<double> out) {
  if (measured_work.size() != measured_rows.size() || rows.size() != out.size() ||
      !finite_non_negative(total)) {
    invalid(
        "spread_work: expected one measured work per measured block, one output per "
        "candidate block, total >= 0");
  }
  std::int64_t measured_total = 0, candidate_total = 0;
  double work_total = 0.0;
  for (std::size_t j = 0; j < measured_rows.size(); ++j) {
    if (measured_rows[j] < 0 || !finite_non_negative(measured_work[j])) {
      invalid("spread_work: expected measured rows and work >= 0");
    }
    measured_total += measured_rows[j];
    work_total += measured_work[j];
  }
  for (std::int64_t r : rows) {
    if (r < 0) invalid("spread_work: expected candidate rows >= 0");
    candidate_total += r;
  }
  if (measured_total != candidate_total || measured_total == 0) {
    invalid("spread_work: the candidate partition covers " + std::to_string(candidate_total) +
            " rows, the measured one " + std::to_string(measured_total) +
            ": expected the same, > 0");
  }
  // Per-row density of block j: its work over its rows (uniform if nothing was measured).
  const auto density = [&](std::size_t j) {
    return work_total > 0.0 ? measured_work[j] / static_cast<double>(measured_rows[j])
                            : 1.0 / static_cast<double>(measured_total);
  };
  const double scale = total / (work_total > 0.0 ? work_total : 1.0);
  std::size_t j = 0;
  std::int64_t left_in_j = measured_rows.empty() ? 0 : measured_rows[0];
  for (std::size_t i = 0; i < rows.size(); ++i) {
    double work = 0.0;
    for (std::int64_t need = rows[i]; need > 0;) {
      while (left_in_j == 0) left_in_j = measured_rows[++j];
      const std::int64_t take = std::min(need, left_in_j);
      work += static_cast<double>(take) * density(j);
      need -= take;
      left_in_j -= take;
    }
    out[i] = work * scale;
  }
}

ComputationTime computation_time(std::span<const double> work, std::span<const double> speeds) {
  if (work.size() != speeds.size()) {
    invalid("computation time: expected one speed per process, got " +
            std::to_string(speeds.size()) + " for " + std::to_string(work.size()));
  }
  ComputationTime t;
  double total_work = 0.0, total_speed = 0.0;
  for (std::size_t i = 0; i < work.size(); ++i) {
    if (!finite_non_negative(work[i]) || !(speeds[i] > 0.0 || work[i] == 0.0)) {
      invalid("computation time of process " + std::to_string(i) +
              ": expected work >= 0 and speed > 0");
    }
    if (work[i] > 0.0) t.slowest = std::max(t.slowest, work[i] / speeds[i]);
    total_work += work[i];
    total_speed += std::isfinite(speeds[i]) ? speeds[i] : 0.0;
  }
  t.balanced = total_speed > 0.0 ? total_work / total_speed : 0.0;  // eq. 5.3
  return t;
}

}  // namespace flexmpi
