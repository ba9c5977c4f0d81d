// The whole-interval prediction (interval_predictor.hpp; thesis eq. 5.1-5.2).
#include "model/interval_predictor.hpp"

#include <cmath>
#include <span>
#include <string>
#include <utility>

#include "flexmpi/error.hpp"
#include "model/computation_model.hpp"
#include "model/reconfiguration_cost.hpp"

namespace flexmpi {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Errc::invalid_argument, "interval prediction: " + message);
}

}  // namespace

IntervalPredictor::IntervalPredictor(const MachineProfile& profile, MpiLibrary library,
                                     CurrentState state)
    : profile_(profile),
      library_(library),
      state_(std::move(state)),
      link_(profile.link(state_.across_nodes)),
      fits_(profile.fits_for(library)) {
  if (state_.work.empty() || state_.work.size() != state_.rows.size()) {
    invalid("expected one measured work per block of the current partition, got " +
            std::to_string(state_.work.size()) + " and " + std::to_string(state_.rows.size()));
  }
  if (!(state_.lambda >= 0.0) || !(state_.next_work >= 0.0) || !std::isfinite(state_.next_work)) {
    invalid("expected lambda >= 0 and next_work >= 0");
  }
  predict_communication(state_.comm, library_, link_, fits_);  // validates the profile
}

PredictedInterval IntervalPredictor::predict(const Candidate& c) const {
  if (c.speeds.size() != c.rows.size() || c.rows.empty()) {
    invalid("candidate: expected one speed per block, got " + std::to_string(c.speeds.size()) +
            " speeds and " + std::to_string(c.rows.size()) + " blocks");
  }
  if (c.spawned < 0 || c.removed < 0 || !(c.busiest_bytes >= 0.0)) {
    invalid("candidate: expected spawned, removed and bytes >= 0");
  }
  PredictedInterval t;
  // Computation, eq. 5.3 per process: the next interval's work spread over
  // the candidate blocks, over each process's speed; the slowest sets the time.
  scratch_.resize(c.rows.size());
  spread_work(state_.next_work, state_.work, state_.rows, c.rows, scratch_);
  t.computation = computation_time(scratch_, c.speeds).slowest;
  // Communication, 5.3.2 and eq. 5.5: the profile replayed at the new size.
  t.communication =
      state_.lambda * replay_communication(state_.comm, static_cast<int>(state_.rows.size()),
                                           static_cast<int>(c.rows.size()), library_, link_, fits_);
  // Process creation and termination, eq. 5.6-5.7.
  t.reconfiguration = spawn_cost(profile_, c.spawned) + remove_cost(profile_, c.removed);
  // Data redistribution, 5.3.4: the busiest process of flexmpi's plan.
  t.redistribution =
      redistribution_seconds(profile_, c.busiest_messages, c.busiest_bytes, state_.across_nodes);
  return t;
}

}  // namespace flexmpi
