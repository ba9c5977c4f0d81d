// flexmpi-epigraph: an EpiGraph-like epidemic simulator (thesis 6.1.1.3,
// Alg. 11) on flexmpi, the irregular benchmark of the thesis. Individuals are
// the rows of a CSR contact graph distributed in row blocks; every time step
// (a simulated minute by default) each process
//   1. updates the state of its individuals (Alg. 11 line 4, UpdateStatus),
//   2. lets each infectious individual try to infect each contact
//      (line 6, ComputeSpread: the work of an infectious individual is its degree),
//   3. sends the infections of contacts owned by other processes to their
//      owners (MPI_Alltoall of counts, MPI_Alltoallv of individuals),
// then XMPI_Eval_reconfig runs the policy of FLEXMPI_POLICY (lb by default):
// the graph and the state vectors are registered, so balancing moves them,
// and so do the spawns and removals of a malleability policy (smp with a
// FLEXMPI_SCHEDULE, hpmp, amp). Every random
// number is keyed by (seed, individual, step) (counter_rng.hpp), so the
// epidemic curve is bit-identical for any number of processes, balanced or
// not, with or without spawns and removals, and restarted from a
// checkpoint on another number of processes (FLEXMPI_CHECKPOINT,
// FLEXMPI_RESTART: the curve so far is part of the checkpoint).
// Transportation between regions (line 11) is modelled with --transport
// (transportation.hpp); Alg. 11's interventions (line 9) are not.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "epidemic_model.hpp"
#include "flexmpi.h"
#include "simulation.hpp"
#include "social_graph.hpp"
#include "transportation.hpp"

