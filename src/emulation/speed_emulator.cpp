#include "emulation/speed_emulator.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

#include "monitoring/clock.hpp"

namespace flexmpi {

std::vector<double> parse_speed_list(std::string_view text) {
  std::vector<double> speeds;
  std::size_t position = 0;
  int item = 1;
  while (position <= text.size()) {
    const std::size_t comma = text.find(',', position);
    const std::string_view field =
        text.substr(position, comma == std::string_view::npos ? std::string_view::npos
                                                                : comma - position);
    double value = 0.0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (field.empty() || error != std::errc() || end != field.data() + field.size() ||
        !std::isfinite(value)) {
      throw std::invalid_argument("item " + std::to_string(item) + " '" + std::string(field) +
                                  "' is not a number");
    }
    if (value <= 0.0 || value > 1.0) {
      throw std::invalid_argument("item " + std::to_string(item) + " '" + std::string(field) +
                                  "' is outside (0, 1]: a core can only be made slower");
    }
    speeds.push_back(value);
    if (comma == std::string_view::npos) break;
    position = comma + 1;
    ++item;
  }
  return speeds;
}

double emulation_delay(double computation_seconds, double speed) {
  if (computation_seconds <= 0.0 || speed >= 1.0) return 0.0;
  return computation_seconds * (1.0 / speed - 1.0);
}

void busy_wait(double seconds) {
  if (seconds <= 0.0) return;
  const double until = wall_seconds() + seconds;
  while (wall_seconds() < until) {
  }
}

SpeedEmulator::SpeedEmulator(double speed) : speed_(speed) {
  if (!(speed > 0.0 && speed <= 1.0)) throw std::invalid_argument("speed must be in (0, 1]");
}

SpeedEmulator SpeedEmulator::for_rank(const std::vector<double>& speeds, int rank) {
  if (rank >= 0 && static_cast<std::size_t>(rank) < speeds.size()) return SpeedEmulator(speeds[rank]);
  return SpeedEmulator(1.0);
}

void SpeedEmulator::slow_down(double computation_seconds) const {
  busy_wait(emulation_delay(computation_seconds, speed_));
}

}  // namespace flexmpi
