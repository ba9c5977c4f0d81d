#include "emulation/speed_emulator.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

#include "flexmpi/error.hpp"
#include "util/clock.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace flexmpi {
namespace {

bool valid_speed(double speed) { return speed > 0.0 && speed <= 1.0; }

// The whole of `text` as a finite number, or nothing.
bool parse_number(std::string_view text, double& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size() &&
         std::isfinite(value);
}

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// One item of FLEXMPI_EMULATE_SPEED: SPEED or SPEED@SIZE:SPEED[@SIZE:SPEED...].
SpeedFunction parse_item(std::string_view field, int item) {
  const std::string where = "item " + std::to_string(item) + " '" + std::string(field) + "'";
  auto speed_of = [&](std::string_view text) {
    double value = 0.0;
    if (!parse_number(text, value)) {
      throw Error(Errc::invalid_argument,
                  where + (text == field ? " is not a number"
                                         : ": speed '" + std::string(text) + "' is not a number"));
    }
    if (!valid_speed(value)) {
      throw Error(Errc::invalid_argument,
                  where + (text == field ? "" : ": speed '" + std::string(text) + "'") +
                      " is outside (0, 1]: a core can only be made slower");
    }
    return value;
  };
  const std::size_t at = field.find('@');
  if (at == std::string_view::npos) return SpeedFunction(speed_of(field));

  std::vector<double> speeds = {speed_of(field.substr(0, at))};
  std::vector<double> sizes;
  std::string_view rest = field.substr(at + 1);
  while (true) {
    const std::size_t next = rest.find('@');
    const std::string_view step = rest.substr(0, next);
    const std::size_t colon = step.find(':');
    if (colon == std::string_view::npos) {
      throw Error(Errc::invalid_argument,
                  where + ": '" + std::string(step) +
                      "' should be SIZE:SPEED (e.g. 0.9@2000:0.3 = 0.9 for the first "
                      "2000 work units, 0.3 beyond)");
    }
    double size = 0.0;
    const std::string_view size_text = step.substr(0, colon);
    if (!parse_number(size_text, size) || size <= 0.0) {
      throw Error(Errc::invalid_argument, where + ": size '" + std::string(size_text) +
                                              "' is not a positive number of work units");
    }
    if (!sizes.empty() && size <= sizes.back()) {
      throw Error(Errc::invalid_argument, where + ": sizes must increase (" +
                                              std::string(size_text) + " after " +
                                              format_number(sizes.back()) + ")");
    }
    sizes.push_back(size);
    speeds.push_back(speed_of(step.substr(colon + 1)));
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }
  return SpeedFunction(std::move(speeds), std::move(sizes));
}

}  // namespace

SpeedFunction::SpeedFunction(double speed) : speeds_{speed} {
  if (!valid_speed(speed)) throw Error(Errc::invalid_argument, "speed must be in (0, 1]");
}

SpeedFunction::SpeedFunction(std::vector<double> speeds, std::vector<double> sizes)
    : speeds_(std::move(speeds)), sizes_(std::move(sizes)) {
  if (speeds_.size() != sizes_.size() + 1) {
    throw Error(Errc::invalid_argument, "a speed function needs one speed more than sizes");
  }
  for (const double s : speeds_) {
    if (!valid_speed(s)) throw Error(Errc::invalid_argument, "speed must be in (0, 1]");
  }
  for (std::size_t j = 0; j < sizes_.size(); ++j) {
    if (!(std::isfinite(sizes_[j]) && sizes_[j] > 0.0) || (j > 0 && sizes_[j] <= sizes_[j - 1])) {
      throw Error(Errc::invalid_argument, "sizes must be positive and increasing");
    }
  }
}

bool SpeedFunction::slows_down() const {
  for (const double s : speeds_) {
    if (s < 1.0) return true;
  }
  return false;
}