namespace {

using epigraph::EpidemicModel;
using epigraph::Population;

// Problem classes: A, B, C are the populations of thesis Table 6.2.
const std::map<std::string, int> kClassPopulation = {
    {"small", 20'000}, {"medium", 200'000}, {"A", 1'000'000}, {"B", 2'000'000}, {"C", 3'000'000}};

struct Options {
  std::string problem_class = "small";
  int population = 0;  // 0: the class's
  int days = 60;
  int step_minutes = 1;
  std::uint64_t seed = 2011;
  std::string output;
  std::string lb_model;
  std::string row_weight = "next";
  std::string trace;
  int sampling_interval = 0;
  long long total_contacts = -1;  // given to spawned processes only
  bool static_mode = false;
  bool transport = false;
  epigraph::TransportParameters trips;
  bool graph_stats = false;
  bool quiet = false;
};

template <class T>
T* allocate(std::size_t n) {
  void* p = std::malloc(std::max<std::size_t>(n, 1) * sizeof(T));
  if (p == nullptr) {
    std::fprintf(stderr, "flexmpi-epigraph: out of memory\n");
    MPI_Abort(XMPI_COMM_WORLD, 1);
  }
  return static_cast<T*>(p);
}

void check(int code, const char* call) {
  if (code != XMPI_SUCCESS) {
    std::fprintf(stderr, "flexmpi-epigraph: %s: %s (%s)\n", call, XMPI_Error_string(code),
                 XMPI_Last_error_message());
    MPI_Abort(XMPI_COMM_WORLD, 1);
  }
}

// Prints the degree statistics of the graph (targets in social_graph.cpp) and the
// nonzero imbalance of equal row blocks on 2, 4 and 8 processes.
void report_graph_stats(const epigraph::LocalGraph& graph, int population, int rank, int nprocs) {
  const int rows = static_cast<int>(graph.row_start.size()) - 1;
  std::vector<int> degrees(static_cast<std::size_t>(rows));
  for (int i = 0; i < rows; ++i) degrees[i] = graph.row_start[i + 1] - graph.row_start[i];
  std::array<long long, epigraph::contact_kinds> kinds{};
  for (const std::uint8_t kind : graph.kinds) ++kinds[kind];
  MPI_Allreduce(MPI_IN_PLACE, kinds.data(), epigraph::contact_kinds, MPI_LONG_LONG, MPI_SUM,
                XMPI_COMM_WORLD);
  std::vector<int> counts(static_cast<std::size_t>(nprocs)), displs(counts.size());
  check(XMPI_Get_decomposition(nprocs, population, counts.data(), displs.data()),
        "XMPI_Get_decomposition");
  std::vector<int> all(rank == 0 ? static_cast<std::size_t>(population) : 0);
  MPI_Gatherv(degrees.data(), rows, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT, 0,
              XMPI_COMM_WORLD);
  if (rank != 0) return;
  const long long nonzeros = std::accumulate(all.begin(), all.end(), 0LL);
  std::string imbalance;
  for (const int parts : {2, 4, 8}) {
    long long largest = 0;
    for (int p = 0; p < parts; ++p) {  // the block partition of XMPI_Get_wsize
      const long long begin = static_cast<long long>(population) * p / parts;
      const long long end = static_cast<long long>(population) * (p + 1) / parts;
      largest = std::max(largest, std::accumulate(all.begin() + begin, all.begin() + end, 0LL));
    }
    imbalance += " block_nnz_max_over_mean_np" + std::to_string(parts) + "=" +
                 std::to_string(static_cast<double>(largest) * parts / nonzeros).substr(0, 5);
  }
  std::sort(all.begin(), all.end());
  auto percentile = [&](double q) {  // nearest rank
    const auto index = static_cast<std::size_t>(std::ceil(q * population)) - 1;
    return all[std::min(index, all.size() - 1)];
  };
  std::printf(
      "flexmpi-epigraph graph: population=%d nonzeros=%lld degree_mean=%.2f degree_median=%d "
      "degree_p90=%d degree_p99=%d degree_max=%d household=%.3f work=%.3f community=%.3f%s\n",
      population, nonzeros, static_cast<double>(nonzeros) / population, percentile(0.5),
      percentile(0.9), percentile(0.99), all.back(),
      static_cast<double>(kinds[epigraph::household]) / nonzeros,
      static_cast<double>(kinds[epigraph::work]) / nonzeros,
      static_cast<double>(kinds[epigraph::community]) / nonzeros, imbalance.c_str());
}

// The infections of other processes' contacts go to their owners: the
// irregular, step-to-step varying exchange of EpiGraph (thesis 6.1.1.3).
void exchange_infections(std::vector<std::vector<int>>& outgoing, std::vector<int>& incoming) {
  const int nprocs = static_cast<int>(outgoing.size());
  std::vector<int> send_counts(static_cast<std::size_t>(nprocs)),
      receive_counts(send_counts.size());
  std::vector<int> send_displs(send_counts.size()), receive_displs(send_counts.size());
  std::vector<int> sent;
  for (int p = 0; p < nprocs; ++p) {
    send_counts[p] = static_cast<int>(outgoing[p].size());
    send_displs[p] = static_cast<int>(sent.size());
    sent.insert(sent.end(), outgoing[p].begin(), outgoing[p].end());
    outgoing[p].clear();
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, XMPI_COMM_WORLD);
  std::exclusive_scan(receive_counts.begin(), receive_counts.end(), receive_displs.begin(), 0);
  incoming.resize(static_cast<std::size_t>(receive_displs.back() + receive_counts.back()));
  MPI_Alltoallv(sent.data(), send_counts.data(), send_displs.data(), MPI_INT, incoming.data(),
                receive_counts.data(), receive_displs.data(), MPI_INT, XMPI_COMM_WORLD);
}

// The day's work so far goes to rank 0 (always of the initial set) at the
// end of every sampling interval that does not end a day, since a policy may
// remove processes there, or add ones that have none of it; when the job
// writes checkpoints, at the end of every step, since a checkpoint (written
// at any step's end) saves rank 0's day only.
void hand_work_to_root(long long& work, int rank) {
  MPI_Reduce(rank == 0 ? MPI_IN_PLACE : &work, &work, 1, MPI_LONG_LONG, MPI_SUM, 0,
             XMPI_COMM_WORLD);
  if (rank != 0) work = 0;
}

// The arguments of the processes a policy spawns (XMPI_Eval_reconfig's argv):
// this program's, plus the number of contacts, which a newcomer needs to
// register the graph before it receives its rows. The strings live in
// `storage`; the result ends with a null pointer.
std::vector<char*> newcomer_arguments(int argc, char** argv, long long total_contacts,
                                      std::vector<std::string>& storage) {
  storage.assign(argv + 1, argv + argc);
  storage.push_back("--total-contacts=" + std::to_string(total_contacts));
  std::vector<char*> pointers;
  for (std::string& argument : storage) pointers.push_back(argument.data());
  pointers.push_back(nullptr);
  return pointers;
}

std::string step_divides_day(const std::string& text) {
  const int minutes = std::atoi(text.c_str());
  if (minutes < 1 || epigraph::kMinutesPerDay % minutes != 0) {
    return "step " + text +
           " does not divide a day of 1440 minutes (use 1, 2, 5, 10, 15, 30, 60, ...)";
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App cli{
      "flexmpi-epigraph: EpiGraph-like influenza simulation balanced by flexmpi "
      "(thesis 6.1.1.3, Alg. 11)"};
  cli.add_option("--class", options.problem_class,
                 "problem size: small (20,000 individuals), medium (200,000), A, B, C (1, 2, 3 "
                 "million, thesis Table 6.2)")
      ->check(CLI::IsMember({"small", "medium", "A", "B", "C"}));
  cli.add_option("--population", options.population, "number of individuals (overrides --class)")
      ->check(CLI::Range(epigraph::kMinPopulation, 100'000'000));
  cli.add_option("--days", options.days, "simulated days")->check(CLI::Range(1, 3650));
  cli.add_option("--step-minutes", options.step_minutes,
                 "simulated minutes per iteration; must divide 1440")
      ->check(CLI::Validator(step_divides_day, "DIVIDES 1440"));
  cli.add_option("--seed", options.seed, "seed of the graph and of the epidemic");
  cli.add_option("--output", options.output,
                 "CSV epidemic curve: one row per day, one column per state, then the work");
  cli.add_option("--lb-model", options.lb_model,
                 "sets FLEXMPI_LB_MODEL (default: weight, the work of each individual)")
      ->check(CLI::IsMember({"count", "nnz", "weight"}));
  cli.add_option("--row-weight", options.row_weight,
                 "weight model: each individual's forecast work over the next sampling interval "
                 "(next, from the timers of its state) or its work in the last one (last)")
      ->check(CLI::IsMember({"next", "last"}));
  cli.add_option("--sampling-interval", options.sampling_interval,
                 "sets FLEXMPI_SAMPLING_INTERVAL (default: the steps of one simulated day)")
      ->check(CLI::Range(1, 1'000'000));
  cli.add_option("--trace", options.trace, "sets FLEXMPI_TRACE");
  cli.add_option("--total-contacts", options.total_contacts)
      ->group("")  // set by the running processes for the ones a policy spawns
      ->check(CLI::Range(0LL, 2'000'000'000LL));
  cli.add_flag("--transport", options.transport,
               "daily trips between the districts (gravity model, Alg. 11 line 11)");
  cli.add_option("--travel-fraction", options.trips.travel_fraction,
                 "with --transport: share of the population travelling each day")
      ->check(CLI::Range(0.0, 1.0));
  cli.add_option("--trip-contacts", options.trips.contacts_per_trip,
                 "with --transport: residents a traveller meets at the destination")
      ->check(CLI::Range(0, 1000));
  cli.add_flag("--static", options.static_mode, "no balancing (FLEXMPI_POLICY=none): same code");
  cli.add_flag("--graph-stats", options.graph_stats,
               "print the contact graph's degree statistics and exit");
  cli.add_flag("--quiet", options.quiet, "print only the result line");
  CLI11_PARSE(cli, argc, argv);

  const int population =
      options.population > 0 ? options.population : kClassPopulation.at(options.problem_class);
  const int steps_per_day = epigraph::kMinutesPerDay / options.step_minutes;
  const long long total_steps = static_cast<long long>(options.days) * steps_per_day;
  if (options.sampling_interval > 0) {
    setenv("FLEXMPI_SAMPLING_INTERVAL", std::to_string(options.sampling_interval).c_str(), 1);
  }
  // One sampling interval per simulated day, as in the thesis (6.4: "1 day of simulation").
  setenv("FLEXMPI_SAMPLING_INTERVAL", std::to_string(steps_per_day).c_str(), 0);
  if (!options.trace.empty()) setenv("FLEXMPI_TRACE", options.trace.c_str(), 1);
  if (options.static_mode) setenv("FLEXMPI_POLICY", "none", 1);
  if (!options.lb_model.empty()) setenv("FLEXMPI_LB_MODEL", options.lb_model.c_str(), 1);
  setenv("FLEXMPI_LB_MODEL", "weight", 0);  // EpiGraph's work follows the epidemic (thesis 6.2)
  const std::string lb_model = std::getenv("FLEXMPI_LB_MODEL");
  const bool weight_model = lb_model == "weight";
  const bool weight_from_last_interval = weight_model && options.row_weight == "last";
  // The interval the library closes is the one whose weights must be fresh.
  const int sampling_interval = std::atoi(std::getenv("FLEXMPI_SAMPLING_INTERVAL"));

  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
  // A process spawned by a policy gets its rows from the others (XMPI_Get_data).
  const bool spawned = XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED;

  int count = 0, displ = 0;
  check(XMPI_Get_wsize(rank, nprocs, population, &count, &displ), "XMPI_Get_wsize");
  const double generation_start = MPI_Wtime();
  epigraph::LocalGraph graph{{0}, {}, {}};
  try {
    if (!spawned) graph = epigraph::generate_local_graph(population, options.seed, displ, count);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "flexmpi-epigraph: --population: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }
  const double generation_seconds = MPI_Wtime() - generation_start;
  if (options.graph_stats) {
    report_graph_stats(graph, population, rank, nprocs);
    MPI_Finalize();
    return 0;
  }

  long long total_contacts = static_cast<long long>(graph.columns.size());
  std::vector<double> row_weight;  // weight model: every row's, on every process
  if (weight_model) row_weight.assign(static_cast<std::size_t>(population), 1.0);
  if (spawned) {
    if (options.total_contacts < 0) {
      std::fprintf(stderr, "flexmpi-epigraph: a spawned process needs --total-contacts\n");
      MPI_Abort(XMPI_COMM_WORLD, 2);
    }
    total_contacts = options.total_contacts;
  } else {
    MPI_Allreduce(MPI_IN_PLACE, &total_contacts, 1, MPI_LONG_LONG, MPI_SUM, XMPI_COMM_WORLD);
  }
  std::vector<std::string> newcomer_strings;
  std::vector<char*> newcomer_argv =
      newcomer_arguments(argc, argv, total_contacts, newcomer_strings);
  if (total_contacts > 2'000'000'000LL) {
    if (rank == 0)
      std::fprintf(stderr, "flexmpi-epigraph: %lld contacts: more than an int holds\n",
                   total_contacts);
    MPI_Finalize();
    return 2;
  }

  Population people;
  people.row_start = allocate<int>(graph.row_start.size());
  std::copy(graph.row_start.begin(), graph.row_start.end(), people.row_start);
  people.contacts = allocate<int>(graph.columns.size());
  std::copy(graph.columns.begin(), graph.columns.end(), people.contacts);
  people.contact_kinds = allocate<std::uint8_t>(graph.kinds.size());
  std::copy(graph.kinds.begin(), graph.kinds.end(), people.contact_kinds);
  graph = {};

  const epigraph::EpidemicParameters parameters;
  const EpidemicModel model(parameters, options.seed, options.step_minutes);
  const epigraph::Transportation transportation(population, options.seed, options.trips);
  people.state = allocate<std::uint8_t>(static_cast<std::size_t>(count));
  people.minutes_left = allocate<int>(static_cast<std::size_t>(count));
  std::fill_n(people.state, count, epigraph::susceptible);
  std::fill_n(people.minutes_left, count, 0);
  const int index_begin = epigraph::district_begin(parameters.index_district, population);
  const int index_size =
      epigraph::district_begin(parameters.index_district + 1, population) - index_begin;
  for (int k = 0; k < parameters.index_cases && !spawned; ++k) {
    const int individual =
        index_begin +
        static_cast<int>(epigraph::uniform(options.seed, epigraph::Purpose::index_cases,
                                           static_cast<std::uint64_t>(k)) *
                         index_size);
    if (individual < displ || individual >= displ + count) continue;
    people.state[individual - displ] = epigraph::infectious_symptomatic;
    people.minutes_left[individual - displ] =
        model.duration_minutes(individual, epigraph::infectious_symptomatic, 0);
  }

  check(XMPI_Register_sparse(&people.row_start, &people.contacts, &people.contact_kinds, population,
                             static_cast<int>(total_contacts), MPI_UNSIGNED_CHAR, XMPI_DISTRIBUTED),
        "XMPI_Register_sparse");
  check(XMPI_Register_vector(&people.state, population, MPI_UNSIGNED_CHAR, XMPI_DISTRIBUTED),
        "XMPI_Register_vector(state)");
  check(XMPI_Register_vector(&people.minutes_left, population, MPI_INT, XMPI_DISTRIBUTED),
        "XMPI_Register_vector(minutes_left)");
  // Weight model: the per-row weight given to the balancer is each
  // individual's mean work per step over the next sampling interval
  // (forecast) or the last one (accumulated in interval_work, which moves
  // with the rows), replicated because XMPI_Eval_reconfig takes the weight
  // of every row.
  if (weight_from_last_interval) {
    people.interval_work = allocate<double>(static_cast<std::size_t>(count));
    std::fill_n(people.interval_work, count, 0.0);
    check(XMPI_Register_vector(&people.interval_work, population, MPI_DOUBLE, XMPI_DISTRIBUTED),
          "XMPI_Register_vector(interval_work)");
  }
  // What the loop carries besides the registered rows, as records: every
  // checkpoint saves rank 0's copy and a restart gives it to every process.
  // The curve so far (one row per day: states, work; sized for every day),
  // the day being counted (its work so far, which rank 0 holds), and the
  // moves (rank 0's; the summary prints the largest) and peak process count
  // of the summary line. The row weights are not saved: every interval end
  // computes them again before the balancer reads them, and the first
  // interval after a restart, like a run's first, starts from equal weights.
  using DayCounts = std::array<long long, epigraph::state_count + 1>;
  static_assert(sizeof(DayCounts) == (epigraph::state_count + 1) * sizeof(long long));
  std::vector<DayCounts> curve(static_cast<std::size_t>(options.days));
  DayCounts day{};           // work accumulates over the day
  int counters[2] = {0, 0};  // moves, peak processes
  int& moves = counters[0];
  int& peak_processes = counters[1];
  check(XMPI_Register_record("curve", curve.data(),
                             static_cast<long long>(curve.size() * day.size()), MPI_LONG_LONG),
        "XMPI_Register_record(curve)");
  check(XMPI_Register_record("day", day.data(), static_cast<long long>(day.size()), MPI_LONG_LONG),
        "XMPI_Register_record(day)");
  check(XMPI_Register_record("counters", counters, 2, MPI_INT), "XMPI_Register_record(counters)");
  // With checkpoints the day's work goes to rank 0 at every step (hand_work_to_root).
  const char* checkpoint_file = std::getenv("FLEXMPI_CHECKPOINT");
  const bool checkpointing = checkpoint_file != nullptr && *checkpoint_file != '\0';

  // Where the loop starts: 0; in a process spawned by a policy, where the
  // others are, with its rows taken from them (XMPI_Get_data); in a job
  // restarted from a checkpoint (FLEXMPI_RESTART), after the checkpointed
  // step, with the rows and the records above read back.
  int first_step = 0;
  check(XMPI_Resume(&first_step), "XMPI_Resume");
  if (spawned || first_step > 0) {  // the block the rows were given
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
    check(XMPI_Get_wsize(rank, nprocs, population, &count, &displ), "XMPI_Get_wsize");
  }
  if (rank != 0) day.fill(0);  // a restart gives every process rank 0's day
  peak_processes = std::max(peak_processes, nprocs);

  std::vector<int> counts(static_cast<std::size_t>(nprocs)), displs(counts.size());
  check(XMPI_Get_decomposition(nprocs, population, counts.data(), displs.data()),
        "XMPI_Get_decomposition");
  std::vector<std::vector<int>> outgoing(static_cast<std::size_t>(nprocs));
  std::vector<int> incoming;
  std::vector<double> local_weight;
  bool removed = false;

  const double start = MPI_Wtime();
  for (long long step = first_step; step < total_steps && !removed; ++step) {
    check(XMPI_Monitor_si_init(), "XMPI_Monitor_si_init");
    epigraph::update_status(people, count, displ, model, step);
    epigraph::StepWork work;
    if (options.transport && step % steps_per_day == 0) {  // Alg. 11 line 11, once a day
      epigraph::DistrictInfectious infectious;
      transportation.count_infectious(people, count, displ, infectious);
      MPI_Allreduce(MPI_IN_PLACE, infectious.symptomatic.data(), epigraph::kDistricts,
                    MPI_LONG_LONG, MPI_SUM, XMPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, infectious.asymptomatic.data(), epigraph::kDistricts,
                    MPI_LONG_LONG, MPI_SUM, XMPI_COMM_WORLD);
      work += transportation.travel(people, count, displ, displs, model, infectious, step,
                                    static_cast<int>(step / steps_per_day), outgoing);
    }
    work += epigraph::compute_spread(people, count, displ, displs, model, step, outgoing);
    exchange_infections(outgoing, incoming);
    for (const int individual : incoming)
      epigraph::infect(people, individual - displ, individual, model, step);
    day[epigraph::state_count] += work.operations();
    if (weight_model) check(XMPI_Set_work(work.cost()), "XMPI_Set_work");

    const bool interval_ends = (step + 1) % sampling_interval == 0;
    if ((step + 1) % steps_per_day == 0) {
      for (int i = 0; i < count; ++i) ++day[people.state[i]];
      MPI_Allreduce(MPI_IN_PLACE, day.data(), static_cast<int>(day.size()), MPI_LONG_LONG, MPI_SUM,
                    XMPI_COMM_WORLD);
      curve[static_cast<std::size_t>(step / steps_per_day)] = day;
      day.fill(0);
    } else if (interval_ends || checkpointing) {
      hand_work_to_root(day[epigraph::state_count], rank);
    }
    if (weight_model && interval_ends) {
      local_weight.resize(static_cast<std::size_t>(count));
      if (weight_from_last_interval) {
        for (int i = 0; i < count; ++i) {
          local_weight[i] = people.interval_work[i] / sampling_interval;
          people.interval_work[i] = 0.0;
        }
      } else {
        epigraph::forecast_work(people, count, sampling_interval * options.step_minutes, parameters,
                                local_weight);
      }
      MPI_Allgatherv(local_weight.data(), count, MPI_DOUBLE, row_weight.data(), counts.data(),
                     displs.data(), MPI_DOUBLE, XMPI_COMM_WORLD);
    }
    const int old_displ = displ, old_count = count;
    check(XMPI_Eval_reconfig(rank, nprocs, static_cast<int>(step), static_cast<int>(total_steps),
                             &count, &displ, weight_model ? row_weight.data() : nullptr,
                             newcomer_argv.data(), nullptr),
          "XMPI_Eval_reconfig");
    if (XMPI_Get_process_status() == XMPI_REMOVED) {
      removed = true;
      break;
    }
    if (count != old_count || displ != old_displ) ++moves;
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    MPI_Comm_size(XMPI_COMM_WORLD, &nprocs);
    peak_processes = std::max(peak_processes, nprocs);
    counts.resize(static_cast<std::size_t>(nprocs));
    displs.resize(counts.size());
    outgoing.resize(counts.size());
    check(XMPI_Get_decomposition(nprocs, population, counts.data(), displs.data()),
          "XMPI_Get_decomposition");
  }
  if (removed) {  // XMPI_COMM_WORLD is MPI_COMM_NULL here: nothing left but to finish
    epigraph::free_population(people);
    MPI_Finalize();
    return 0;
  }
  double elapsed = MPI_Wtime() - start;
  MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, XMPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &moves, 1, MPI_INT, MPI_MAX, XMPI_COMM_WORLD);

  long long iterations = 0;
  double computation = 0.0, cpu = 0.0, mpi = 0.0;
  check(XMPI_Get_monitor_totals(&iterations, nullptr, &cpu, &mpi, &computation),
        "XMPI_Get_monitor_totals");
  const double mine[5] = {static_cast<double>(count), static_cast<double>(people.row_start[count]),
                          computation, cpu, mpi};
  std::vector<double> all(5 * static_cast<std::size_t>(nprocs));
  MPI_Gather(mine, 5, MPI_DOUBLE, all.data(), 5, MPI_DOUBLE, 0, XMPI_COMM_WORLD);
  int exit_code = 0;
  if (rank == 0) {
    // FNV-1a of the curve: equal curves, equal checksums.
    std::uint64_t checksum = 0xCBF29CE484222325ULL;
    long long peak = -1;
    int peak_day = 0;
    for (std::size_t d = 0; d < curve.size(); ++d) {
      for (const long long value : curve[d]) {
        checksum = (checksum ^ static_cast<std::uint64_t>(value)) * 0x100000001B3ULL;
      }
      const long long infectious =
          curve[d][epigraph::infectious_symptomatic] + curve[d][epigraph::infectious_asymptomatic];
      if (infectious > peak) peak = infectious, peak_day = static_cast<int>(d) + 1;
    }
    const auto& last = curve.back();
    if (!options.output.empty()) {
      std::ofstream csv(options.output);
      csv << "day";
      for (const char* name : epigraph::kStateNames) csv << ',' << name;
      csv << ",work\n";
      for (std::size_t d = 0; d < curve.size(); ++d) {
        csv << d + 1;
        for (const long long value : curve[d]) csv << ',' << value;
        csv << '\n';
      }
      if (!csv) {
        std::fprintf(stderr, "flexmpi-epigraph: --output %s: cannot write\n",
                     options.output.c_str());
        exit_code = 1;
      }
    }
    std::printf(
        "flexmpi-epigraph: population=%d contacts=%lld days=%d step_minutes=%d iterations=%lld "
        "processes=%d peak_processes=%d mode=%s lb_model=%s row_weight=%s transport=%s moves=%d "
        "attack_rate=%.4f peak_day=%d "
        "dead=%lld "
        "curve_checksum=%016llx generation=%.3f s time=%.3f s\n",
        population, total_contacts, options.days, options.step_minutes, total_steps, nprocs,
        peak_processes, options.static_mode ? "static" : "balanced", lb_model.c_str(),
        weight_model ? options.row_weight.c_str() : "-", options.transport ? "on" : "off", moves,
        1.0 - static_cast<double>(last[epigraph::susceptible]) / population, peak_day,
        last[epigraph::dead], static_cast<unsigned long long>(checksum), generation_seconds,
        elapsed);
    if (!options.quiet) {
      std::printf("%5s %10s %12s %14s %10s %10s\n", "rank", "rows", "contacts", "computation s",
                  "cpu s", "mpi s");
      for (int p = 0; p < nprocs; ++p) {
        const double* v = &all[5 * static_cast<std::size_t>(p)];
        std::printf("%5d %10.0f %12.0f %14.3f %10.3f %10.3f\n", p, v[0], v[1], v[2], v[3], v[4]);
      }
    }
  }
  epigraph::free_population(people);
  MPI_Finalize();
  return exit_code;
}
