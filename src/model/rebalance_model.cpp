#include "model/rebalance_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "flexmpi/error.hpp"
#include "model/interval_predictor.hpp"

namespace flexmpi {

double busiest_process_bytes(const Decomposition& from, const Decomposition& to,
                             double bytes_per_row) {
  if (from.size() != to.size()) {
    throw Error(Errc::internal, "decompositions of different process counts");
  }
  std::int64_t busiest = 0;
  for (std::size_t p = 0; p < from.size(); ++p) {
    const std::int64_t first = std::max(from[p].displ, to[p].displ);
    const std::int64_t last = std::min(from[p].displ + from[p].count, to[p].displ + to[p].count);
    const std::int64_t kept = std::max<std::int64_t>(0, last - first);
    busiest = std::max(busiest, (from[p].count - kept) + (to[p].count - kept));
  }
  return static_cast<double>(busiest) * bytes_per_row;
}

RedistributionCost::RedistributionCost(double latency_seconds, double seconds_per_byte)
    : latency_seconds_(latency_seconds), seconds_per_byte_(seconds_per_byte) {
  for (const double value : {latency_seconds, seconds_per_byte}) {
    if (!(value >= 0.0) || !std::isfinite(value)) {
      throw Error(Errc::invalid_argument,
                  fmt::format("redistribution price: latency {} s, {} s per byte: expected "
                              "finite values >= 0",
                              latency_seconds, seconds_per_byte));
    }
  }
}

double RedistributionCost::predict(double bytes) const {
  return latency_seconds_ + std::max(0.0, bytes) * seconds_per_byte_;
}

void RedistributionCost::observe(double bytes, double seconds) {
  if (!(bytes > 0.0) || !(seconds > 0.0) || !std::isfinite(seconds)) return;
  // Each term learns in proportion to its share of the predicted cost, as a
  // step in log space: a move of a few hundred bytes, whose prediction is
  // all handshake, teaches the handshake's price and hardly the price per
  // byte. Charging all of it to the bytes turned a 432-byte
  // move that took 4 ms on a busy machine into 1.5 us per byte, 1,500 times
  // a copy's, and priced every later move of real rows out of the run. The
  // first measurement replaces the default or calibrated price, later ones
  // take half a step (one disturbed measurement does not set it alone).
  const double predicted = predict(bytes);
  const double latency_share = predicted > 0.0 ? latency_seconds_ / predicted : 0.0;
  const double step = observations_ == 0 ? 1.0 : 0.5;
  const auto learn = [&](double& price, double measured, double share) {
    if (price <= 0.0) {  // a zero price has no scale: the measurement sets it
      price = measured;
      return;
    }
    // Nothing left for this term shrinks it, never to zero at once.
    price *= std::pow(std::max(measured, 1e-3 * price) / price, step * share);
  };
  const double latency_measured = std::max(0.0, seconds - bytes * seconds_per_byte_);
  const double per_byte_measured = std::max(0.0, seconds - latency_seconds_) / bytes;
  learn(latency_seconds_, latency_measured, latency_share);
  learn(seconds_per_byte_, per_byte_measured, 1.0 - latency_share);
  ++observations_;
}

nlohmann::json RebalanceAssessment::to_json() const {
  return {{"iteration_seconds_now", iteration_seconds_now},
          {"iteration_seconds_balanced", iteration_seconds_balanced},
          {"predicted_gain_seconds", gain_seconds},
          {"predicted_bytes", bytes},
          {"predicted_cost_seconds", cost_seconds},
          {"pays", pays},
          {"reason", reason}};
}

RebalanceAssessment assess_rebalance(const RebalanceCase& c, const RedistributionCost& cost,
                                     double margin) {
  const std::size_t n = c.iteration_seconds.size();
  if (c.current.size() != n || c.proposed.size() != n || c.current_work.size() != n ||
      c.proposed_work.size() != n) {
    throw Error(Errc::internal, "rebalance case: per-process vectors differ in length");
  }
  RebalanceAssessment a;
  // Each process keeps its measured speed (eq. 5.3): current work over its
  // time. One with no work yet (or no time) is charged nothing (an infinite
  // speed), which only makes the prediction optimistic for a process that
  // gains rows from zero.
  std::vector<double> speeds(n);
  for (std::size_t p = 0; p < n; ++p) {
    const double now = c.iteration_seconds[p];
    a.iteration_seconds_now = std::max(a.iteration_seconds_now, now);
    speeds[p] = c.current_work[p] > 0.0 && now > 0.0 ? c.current_work[p] / now
                                                     : std::numeric_limits<double>::infinity();
  }
  // Eq. 5.2's computation term of the proposed blocks, the formula every
  // prediction uses (predict_interval): communication is left out (above).
  a.iteration_seconds_balanced =
      predict_interval({.work = c.proposed_work, .speeds = speeds}).computation;
  const double remaining = static_cast<double>(std::max(0LL, c.remaining_iterations));
  a.gain_seconds = (a.iteration_seconds_now - a.iteration_seconds_balanced) * remaining;
  a.bytes = busiest_process_bytes(c.current, c.proposed, c.bytes_per_row);
  a.cost_seconds = cost.predict(a.bytes);
  a.pays = a.gain_seconds > 0.0 && a.gain_seconds > margin * a.cost_seconds;
  a.reason = fmt::format("{}: predicted gain {:.3g} s over {} iterations {} {:g} x cost {:.3g} s",
                         a.pays ? "moves" : "stays", a.gain_seconds, c.remaining_iterations,
                         a.pays ? ">" : "<=", margin, a.cost_seconds);
  return a;
}

}  // namespace flexmpi