double SpeedFunction::emulated_units(double work_units) const {
  if (work_units <= 0.0) return 0.0;
  // Each unit costs 1 / (speed of its segment): the time is continuous in the
  // size, so the emulated application always has a balanced partition.
  double units = 0.0;
  double start = 0.0;
  for (std::size_t j = 0; j < speeds_.size(); ++j) {
    const double end = j < sizes_.size() ? sizes_[j] : work_units;
    if (work_units <= start) break;
    units += (std::min(work_units, end) - start) / speeds_[j];
    start = end;
  }
  return units;
}

double SpeedFunction::effective_speed(double work_units) const {
  if (!(work_units > 0.0) || constant()) return base_speed();
  return work_units / emulated_units(work_units);
}

std::string SpeedFunction::text() const {
  std::ostringstream text;
  text << speeds_.front();
  for (std::size_t j = 0; j < sizes_.size(); ++j) text << '@' << sizes_[j] << ':' << speeds_[j + 1];
  return text.str();
}

std::vector<SpeedFunction> parse_speed_list(std::string_view text) {
  std::vector<SpeedFunction> functions;
  std::size_t position = 0;
  int item = 1;
  while (position <= text.size()) {
    const std::size_t comma = text.find(',', position);
    const std::string_view field = text.substr(
        position, comma == std::string_view::npos ? std::string_view::npos : comma - position);
    if (field.empty())
      throw Error(Errc::invalid_argument, "item " + std::to_string(item) + " '' is not a number");
    functions.push_back(parse_item(field, item));
    if (comma == std::string_view::npos) break;
    position = comma + 1;
    ++item;
  }
  return functions;
}

std::optional<EmulationMode> parse_emulation_mode(std::string_view text) {
  if (text == "burn") return EmulationMode::burn;
  if (text == "sleep") return EmulationMode::sleep;
  return std::nullopt;
}

double emulation_delay(double computation_seconds, double emulated_seconds) {
  return std::max(0.0, emulated_seconds - std::max(0.0, computation_seconds));
}

bool emulation_late(double computation_seconds, double emulated_seconds) {
  return computation_seconds > emulated_seconds;
}

void busy_wait(double seconds) {
  if (seconds <= 0.0) return;
  const double until = wall_seconds() + seconds;
  while (wall_seconds() < until) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }
}

double burn_cpu(double seconds) {
  const double start = cpu_seconds();
  double now = start;
  while (now - start < seconds) now = cpu_seconds();  // each read is a system call: no PAUSE needed
  return now - start;
}

