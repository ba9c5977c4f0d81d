// The whole-interval prediction (interval_predictor.hpp; thesis eq. 5.1-5.2).
#include "model/interval_predictor.hpp"

#include <cmath>
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

PredictedInterval predict_interval(const IntervalTerms& terms) {
  PredictedInterval t;
  t.computation = computation_time(terms.work, terms.speeds).slowest;
  if (terms.communication != nullptr) {
    t.communication = terms.lambda * terms.communication->per_iteration(terms.processes);
  }
  t.reconfiguration = terms.reconfiguration;
  t.redistribution = terms.redistribution;
  return t;
}

IntervalPredictor::IntervalPredictor(const MachineProfile& profile, MpiLibrary library,
                                     CurrentState state)
    : profile_(profile),
      state_(std::move(state)),
      communication_{std::move(state_.comm),
                     static_cast<int>(state_.rows.size()),
                     1,
                     library,
                     profile.link(state_.across_nodes),
                     profile.fits_for(library)} {
  if (state_.work.empty() || state_.work.size() != state_.rows.size()) {
    invalid("expected one measured work per block of the current partition, got " +
            std::to_string(state_.work.size()) + " and " + std::to_string(state_.rows.size()));
  }
  if (!(state_.lambda >= 0.0) || !(state_.next_work >= 0.0) || !std::isfinite(state_.next_work)) {
    invalid("expected lambda >= 0 and next_work >= 0");
  }
  predict_communication(communication_.ops, library, communication_.link,
                        communication_.fits);  // validates the profile
}

PredictedInterval IntervalPredictor::predict(const Candidate& c) const {
  if (c.speeds.size() != c.rows.size() || c.rows.empty()) {
    invalid("candidate: expected one speed per block, got " + std::to_string(c.speeds.size()) +
            " speeds and " + std::to_string(c.rows.size()) + " blocks");
  }
  if (c.spawned < 0 || c.removed < 0 || !(c.busiest_bytes >= 0.0)) {
    invalid("candidate: expected spawned, removed and bytes >= 0");
  }
  // The next interval's work spread over the candidate blocks (eq. 5.3 per
  // process), the profile replayed at the new size, the processes created and
  // terminated, and the data redistribution of the busiest process of
  // flexmpi's plan.
  scratch_.resize(c.rows.size());
  spread_work(state_.next_work, state_.work, state_.rows, c.rows, scratch_);
  return predict_interval(
      {.work = scratch_,
       .speeds = c.speeds,
       .communication = &communication_,
       .processes = static_cast<int>(c.rows.size()),
       .lambda = state_.lambda,
       .reconfiguration = spawn_cost(profile_, c.spawned) + remove_cost(profile_, c.removed),
       .redistribution = redistribution_seconds(profile_, c.busiest_messages, c.busiest_bytes,
                                                state_.across_nodes)});
}

}  // namespace flexmpi
