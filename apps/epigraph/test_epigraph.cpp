// Serial tests of flexmpi-epigraph's parts (label "unit;epigraph"): the
// per-row work of the weight model and its forecast, the generator's graph,
// the counter-based random numbers, the trips between districts, and time
// steps giving the same epidemic whatever the row blocks (the MPI tests
// check the same through the whole program).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "counter_rng.hpp"
#include "epidemic_model.hpp"
#include "simulation.hpp"
#include "social_graph.hpp"
#include "transportation.hpp"

namespace epigraph {
namespace {

template <class T>
T* copy_to_malloc(const std::vector<T>& values) {
  T* p = static_cast<T*>(std::malloc(std::max<std::size_t>(values.size(), 1) * sizeof(T)));
  std::copy(values.begin(), values.end(), p);
  return p;
}

// The rows [first, first + count) of `graph` (a whole graph), all susceptible.
Population make_block(const LocalGraph& graph, int first, int count) {
  const int begin = graph.row_start[first], end = graph.row_start[first + count];
  std::vector<int> row_start(graph.row_start.begin() + first,
                             graph.row_start.begin() + first + count + 1);
  for (int& start : row_start) start -= begin;
  Population people;
  people.row_start = copy_to_malloc(row_start);
  people.contacts =
      copy_to_malloc(std::vector<int>(graph.columns.begin() + begin, graph.columns.begin() + end));
  people.contact_kinds = copy_to_malloc(
      std::vector<std::uint8_t>(graph.kinds.begin() + begin, graph.kinds.begin() + end));
  people.state = copy_to_malloc(std::vector<std::uint8_t>(count, susceptible));
  people.minutes_left = copy_to_malloc(std::vector<int>(count, 0));
  people.interval_work = copy_to_malloc(std::vector<double>(count, 0.0));
  return people;
}

TEST(WeightModel, AnInfectiousIndividualCostsItsDegree) {
  // A star: individual 0 with contacts 1..5; each leaf's only contact is 0.
  const LocalGraph star{{0, 5, 6, 7, 8, 9, 10},
                        {1, 2, 3, 4, 5, 0, 0, 0, 0, 0},
                        std::vector<std::uint8_t>(10, household)};
  Population people = make_block(star, 0, 6);
  const EpidemicModel model(EpidemicParameters{}, 1, 1);
  people.state[0] = infectious_symptomatic;
  people.minutes_left[0] = 1000;
  people.state[1] = hospitalized;
  people.minutes_left[1] = 1000;
  people.state[2] = latent;
  people.minutes_left[2] = 1000;
  std::vector<std::vector<int>> outgoing(1);
  const StepWork work = compute_spread(people, 6, 0, {0}, model, 0, outgoing);
  EXPECT_EQ(work.updates, 6);   // one update each
  EXPECT_EQ(work.contacts, 5);  // the infectious individual's 5 contacts
  EXPECT_EQ(work.operations(), 6 + 5);
  EXPECT_DOUBLE_EQ(work.cost(), 6 * kUpdateCost + 5);
  EXPECT_DOUBLE_EQ(people.interval_work[0], kUpdateCost + 5);
  for (int i = 1; i < 6; ++i) {
    EXPECT_DOUBLE_EQ(people.interval_work[i], kUpdateCost) << "individual " << i;
  }
  people.state[3] = infectious_asymptomatic;  // a leaf: degree 1
  EXPECT_EQ(compute_spread(people, 6, 0, {0}, model, 1, outgoing).contacts, 5 + 1);
  EXPECT_DOUBLE_EQ(people.interval_work[3], 2 * kUpdateCost + 1);
  free_population(people);
}

TEST(WeightModel, TheForecastFollowsTheTimersOfEachState) {
  // A star again: individual 0 has degree 5, the leaves degree 1.
  const LocalGraph star{{0, 5, 6, 7, 8, 9, 10},
                        {1, 2, 3, 4, 5, 0, 0, 0, 0, 0},
                        std::vector<std::uint8_t>(10, household)};
  Population people = make_block(star, 0, 6);
  const EpidemicParameters parameters;
  constexpr int kDay = kMinutesPerDay;
  people.state[0] = latent;  // infectious for the last quarter of the day
  people.minutes_left[0] = 3 * kDay / 4;
  people.state[1] = infectious_symptomatic;  // all day
  people.minutes_left[1] = 2 * kDay;
  people.state[2] = infectious_asymptomatic;  // half the day
  people.minutes_left[2] = kDay / 2;
  people.state[3] = latent;  // infectious only after the horizon
  people.minutes_left[3] = 2 * kDay;
  people.state[4] = hospitalized;  // isolated: no contacts tried
  people.minutes_left[4] = kDay;
  std::vector<double> weight(6, -1.0);
  forecast_work(people, 6, kDay, parameters, weight);
  EXPECT_DOUBLE_EQ(weight[0], kUpdateCost + 5 * 0.25);
  EXPECT_DOUBLE_EQ(weight[1], kUpdateCost + 1.0);
  EXPECT_DOUBLE_EQ(weight[2], kUpdateCost + 0.5);
  EXPECT_DOUBLE_EQ(weight[3], kUpdateCost);
  EXPECT_DOUBLE_EQ(weight[4], kUpdateCost);
  EXPECT_DOUBLE_EQ(weight[5], kUpdateCost);  // susceptible
  // A latent individual's infectious time in a long horizon is the mean period at most.
  forecast_work(people, 1, 30 * kDay, parameters, weight);
  const double mean_infectious = parameters.infectious_days * kDay;
  EXPECT_DOUBLE_EQ(weight[0], kUpdateCost + 5 * mean_infectious / (30.0 * kDay));
  free_population(people);
}

// The forecast is right: over a day it gives each individual's work in
// that day, measured by stepping the epidemic, up to the few infected in
// the day and infectious before it ends (latent at least 0.95 days), and
// far better than the work of the day before.
TEST(WeightModel, TheForecastMatchesTheNextDaysWork) {
  constexpr int kPopulation = 2000;
  EpidemicParameters parameters;
  parameters.transmission_per_day = {1.0, 1.0, 1.0};
  constexpr int kStep = 30;
  constexpr int kStepsPerDay = kMinutesPerDay / kStep;
  const EpidemicModel model(parameters, 8, kStep);
  const LocalGraph graph = generate_local_graph(kPopulation, 8, 0, kPopulation);
  Population people = make_block(graph, 0, kPopulation);
  for (const int index_case : {10, 700, 1900}) {
    people.state[index_case] = infectious_symptomatic;
    people.minutes_left[index_case] = model.duration_minutes(index_case, infectious_symptomatic, 0);
  }
  std::vector<std::vector<int>> none(1);
  long long step = 0;
  auto step_one_day = [&] {  // returns each individual's mean work per step
    std::fill_n(people.interval_work, kPopulation, 0.0);
    for (const long long end = step + kStepsPerDay; step < end; ++step) {
      update_status(people, kPopulation, 0, model, step);
      compute_spread(people, kPopulation, 0, {0}, model, step, none);
    }
    std::vector<double> work(people.interval_work, people.interval_work + kPopulation);
    for (double& w : work) w /= kStepsPerDay;
    return work;
  };
  for (int day = 0; day < 3; ++day) step_one_day();  // latent and infectious individuals
  const std::vector<double> last = step_one_day();
  std::vector<double> forecast(kPopulation);
  forecast_work(people, kPopulation, kMinutesPerDay, parameters, forecast);
  const std::vector<double> measured = step_one_day();
  double measured_total = 0.0, forecast_total = 0.0, forecast_error = 0.0, last_error = 0.0;
  for (int i = 0; i < kPopulation; ++i) {
    measured_total += measured[i];
    forecast_total += forecast[i];
    forecast_error += std::abs(forecast[i] - measured[i]);
    last_error += std::abs(last[i] - measured[i]);
  }
  EXPECT_GT(measured_total, 1.0 * kPopulation);  // the epidemic is under way
  EXPECT_NEAR(forecast_total, measured_total, 0.03 * measured_total);
  EXPECT_LT(forecast_error, 0.05 * measured_total);
  EXPECT_GT(last_error, 5 * forecast_error);
  free_population(people);
}

TEST(SocialGraph, SymmetricCappedAndTheSameWhateverRowsAreAsked) {
  constexpr int kPopulation = 3000;
  const LocalGraph whole = generate_local_graph(kPopulation, 5, 0, kPopulation);
  for (int i = 0; i < kPopulation; ++i) {
    const int degree = whole.row_start[i + 1] - whole.row_start[i];
    ASSERT_LE(degree, kMaxDegree);
    for (int k = whole.row_start[i]; k < whole.row_start[i + 1]; ++k) {
      const int j = whole.columns[k];
      ASSERT_NE(j, i);
      const auto first = whole.columns.begin() + whole.row_start[j];
      const auto last = whole.columns.begin() + whole.row_start[j + 1];
      const auto back = std::lower_bound(first, last, i);
      ASSERT_TRUE(back != last && *back == i) << i << " -> " << j << " has no way back";
      EXPECT_EQ(whole.kinds[k], whole.kinds[back - whole.columns.begin()]);
    }
  }
  const LocalGraph middle = generate_local_graph(kPopulation, 5, 1000, 700);
  const int offset = whole.row_start[1000];
  for (int i = 0; i <= 700; ++i) EXPECT_EQ(middle.row_start[i], whole.row_start[1000 + i] - offset);
  EXPECT_TRUE(
      std::equal(middle.columns.begin(), middle.columns.end(), whole.columns.begin() + offset));
  EXPECT_NE(generate_local_graph(kPopulation, 6, 0, 10).columns,
            generate_local_graph(kPopulation, 5, 0, 10).columns);
}

TEST(SocialGraph, RefusesATinyPopulation) {
  EXPECT_THROW(generate_local_graph(kMinPopulation - 1, 1, 0, 1), std::invalid_argument);
}

TEST(CounterRng, KeyedUniformNumbers) {
  double sum = 0.0;
  constexpr int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) {
    const double u = uniform(3, Purpose::transmission, static_cast<std::uint64_t>(i), 7, 11);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / kDraws, 0.5, 0.01);
  EXPECT_EQ(uniform(3, Purpose::duration, 1, 2, 3), uniform(3, Purpose::duration, 1, 2, 3));
  EXPECT_NE(uniform(3, Purpose::duration, 1, 2, 3), uniform(3, Purpose::duration, 1, 3, 2));
  EXPECT_NE(uniform(3, Purpose::duration, 1, 2, 3), uniform(3, Purpose::transition, 1, 2, 3));
}

TEST(EpidemicModel, DurationsAreWholeStepsAroundTheMean) {
  const EpidemicParameters parameters;
  const EpidemicModel model(parameters, 9, 15);
  for (int i = 0; i < 1000; ++i) {
    const int minutes = model.duration_minutes(i, latent, 4);
    EXPECT_EQ(minutes % 15, 0);
    EXPECT_GE(minutes, 0.5 * parameters.latent_days * kMinutesPerDay);
    EXPECT_LE(minutes, 1.5 * parameters.latent_days * kMinutesPerDay + 15);
    const std::uint8_t after_hospital = model.next_state(i, hospitalized, 4);
    EXPECT_TRUE(after_hospital == dead || after_hospital == recovered);
    const std::uint8_t after_latent = model.next_state(i, latent, 4);
    EXPECT_TRUE(EpidemicModel::infectious(after_latent));
  }
}

TEST(Transportation, TripsFollowTheGravityModel) {
  constexpr int kPopulation = 80'000;
  const TransportParameters parameters{0.05, 10};
  const Transportation transportation(kPopulation, 3, parameters);
  for (int from = 0; from < kDistricts; ++from) {
    double total = 0.0;
    for (int to = 0; to < kDistricts; ++to) total += transportation.trip_share(from, to);
    EXPECT_NEAR(total, 1.0, 1e-12);
    EXPECT_EQ(transportation.trip_share(from, from), 0.0);
  }
  // From the centre (district 3, at the origin), district 2 at (8, -3) km is
  // sqrt(73) km away and district 5 at (12, 9) km 15 km: their attractions
  // are in the ratio (P_2 / 73) / (P_5 / 225).
  const double p2 = district_begin(3, kPopulation) - district_begin(2, kPopulation);
  const double p5 = district_begin(6, kPopulation) - district_begin(5, kPopulation);
  EXPECT_NEAR(transportation.trip_share(3, 2) / transportation.trip_share(3, 5),
              (p2 / 73.0) / (p5 / 225.0), 1e-9);
  // Sampled trips: the travelling share and the destinations of the centre's residents.
  std::array<long long, kDistricts> to_from_centre{};
  long long trips = 0, centre_trips = 0;
  for (int day = 0; day < 20; ++day) {
    for (int i = 0; i < kPopulation; ++i) {
      const int to = transportation.destination(i, day);
      if (to < 0) continue;
      ++trips;
      ASSERT_NE(to, transportation.home(i));
      if (transportation.home(i) == 3) ++to_from_centre[to], ++centre_trips;
    }
  }
  EXPECT_NEAR(static_cast<double>(trips) / (20.0 * kPopulation), 0.05, 0.002);
  for (int to = 0; to < kDistricts; ++to) {
    EXPECT_NEAR(static_cast<double>(to_from_centre[to]) / centre_trips,
                transportation.trip_share(3, to), 0.01)
        << "district " << to;
  }
  EXPECT_EQ(transportation.destination(123, 4), transportation.destination(123, 4));
}

struct Outcome {
  std::vector<std::uint8_t> state;
  std::vector<int> minutes_left;
  bool operator==(const Outcome&) const = default;
  long long infected() const {
    return std::count_if(state.begin(), state.end(),
                         [](std::uint8_t s) { return s != susceptible; });
  }
};

// Steps `days` of an epidemic on `first_rows` blocks (infections owed to
// other blocks handed over as MPI_Alltoallv would), with or without daily
// trips; returns every individual's state and its timer.
Outcome run_blocks(const LocalGraph& graph, const std::vector<int>& first_rows,
                   const EpidemicModel& model, const Transportation* transportation, int days) {
  const int population = static_cast<int>(graph.row_start.size()) - 1;
  const int steps_per_day = kMinutesPerDay / model.step_minutes();
  const std::size_t nblocks = first_rows.size();
  auto end_of = [&](std::size_t b) { return b + 1 < nblocks ? first_rows[b + 1] : population; };
  std::vector<Population> blocks;
  for (std::size_t b = 0; b < nblocks; ++b) {
    blocks.push_back(make_block(graph, first_rows[b], end_of(b) - first_rows[b]));
  }
  for (const int index_case : {10, 700, 1900}) {
    const auto b = static_cast<std::size_t>(
        std::upper_bound(first_rows.begin(), first_rows.end(), index_case) - first_rows.begin() -
        1);
    blocks[b].state[index_case - first_rows[b]] = infectious_symptomatic;
    blocks[b].minutes_left[index_case - first_rows[b]] =
        model.duration_minutes(index_case, infectious_symptomatic, 0);
  }
  for (long long step = 0; step < static_cast<long long>(days) * steps_per_day; ++step) {
    std::vector<std::vector<std::vector<int>>> owed(nblocks,
                                                    std::vector<std::vector<int>>(nblocks));
    DistrictInfectious infectious;
    for (std::size_t b = 0; b < nblocks; ++b) {
      update_status(blocks[b], end_of(b) - first_rows[b], first_rows[b], model, step);
      if (transportation != nullptr) {
        transportation->count_infectious(blocks[b], end_of(b) - first_rows[b], first_rows[b],
                                         infectious);
      }
    }
    for (std::size_t b = 0; b < nblocks; ++b) {
      const int count = end_of(b) - first_rows[b];
      if (transportation != nullptr && step % steps_per_day == 0) {
        transportation->travel(blocks[b], count, first_rows[b], first_rows, model, infectious, step,
                               static_cast<int>(step / steps_per_day), owed[b]);
      }
      compute_spread(blocks[b], count, first_rows[b], first_rows, model, step, owed[b]);
    }
    for (std::size_t from = 0; from < nblocks; ++from) {
      for (std::size_t to = 0; to < nblocks; ++to) {
        for (const int individual : owed[from][to]) {
          infect(blocks[to], individual - first_rows[to], individual, model, step);
        }
      }
    }
  }
  Outcome outcome;
  for (std::size_t b = 0; b < nblocks; ++b) {
    const int count = end_of(b) - first_rows[b];
    outcome.state.insert(outcome.state.end(), blocks[b].state, blocks[b].state + count);
    outcome.minutes_left.insert(outcome.minutes_left.end(), blocks[b].minutes_left,
                                blocks[b].minutes_left + count);
    free_population(blocks[b]);
  }
  return outcome;
}

// Six days of the whole population as one block and as three blocks give
// the same states and timers.
TEST(Simulation, TheSameEpidemicWhateverTheBlocks) {
  constexpr int kPopulation = 2000;
  EpidemicParameters parameters;
  parameters.transmission_per_day = {3.0, 3.0, 3.0};  // a fast epidemic: something to compare
  const EpidemicModel model(parameters, 4, 60);
  const LocalGraph graph = generate_local_graph(kPopulation, 4, 0, kPopulation);
  const Outcome whole = run_blocks(graph, {0}, model, nullptr, 6);
  EXPECT_EQ(run_blocks(graph, {0, 500, 1400}, model, nullptr, 6), whole);
  EXPECT_GT(whole.infected(), 100);  // the epidemic went somewhere
}

TEST(Transportation, TheSameEpidemicWhateverTheBlocksAndTripsSpreadIt) {
  constexpr int kPopulation = 2000;
  EpidemicParameters parameters;
  parameters.transmission_per_day = {0.5, 0.5, 0.5};
  const EpidemicModel model(parameters, 4, 60);
  const LocalGraph graph = generate_local_graph(kPopulation, 4, 0, kPopulation);
  const Transportation transportation(kPopulation, 4, TransportParameters{0.2, 20});
  const Outcome whole = run_blocks(graph, {0}, model, &transportation, 6);
  EXPECT_EQ(run_blocks(graph, {0, 500, 1400}, model, &transportation, 6), whole);
  const Outcome home = run_blocks(graph, {0}, model, nullptr, 6);
  EXPECT_GT(whole.infected(), home.infected() + 20) << "trips added no infections";
}

}  // namespace
}  // namespace epigraph