timespec monotonic_deadline(double start_seconds, double seconds) {
  const double whole = std::floor(start_seconds);
  // Nanoseconds past the whole second; a fraction that rounds up to 1e9 carries.
  const long long nanoseconds = std::llround((start_seconds - whole + seconds) * 1e9);
  timespec deadline{};
  deadline.tv_sec = static_cast<time_t>(whole) + static_cast<time_t>(nanoseconds / 1'000'000'000);
  deadline.tv_nsec = nanoseconds % 1'000'000'000;
  return deadline;
}

void sleep_wait(double seconds) {
  if (seconds <= 0.0) return;
  const timespec deadline = monotonic_deadline(wall_seconds(), seconds);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {
  }
}

SpeedEmulator::SpeedEmulator(double speed, EmulationMode mode) : function_(speed), mode_(mode) {}

SpeedEmulator::SpeedEmulator(SpeedFunction function, WorkSource work, EmulationMode mode)
    : function_(std::move(function)), work_(std::move(work)), mode_(mode) {}

SpeedEmulator SpeedEmulator::for_rank(const std::vector<double>& speeds, int rank) {
  if (rank >= 0 && static_cast<std::size_t>(rank) < speeds.size())
    return SpeedEmulator(speeds[rank]);
  return SpeedEmulator(1.0);
}

SpeedEmulator SpeedEmulator::for_rank(const std::vector<SpeedFunction>& functions, int rank,
                                      WorkSource work, EmulationMode mode) {
  if (rank >= 0 && static_cast<std::size_t>(rank) < functions.size()) {
    return SpeedEmulator(functions[static_cast<std::size_t>(rank)], std::move(work), mode);
  }
  return SpeedEmulator(1.0, mode);
}

std::string SpeedEmulator::describe() const {
  const std::string waiting =
      mode_ == EmulationMode::sleep ? ", sleeping the extra time (FLEXMPI_EMULATE_MODE=sleep)" : "";
  if (function_.constant()) return function_.text() + waiting;
  return function_.text() + " (SPEED@SIZE:SPEED: work units beyond SIZE run at the next speed)" +
         waiting;
}

bool SpeedEmulator::slow_down(double computation_seconds) {
  return slow_down(computation_seconds, work_ ? work_() : 0.0);
}

double SpeedEmulator::emulated(double work_units) const {
  // Unknown work: one unit per iteration, at the speed of small partitions.
  return work_units > 0.0 ? function_.emulated_units(work_units) : 1.0 / function_.base_speed();
}

double SpeedEmulator::slowdown(double work_units) const {
  return work_units > 0.0 ? emulated(work_units) / work_units : emulated(work_units);
}

double SpeedEmulator::wait(double seconds) const {
  const double start = wall_seconds();
  // The same target in both modes: only the way of waiting differs.
  if (mode_ == EmulationMode::sleep) {
    sleep_wait(seconds);
  } else {
    busy_wait(seconds);
  }
  return wall_seconds() - start;
}

void SpeedEmulator::fix_unit_seconds(double seconds) {
  if (!(seconds > 0.0) || !std::isfinite(seconds)) {
    throw Error(Errc::invalid_argument,
                "the time per work unit must be a positive number of seconds, not " +
                    std::to_string(seconds));
  }
  unit_seconds_ = seconds;
}

void SpeedEmulator::computation_starts() {
  if (!active()) return;
  stretch_cpu_start_ = cpu_seconds();
  in_stretch_ = true;
}

void SpeedEmulator::close_stretch() {
  // A nested MPI call (a wrapper that calls another wrapped function) ends no stretch.
  if (!in_stretch_) return;
  work_cpu_ += std::max(0.0, cpu_seconds() - stretch_cpu_start_);
  in_stretch_ = false;
}

void SpeedEmulator::before_communication(double computation_seconds) {
  if (!active() || !in_stretch_) return;
  close_stretch();
  pad(computation_seconds, work_ ? work_() : 0.0, false);
}

bool SpeedEmulator::slow_down(double computation_seconds, double work_units) {
  if (!active()) return false;
  close_stretch();
  const bool late = pad(computation_seconds, work_units, true);
  work_cpu_ = burned_cpu_ = padded_ = 0.0;
  return late;
}

bool SpeedEmulator::pad(double computation_seconds, double work_units, bool iteration_ends) {
  const double least = iteration_ends ? 0.0 : least_pad();
  if (unit_seconds_ == 0.0 && mode_ == EmulationMode::burn) {
    // The slower core's extra work, in CPU time: shared with another
    // program, the spin takes the longer for it, as the work would.
    const double owed = work_cpu_ * (slowdown(work_units) - 1.0) - burned_cpu_;
    if (owed > least) {
      const double start = wall_seconds();
      burned_cpu_ += burn_cpu(owed);
      padded_ += wall_seconds() - start;
    }
    return false;
  }
  // A wall-time target: the work's CPU time / s (sleep), or the fixed unit
  // time x the work (FLEXMPI_EMULATE_UNIT_SECONDS), never beyond the CPU
  // time / s before the iteration ends, so that each stretch is slow where
  // it computes.
  const double measured = work_cpu_ * slowdown(work_units);
  const double target = unit_seconds_ > 0.0 ? unit_seconds_ * emulated(work_units) : measured;
  const double delay =
      emulation_delay(computation_seconds, iteration_ends ? target : std::min(target, measured));
  const double real = computation_seconds - padded_;
  if (delay > least) padded_ += wait(delay);
  return iteration_ends && emulation_late(real, target);
}

}  // namespace flexmpi
