// Emulation of slower processing elements (SPEC section 6).
//
// A process emulated at relative speed s < 1 busy-waits, after each monitored
// iteration, for the time a core of speed s would have needed beyond the real
// one: it looks like a dedicated slower core (CPU time ~ wall time), which a
// sleep would not. Nothing is active unless FLEXMPI_EMULATE_SPEED is set.
#pragma once

#include <string_view>
#include <vector>

namespace flexmpi {

/// Parses "1.0,0.5,..." (one relative speed in (0, 1] per rank).
/// Throws std::invalid_argument saying which item is wrong and why.
std::vector<double> parse_speed_list(std::string_view text);

/// Extra busy time that turns `computation_seconds` at full speed into the
/// time a core of relative speed `speed` needs: t * (1/s - 1).
double emulation_delay(double computation_seconds, double speed);

/// Spins on the CPU (no sleeping) for `seconds`.
void busy_wait(double seconds);

/// The slowdown of one process.
class SpeedEmulator {
 public:
  /// speed 1.0 disables the emulation.
  explicit SpeedEmulator(double speed = 1.0);
  /// Speed of `rank` from a parsed list; ranks past its end run at full speed.
  static SpeedEmulator for_rank(const std::vector<double>& speeds, int rank);

  [[nodiscard]] bool active() const { return speed_ < 1.0; }
  [[nodiscard]] double speed() const { return speed_; }
  /// Busy-waits the emulation delay for an iteration that computed this long.
  void slow_down(double computation_seconds) const;

 private:
  double speed_;
};

}  // namespace flexmpi
