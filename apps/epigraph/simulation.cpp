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

long long compute_spread(Population& people, int count, int displ, const std::vector<int>& displs,
                         const EpidemicModel& model, long long step,
                         std::vector<std::vector<int>>& outgoing) {
  long long work = 0;
  for (int i = 0; i < count; ++i) {
    const std::uint8_t state = people.state[i];
    long long row_work = 1;
    if (EpidemicModel::infectious(state)) {
      const int begin = people.row_start[i], end = people.row_start[i + 1];
      row_work += end - begin;
      for (int k = begin; k < end; ++k) {
        const int contact = people.contacts[k];
        if (!model.transmits(displ + i, state, contact, people.contact_kinds[k], step)) continue;
        if (contact >= displ && contact < displ + count) {
          infect(people, contact - displ, contact, model, step);
        } else {  // the last block starting at or before the contact owns it (empty blocks skipped)
          const auto owner =
              std::upper_bound(displs.begin(), displs.end(), contact) - displs.begin() - 1;
          outgoing[static_cast<std::size_t>(owner)].push_back(contact);
        }
      }
    }
    if (people.interval_work != nullptr) people.interval_work[i] += static_cast<double>(row_work);
    work += row_work;
  }
  return work;
}

}  // namespace epigraph
