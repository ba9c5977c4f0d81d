// Transportation between regions (thesis Alg. 11 line 11; EpiGraph's
// transportation model, Martín et al., Parallel Computing 2015): once a
// simulated day some individuals travel to another district and meet people
// there. Off unless `--transport` is given (the published runs of this
// program and their curves are without it).
//
// Who travels where: each individual makes a trip on a day with probability
// travel_fraction, to district j != home with probability proportional to
// P_j / d^2 (a production-constrained gravity model: the flow from i to j is
// travel_fraction P_i P_j d_ij^-2 / sum_k P_k d_ik^-2; the exponents 1, 1, 2
// are the classic gravity law, not fitted to data). What a trip does, for a
// day: an infectious traveller meets contacts_per_trip residents of the
// destination, drawn uniformly, and may infect each at the community rate;
// a susceptible traveller is exposed to the destination's prevalence (the
// same number of meetings with the district's share of infectious people,
// counted over every process each day). Every draw is keyed by (individual,
// day), so the curve stays the same for any number of processes.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "epidemic_model.hpp"
#include "simulation.hpp"
#include "social_graph.hpp"

namespace epigraph {

struct TransportParameters {
  double travel_fraction = 0.02;  ///< of the population, per day
  int contacts_per_trip = 10;     ///< residents met at the destination
};

/// Infectious individuals per district, summed over every process by the
/// caller (MPI_Allreduce of 2 x kDistricts long longs).
struct DistrictInfectious {
  std::array<long long, kDistricts> symptomatic{};
  std::array<long long, kDistricts> asymptomatic{};
};

class Transportation {
 public:
  Transportation(int population, std::uint64_t seed, const TransportParameters& parameters);

  /// The district individual `individual` lives in.
  [[nodiscard]] int home(int individual) const;
  /// The district `individual` travels to on `day`, or -1: it stays home.
  [[nodiscard]] int destination(int individual, int day) const;
  /// The share of district `from`'s trips that go to `to` (the gravity model).
  [[nodiscard]] double trip_share(int from, int to) const;

  /// Adds the infectious individuals of the `count` rows from `displ` to `infectious`.
  void count_infectious(const Population& people, int count, int displ,
                        DistrictInfectious& infectious) const;

  /// The trips of `day` by the `count` individuals from `displ`, in `step`
  /// (the day's first): infections of this block's individuals happen at
  /// once, the others go to outgoing[owner] (see deliver_infection). Returns
  /// the work: an update per trip, a contact per meeting of an infectious traveller.
  StepWork travel(Population& people, int count, int displ, const std::vector<int>& displs,
                  const EpidemicModel& model, const DistrictInfectious& infectious, long long step,
                  int day, std::vector<std::vector<int>>& outgoing) const;

 private:
  std::uint64_t seed_;
  TransportParameters parameters_;
  std::array<int, kDistricts + 1> begin_{};
  /// Per origin, the cumulative shares of the destinations (the last is 1).
  std::array<std::array<double, kDistricts>, kDistricts> cumulative_share_{};
};

}  // namespace epigraph
