#include "simulation.hpp"

#include <algorithm>
#include <cstdlib>

namespace epigraph {
namespace {

bool timed(std::uint8_t state) {
  return state == latent || EpidemicModel::infectious(state) || state == hospitalized;
}

}  // namespace

void free_population(Population& people) {
  std::free(people.row_start);
  std::free(people.contacts);
  std::free(people.contact_kinds);
  std::free(people.state);
  std::free(people.minutes_left);
  std::free(people.interval_work);
  people = {};
}

void update_status(Population& people, int count, int displ, const EpidemicModel& model,
                   long long step) {
  for (int i = 0; i < count; ++i) {
    const std::uint8_t state = people.state[i];
    if (!timed(state)) continue;
    people.minutes_left[i] -= model.step_minutes();
    if (people.minutes_left[i] > 0) continue;
    const std::uint8_t next = model.next_state(displ + i, state, step);
    people.state[i] = next;
    people.minutes_left[i] = timed(next) ? model.duration_minutes(displ + i, next, step) : 0;
  }
}

void infect(Population& people, int local, int individual, const EpidemicModel& model,
            long long step) {
  if (people.state[local] != susceptible) return;
  people.state[local] = latent;
  people.minutes_left[local] = model.duration_minutes(individual, latent, step);
}

void deliver_infection(Population& people, int count, int displ, const std::vector<int>& displs,
                       const EpidemicModel& model, long long step, int individual,
                       std::vector<std::vector<int>>& outgoing) {
  if (individual >= displ && individual < displ + count) {
    infect(people, individual - displ, individual, model, step);
    return;
  }
  // The last block starting at or before the individual owns it (empty blocks skipped).
  const auto owner =
      std::upper_bound(displs.begin(), displs.end(), individual) - displs.begin() - 1;
  outgoing[static_cast<std::size_t>(owner)].push_back(individual);
}

StepWork compute_spread(Population& people, int count, int displ, const std::vector<int>& displs,
                        const EpidemicModel& model, long long step,
                        std::vector<std::vector<int>>& outgoing) {
  StepWork work;
  work.updates = count;
  for (int i = 0; i < count; ++i) {
    const std::uint8_t state = people.state[i];
    int contacts = 0;
    if (EpidemicModel::infectious(state)) {
      const int begin = people.row_start[i], end = people.row_start[i + 1];
      contacts = end - begin;
      for (int k = begin; k < end; ++k) {
        const int contact = people.contacts[k];
        if (model.transmits(displ + i, state, contact, people.contact_kinds[k], step)) {
          deliver_infection(people, count, displ, displs, model, step, contact, outgoing);
        }
      }
    }
    if (people.interval_work != nullptr) people.interval_work[i] += kUpdateCost + contacts;
    work.contacts += contacts;
  }
  return work;
}

void forecast_work(const Population& people, int count, int horizon_minutes,
                   const EpidemicParameters& parameters, std::span<double> weight) {
  const double horizon = horizon_minutes;
  const double infectious_minutes = parameters.infectious_days * kMinutesPerDay;
  for (int i = 0; i < count; ++i) {
    const std::uint8_t state = people.state[i];
    const int left = people.minutes_left[i];
    double minutes = 0.0;  // infectious within the horizon
    if (EpidemicModel::infectious(state)) {
      minutes = std::min<double>(left, horizon);
    } else if (state == latent) {
      minutes = std::clamp(horizon - left, 0.0, infectious_minutes);
    }
    const int degree = people.row_start[i + 1] - people.row_start[i];
    weight[static_cast<std::size_t>(i)] = kUpdateCost + degree * minutes / horizon;
  }
}

}  // namespace epigraph
