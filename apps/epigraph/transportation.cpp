#include "transportation.hpp"

#include <algorithm>
#include <cmath>

#include "counter_rng.hpp"

namespace epigraph {
namespace {

// Where the districts lie, in km: the dense centre (district 3, where the
// epidemic starts) in the middle, the others 7-19 km away. Invented, like
// the districts themselves; only the distances matter.
constexpr std::array<std::array<double, 2>, kDistricts> kDistrictPosition = {
    {{-6, 4}, {5, 6}, {8, -3}, {0, 0}, {-4, -7}, {12, 9}, {-15, -2}, {3, -14}}};

}  // namespace

Transportation::Transportation(int population, std::uint64_t seed,
                               const TransportParameters& parameters)
    : seed_(seed), parameters_(parameters) {
  for (int d = 0; d <= kDistricts; ++d) begin_[d] = district_begin(d, population);
  for (int from = 0; from < kDistricts; ++from) {
    std::array<double, kDistricts> attraction{};
    double total = 0.0;
    for (int to = 0; to < kDistricts; ++to) {
      if (to == from) continue;
      const double dx = kDistrictPosition[from][0] - kDistrictPosition[to][0];
      const double dy = kDistrictPosition[from][1] - kDistrictPosition[to][1];
      attraction[to] = (begin_[to + 1] - begin_[to]) / (dx * dx + dy * dy);
      total += attraction[to];
    }
    double running = 0.0;
    for (int to = 0; to < kDistricts; ++to) {
      running += attraction[to] / total;
      cumulative_share_[from][to] = running;
    }
    // No rounding gap at the end, and none that would make home a destination.
    const int last_destination = from == kDistricts - 1 ? kDistricts - 2 : kDistricts - 1;
    for (int to = last_destination; to < kDistricts; ++to) cumulative_share_[from][to] = 1.0;
  }
}

int Transportation::home(int individual) const {
  return static_cast<int>(std::upper_bound(begin_.begin(), begin_.end(), individual) -
                          begin_.begin()) -
         1;
}

double Transportation::trip_share(int from, int to) const {
  return cumulative_share_[from][to] - (to > 0 ? cumulative_share_[from][to - 1] : 0.0);
}

int Transportation::destination(int individual, int day) const {
  const double u = uniform(seed_, Purpose::trip, static_cast<std::uint64_t>(individual),
                           static_cast<std::uint64_t>(day));
  if (u >= parameters_.travel_fraction) return -1;
  // Given a trip, u / travel_fraction is uniform in [0, 1): it picks the destination.
  const auto& shares = cumulative_share_[home(individual)];
  const double v = u / parameters_.travel_fraction;
  return static_cast<int>(std::upper_bound(shares.begin(), shares.end(), v) - shares.begin());
}

void Transportation::count_infectious(const Population& people, int count, int displ,
                                      DistrictInfectious& infectious) const {
  for (int i = 0; i < count; ++i) {
    const std::uint8_t state = people.state[i];
    if (state == infectious_symptomatic) ++infectious.symptomatic[home(displ + i)];
    if (state == infectious_asymptomatic) ++infectious.asymptomatic[home(displ + i)];
  }
}

StepWork Transportation::travel(Population& people, int count, int displ,
                                const std::vector<int>& displs, const EpidemicModel& model,
                                const DistrictInfectious& infectious, long long step, int day,
                                std::vector<std::vector<int>>& outgoing) const {
  constexpr double kTripDays = 1.0;
  const EpidemicParameters& epidemic = model.parameters();
  // A susceptible visitor's chance of infection: contacts_per_trip meetings,
  // each with an infectious resident in the district's proportion.
  std::array<double, kDistricts> exposure{};
  for (int d = 0; d < kDistricts; ++d) {
    const double residents = begin_[d + 1] - begin_[d];
    const double infectious_share = (infectious.symptomatic[d] + epidemic.asymptomatic_infectivity *
                                                                     infectious.asymptomatic[d]) /
                                    residents;
    exposure[d] = 1.0 - std::exp(-epidemic.transmission_per_day[community] *
                                 parameters_.contacts_per_trip * infectious_share * kTripDays);
  }
  StepWork work;
  for (int i = 0; i < count; ++i) {
    const int individual = displ + i;
    const int to = destination(individual, day);
    if (to < 0) continue;
    ++work.updates;
    const std::uint8_t state = people.state[i];
    const auto key = static_cast<std::uint64_t>(individual);
    if (state == susceptible) {
      if (uniform(seed_, Purpose::trip_exposure, key, static_cast<std::uint64_t>(day)) <
          exposure[to]) {
        infect(people, i, individual, model, step);
      }
      continue;
    }
    if (!EpidemicModel::infectious(state)) continue;
    const double p = model.transmission_probability(state, community, kTripDays);
    const int residents = begin_[to + 1] - begin_[to];
    for (int c = 0; c < parameters_.contacts_per_trip; ++c) {
      ++work.contacts;
      const auto meeting = static_cast<std::uint64_t>(c);
      const double met =
          uniform(seed_, Purpose::trip_meeting, key, static_cast<std::uint64_t>(day), meeting);
      const int resident = begin_[to] + std::min(residents - 1, static_cast<int>(met * residents));
      if (uniform(seed_, Purpose::trip_transmission, key, static_cast<std::uint64_t>(day),
                  meeting) < p) {
        deliver_infection(people, count, displ, displs, model, step, resident, outgoing);
      }
    }
  }
  return work;
}

}  // namespace epigraph
