// Serial tests of flexmpi-epigraph's parts (label "unit;epigraph"): the
// per-row work of the weight model, the generator's graph, the counter-based
// random numbers, and a time step giving the same epidemic whatever the row
// blocks (the MPI tests check the same through the whole program).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "counter_rng.hpp"
#include "epidemic_model.hpp"
#include "simulation.hpp"
#include "social_graph.hpp"

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
  const long long work = compute_spread(people, 6, 0, {0}, model, 0, outgoing);
  EXPECT_EQ(work, 6 + 5);  // one update each, plus the infectious individual's 5 contacts
  EXPECT_EQ(people.interval_work[0], 6.0);
  for (int i = 1; i < 6; ++i) EXPECT_EQ(people.interval_work[i], 1.0) << "individual " << i;
  people.state[3] = infectious_asymptomatic;  // a leaf: degree 1
  EXPECT_EQ(compute_spread(people, 6, 0, {0}, model, 1, outgoing), 6 + 5 + 1);
  EXPECT_EQ(people.interval_work[3], 1.0 + 2.0);
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

// Steps of the whole population as one block and as three blocks (the
// infections owed to other blocks handed over as MPI_Alltoallv would) give
// the same states.
TEST(Simulation, TheSameEpidemicWhateverTheBlocks) {
  constexpr int kPopulation = 2000;
  EpidemicParameters parameters;
  parameters.transmission_per_day = {3.0, 3.0, 3.0};  // a fast epidemic: something to compare
  const EpidemicModel model(parameters, 4, 60);
  const LocalGraph graph = generate_local_graph(kPopulation, 4, 0, kPopulation);
  const std::vector<int> first_rows = {0, 500, 1400};
  std::vector<Population> blocks;
  Population whole = make_block(graph, 0, kPopulation);
  for (std::size_t b = 0; b < first_rows.size(); ++b) {
    const int end = b + 1 < first_rows.size() ? first_rows[b + 1] : kPopulation;
    blocks.push_back(make_block(graph, first_rows[b], end - first_rows[b]));
  }
  for (const int index_case : {10, 700, 1900}) {
    whole.state[index_case] = infectious_symptomatic;
    whole.minutes_left[index_case] = model.duration_minutes(index_case, infectious_symptomatic, 0);
    const auto b =
        std::upper_bound(first_rows.begin(), first_rows.end(), index_case) - first_rows.begin() - 1;
    blocks[b].state[index_case - first_rows[b]] = whole.state[index_case];
    blocks[b].minutes_left[index_case - first_rows[b]] = whole.minutes_left[index_case];
  }
  int infected = 0;
  for (long long step = 0; step < 24 * 6; ++step) {
    std::vector<std::vector<int>> none(1);
    update_status(whole, kPopulation, 0, model, step);
    compute_spread(whole, kPopulation, 0, {0}, model, step, none);
    std::vector<std::vector<std::vector<int>>> owed(blocks.size(),
                                                    std::vector<std::vector<int>>(blocks.size()));
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const int end = b + 1 < first_rows.size() ? first_rows[b + 1] : kPopulation;
      update_status(blocks[b], end - first_rows[b], first_rows[b], model, step);
      compute_spread(blocks[b], end - first_rows[b], first_rows[b], first_rows, model, step,
                     owed[b]);
    }
    for (std::size_t from = 0; from < blocks.size(); ++from) {
      for (std::size_t to = 0; to < blocks.size(); ++to) {
        for (const int individual : owed[from][to]) {
          infect(blocks[to], individual - first_rows[to], individual, model, step);
        }
      }
    }
  }
  for (int i = 0; i < kPopulation; ++i) {
    const auto b =
        std::upper_bound(first_rows.begin(), first_rows.end(), i) - first_rows.begin() - 1;
    ASSERT_EQ(blocks[b].state[i - first_rows[b]], whole.state[i]) << "individual " << i;
    ASSERT_EQ(blocks[b].minutes_left[i - first_rows[b]], whole.minutes_left[i])
        << "individual " << i;
    infected += whole.state[i] != susceptible;
  }
  EXPECT_GT(infected, 100);  // the epidemic went somewhere
  free_population(whole);
  for (Population& block : blocks) free_population(block);
}

}  // namespace
}  // namespace epigraph
