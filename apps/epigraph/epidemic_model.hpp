// The epidemic model of flexmpi-epigraph: SIR extended with the states of
// influenza used by EpiGraph (thesis 6.1.1.3; Martín et al., 2011): an
// infected individual is first latent (infected, not yet infectious), then
// infectious with or without symptoms; a symptomatic case may be hospitalized,
// and a hospitalized one may die. Transitions happen when the time drawn for
// a state runs out; every draw comes from counter_rng.hpp.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "counter_rng.hpp"
#include "social_graph.hpp"

namespace epigraph {

enum State : std::uint8_t {
  susceptible = 0,
  latent,
  infectious_symptomatic,
  infectious_asymptomatic,
  hospitalized,
  dead,
  recovered,
  state_count
};

inline constexpr std::array<const char*, state_count> kStateNames = {
    "susceptible", "latent",   "infectious_symptomatic", "infectious_asymptomatic", "hospitalized",
    "dead",        "recovered"};

inline constexpr int kMinutesPerDay = 1440;

/// Influenza parameters. Durations are means in days; each individual's is
/// uniform in [0.5, 1.5] x the mean, rounded up to whole time steps. The
/// values are of the order published for seasonal influenza (latent ~1.9 d,
/// infectious ~4.1 d, a third of infections without symptoms and half as
/// infectious); the rest are chosen for a visible epidemic, not calibrated.
struct EpidemicParameters {
  double latent_days = 1.9;
  double infectious_days = 4.1;
  double hospital_days = 7.0;
  double asymptomatic_fraction = 0.33;
  double asymptomatic_infectivity = 0.5;
  double hospitalized_fraction = 0.02;   // of symptomatic cases
  double hospital_death_fraction = 0.1;  // of hospitalized cases
  /// Transmission rate per contact per day of an infectious symptomatic
  /// individual, by setting; hospitalized patients are isolated (rate 0).
  std::array<double, contact_kinds> transmission_per_day = {0.09, 0.045, 0.018};
  int index_cases = 10;    // infectious at day 0
  int index_district = 3;  // where they live: the dense centre
};

/// The per-step quantities of a model for a time step of step_minutes.
class EpidemicModel {
 public:
  EpidemicModel(const EpidemicParameters& parameters, std::uint64_t seed, int step_minutes)
      : parameters_(parameters), seed_(seed), step_minutes_(step_minutes) {
    const double step_days = static_cast<double>(step_minutes) / kMinutesPerDay;
    for (int kind = 0; kind < contact_kinds; ++kind) {
      symptomatic_probability_[kind] =
          transmission_probability(infectious_symptomatic, kind, step_days);
      asymptomatic_probability_[kind] =
          transmission_probability(infectious_asymptomatic, kind, step_days);
    }
  }

  static bool infectious(std::uint8_t state) {
    return state == infectious_symptomatic || state == infectious_asymptomatic;
  }

  /// The probability that an infectious individual in `state` infects a
  /// contact of `kind` over `days` (a constant rate per day).
  double transmission_probability(std::uint8_t state, int kind, double days) const {
    const double infectivity =
        state == infectious_symptomatic ? 1.0 : parameters_.asymptomatic_infectivity;
    const double rate = parameters_.transmission_per_day[static_cast<std::size_t>(kind)];
    return 1.0 - std::exp(-rate * infectivity * days);
  }

  /// Does `infector` infect its contact `contact` (of kind `kind`) in `step`?
  bool transmits(int infector, std::uint8_t infector_state, int contact, std::uint8_t kind,
                 long long step) const {
    const double p = infector_state == infectious_symptomatic ? symptomatic_probability_[kind]
                                                              : asymptomatic_probability_[kind];
    return uniform(seed_, Purpose::transmission, static_cast<std::uint64_t>(infector),
                   static_cast<std::uint64_t>(contact), static_cast<std::uint64_t>(step)) < p;
  }

  /// Minutes `individual` stays in `state`, entered in `step`.
  int duration_minutes(int individual, std::uint8_t state, long long step) const {
    const double mean_days = state == latent         ? parameters_.latent_days
                             : state == hospitalized ? parameters_.hospital_days
                                                     : parameters_.infectious_days;
    const double u = uniform(seed_, Purpose::duration, static_cast<std::uint64_t>(individual),
                             static_cast<std::uint64_t>(step), state);
    const double minutes = mean_days * kMinutesPerDay * (0.5 + u);
    const int steps = std::max(1, static_cast<int>(std::ceil(minutes / step_minutes_)));
    return steps * step_minutes_;
  }

  /// The state after `state` runs out, for `individual` in `step`.
  std::uint8_t next_state(int individual, std::uint8_t state, long long step) const {
    const double u = uniform(seed_, Purpose::transition, static_cast<std::uint64_t>(individual),
                             static_cast<std::uint64_t>(step));
    switch (state) {
      case latent:
        return u < parameters_.asymptomatic_fraction ? infectious_asymptomatic
                                                     : infectious_symptomatic;
      case infectious_symptomatic:
        return u < parameters_.hospitalized_fraction ? hospitalized : recovered;
      case hospitalized:
        return u < parameters_.hospital_death_fraction ? dead : recovered;
      default:
        return recovered;
    }
  }

  const EpidemicParameters& parameters() const { return parameters_; }
  int step_minutes() const { return step_minutes_; }

 private:
  EpidemicParameters parameters_;
  std::uint64_t seed_;
  int step_minutes_;
  std::array<double, contact_kinds> symptomatic_probability_{};
  std::array<double, contact_kinds> asymptomatic_probability_{};
};

}  // namespace epigraph
