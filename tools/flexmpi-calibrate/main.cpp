// flexmpi-calibrate: measures the machine profile the prediction model prices
// with (thesis 6.3.1) and writes it as JSON (src/model/machine_profile.hpp).
//
//   mpiexec -n 2 flexmpi-calibrate [--quick] [--only=network|spawn|redistribution]
//                                  --output FILE
//
// Phases, in this order (rank 0 prints progress on stderr):
//   network         ping-pong between ranks 0 and 1 at 8 B .. 8 MiB (x2), timed
//                   as routine_timing.hpp says (interleaved sizes, median of
//                   per-round minima): one Hockney pair (the thesis's) and the
//                   message-size bands (split at the cache sizes and wherever
//                   one alpha + n beta misses a point by > 3 %); between rank 0
//                   and the first rank on another host too, if any
//                   (inter_node); gamma = MPI_Reduce_local(MPI_SUM) of doubles;
//                   then each collective of the model at 8 B .. 8 MiB (x2) on
//                   the first k ranks, k = 2 .. all: the per-collective fit per
//                   communicator size, measured / modelled per size
//                   (src/model/calibration.hpp).
//   spawn           (Open MPI only: Debian's MPICH cannot spawn) XMPI_Spawn of 1,
//                   2 and 4 processes (--quick: 1, 2), XMPI_Remove of them, as
//                   bench/spawn_cost does: seconds per process at each count.
//                   The spawned processes run this program with --spawn-step
//                   and follow the script until they are removed.
//   redistribution  XMPI_Redistribute_data of a registered vector of doubles,
//                   moving k rows for several k: latency and seconds per byte of
//                   the busiest process (sent + received), least squares.
// --link-from FILE keeps FILE's links and gamma and measures only the fits:
// calibrate the links on 2 processes, then the fits on more (bench/comm_model/run.sh).
// Phases left out by --only keep the documented defaults (MachineProfile::defaults)
// and "measured" in the output says which were measured.
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/settings.hpp"
#include "flexmpi.h"
#include "model/calibration.hpp"
#include "model/comm_model.hpp"
#include "model/machine_profile.hpp"
#include "model/reconfiguration_cost.hpp"
#include "routine_timing.hpp"
#include "util/output_file.hpp"
#include "util/statistics.hpp"

namespace {

using flexmpi::Routine;

struct Options {
  bool quick = false;
  std::string only;
  std::string output;
  std::string link_from;  // reuse the links and gamma of this profile (fits only)
  int spawn_step = -1;    // >= 0: a spawned process joining the spawn script there
};

int rank_ = 0;
int size_ = 1;

void progress(const char* format, ...) __attribute__((format(printf, 1, 2)));
void progress(const char* format, ...) {
  if (rank_ != 0) return;
  va_list args;
  va_start(args, format);
  std::fprintf(stderr, "flexmpi-calibrate: ");
  std::vfprintf(stderr, format, args);
  std::fprintf(stderr, "\n");
  va_end(args);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "flexmpi-calibrate: %s\n", what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void check(int code, const char* what) {
  if (code != XMPI_SUCCESS) {
    fail(std::string(what) + " failed: " + XMPI_Error_string(code) + " (" +
         XMPI_Last_error_message() + ")");
  }
}

// ---- network -------------------------------------------------------------

// How much is measured: sizes, rounds (interleaved) and repetitions per round.
struct Plan {
  std::vector<int> link_sizes;        // ping-pong: 8 B .. 8 MiB, x2
  std::vector<int> collective_sizes;  // collectives: 8 B .. 8 MiB, x2
  int rounds;                         // ping-pong: rounds of interleaved sizes
  int reps;                           // and timed calls per size and round
  int collective_rounds;              // collectives: fewer (9 routines x each communicator size)
  int collective_reps;
};

Plan network_plan(bool quick) {
  Plan plan{{}, {}, quick ? 3 : 15, quick ? 2 : 10, quick ? 3 : 9, quick ? 2 : 5};
  for (int n = 8; n <= (8 << 20); n *= quick ? 4 : 2) plan.link_sizes.push_back(n);
  for (int n = 8; n <= (8 << 20); n *= quick ? 16 : 2) plan.collective_sizes.push_back(n);
  return plan;
}

// Where the copy changes regime: the data caches (a message larger than a
// cache is copied from the next level). The eager/rendezvous switch of the
// transport is found by the band split (fit_link_bands), as any other break.
std::vector<double> cache_edges() {
  std::vector<double> edges;
  for (int name : {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE}) {
    const long bytes = sysconf(name);
    if (bytes > 0) edges.push_back(static_cast<double>(bytes));
  }
  return edges;
}

// A barrier that sleeps while it waits: ranks left out of a measurement on a
// sub-communicator must not take the cores of the ranks being measured (an
// MPI barrier polls, even with mpi_yield_when_idle).
void sleeping_barrier(MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(comm, &request);
  for (int done = 0; MPI_Test(&request, &done, MPI_STATUS_IGNORE), !done;) usleep(200);
}

std::vector<double> as_doubles(const std::vector<int>& sizes) {
  return {sizes.begin(), sizes.end()};
}

// One-way times between ranks 0 and `peer` of XMPI_COMM_WORLD at the plan's
// sizes, fitted as one Hockney pair (alpha = the smallest size's time, beta by
// relative least squares over all: the thesis's model, kept for comparison)
// and as message-size bands.
flexmpi::LinkParameters calibrate_link(int peer, const Plan& plan) {
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(XMPI_COMM_WORLD, rank_ == 0 || rank_ == peer ? 0 : MPI_UNDEFINED, rank_, &pair);
  std::vector<double> seconds(plan.link_sizes.size());
  if (pair != MPI_COMM_NULL) {
    flexmpi_timing::Buffers buffers(static_cast<std::size_t>(plan.link_sizes.back()), 2);
    const auto times = flexmpi_timing::time_sizes(Routine::send_recv, plan.link_sizes, plan.rounds,
                                                  plan.reps, buffers, pair);
    for (std::size_t i = 0; i < times.size(); ++i) seconds[i] = times[i].seconds;
    MPI_Comm_free(&pair);
  }
  sleeping_barrier(XMPI_COMM_WORLD);
  MPI_Bcast(seconds.data(), int(seconds.size()), MPI_DOUBLE, 0, XMPI_COMM_WORLD);
  const std::vector<double> bytes = as_doubles(plan.link_sizes);
  const flexmpi::LinkBand one = flexmpi::fit_hockney(bytes, seconds);
  flexmpi::LinkParameters link{seconds.front(), one.beta, {}};
  link.bands = flexmpi::fit_link_bands(bytes, seconds, cache_edges(), 0.03);
  for (const flexmpi::LinkBand& band : link.bands) {
    progress("[network]   band up to %9.0f B: alpha %7.3f us, beta %.4f ns/B", band.up_to,
             1e6 * band.alpha, 1e9 * band.beta);
  }
  return link;
}

double measure_gamma(bool quick) {
  const int n = 1 << 17;  // 1 MiB of doubles
  std::vector<double> in(n, 1.0), inout(n, 2.0);
  std::vector<std::vector<double>> rounds;
  for (int r = 0; r < (quick ? 3 : 7); ++r) {
    rounds.emplace_back();
    for (int rep = 0; rep < 5; ++rep) {
      const double start = MPI_Wtime();
      MPI_Reduce_local(in.data(), inout.data(), n, MPI_DOUBLE, MPI_SUM);
      rounds.back().push_back((MPI_Wtime() - start) / (n * sizeof(double)));
    }
  }
  double gamma = flexmpi::median_of_minima(rounds).seconds, slowest = 0.0;
  MPI_Allreduce(&gamma, &slowest, 1, MPI_DOUBLE, MPI_MAX, XMPI_COMM_WORLD);
  return slowest;
}

// The remote peer of rank 0 (first rank on another host), or -1.
int remote_peer() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> names(static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, XMPI_COMM_WORLD);
  for (int r = 1; r < size_; ++r) {
    if (std::strcmp(&names[r * MPI_MAX_PROCESSOR_NAME], names.data()) != 0) return r;
  }
  return -1;
}

// Per-collective fits of the linked library's model on the first k ranks,
// for every k from 2 to the processes launched (a fit per communicator size).
void calibrate_collectives(flexmpi::MachineProfile& profile, const Plan& plan,
                           flexmpi::MpiLibrary library) {
  const std::vector<Routine> routines = {
      Routine::bcast,     Routine::scatter,    Routine::gather,
      Routine::allgather, Routine::allgatherv, Routine::reduce,
      Routine::allreduce, Routine::alltoall,   Routine::alltoallv};
  const flexmpi::PiecewiseLink link = profile.link(false);
  const std::vector<double> bytes = as_doubles(plan.collective_sizes);
  profile.collectives.clear();
  for (int k = 2; k <= size_; ++k) {
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_split(XMPI_COMM_WORLD, rank_ < k ? 0 : MPI_UNDEFINED, rank_, &comm);
    progress("[network] collectives on %d processes, %zu sizes 8 B .. %d B", k, bytes.size(),
             plan.collective_sizes.back());
    for (Routine routine : routines) {
      std::vector<double> seconds(bytes.size());
      if (comm != MPI_COMM_NULL) {
        flexmpi_timing::Buffers buffers(static_cast<std::size_t>(plan.collective_sizes.back()), k);
        const auto times =
            flexmpi_timing::time_sizes(routine, plan.collective_sizes, plan.collective_rounds,
                                       plan.collective_reps, buffers, comm);
        for (std::size_t i = 0; i < times.size(); ++i) seconds[i] = times[i].seconds;
      }
      sleeping_barrier(XMPI_COMM_WORLD);
      MPI_Bcast(seconds.data(), int(seconds.size()), MPI_DOUBLE, 0, XMPI_COMM_WORLD);
      profile.collectives[routine].push_back(
          flexmpi::fit_collective(library, routine, k, bytes, seconds, link));
    }
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
}

void calibrate_network(flexmpi::MachineProfile& profile, const Options& options,
                       flexmpi::MpiLibrary library) {
  const Plan plan = network_plan(options.quick);
  if (!options.link_from.empty()) {
    // The links of a 2-process calibration: ranks 0 and 1 alone on the cores
    // (with more ranks launched on 2 cores, even sleeping ones slow the ping-pong).
    const flexmpi::MachineProfile links = flexmpi::load_machine_profile(options.link_from);
    profile.intra_node = links.intra_node;
    profile.inter_node = links.inter_node;
    profile.inter_node_measured = links.inter_node_measured;
    profile.gamma = links.gamma;
    progress("[network] links and gamma from %s", options.link_from.c_str());
    calibrate_collectives(profile, plan, library);
    return;
  }
  progress("[network] ping-pong rank 0 <-> 1, %zu sizes 8 B .. %d B, %d rounds x %d",
           plan.link_sizes.size(), plan.link_sizes.back(), plan.rounds, plan.reps);
  profile.intra_node = calibrate_link(1, plan);
  const int remote = remote_peer();
  if (remote > 0) {
    progress("[network] ping-pong rank 0 <-> %d (another host)", remote);
    profile.inter_node = calibrate_link(remote, plan);
    profile.inter_node_measured = true;
  } else {
    progress("[network]   one host: inter_node = intra_node (not measured)");
    profile.inter_node = profile.intra_node;
    profile.inter_node_measured = false;
  }
  profile.gamma = measure_gamma(options.quick);
  progress("[network]   gamma %.3g ns/B (MPI_Reduce_local, MPI_SUM of doubles)",
           1e9 * profile.gamma);

  calibrate_collectives(profile, plan, library);
}

// ---- spawn and remove (Open MPI) ------------------------------------------

struct SpawnStep {
  bool spawn;
  int processes;
};

// Processes spawned (and removed) at once: the cost per process grows with
// the count on an oversubscribed machine (measured 103 ms at 2, 134 ms at 4).
std::vector<int> spawn_counts(bool quick) {
  return quick ? std::vector<int>{1, 2} : std::vector<int>{1, 2, 4};
}

std::vector<SpawnStep> spawn_script(bool quick) {
  std::vector<SpawnStep> steps;
  for (int r = 0; r < (quick ? 1 : 3); ++r) {
    for (int k : spawn_counts(quick)) {
      steps.push_back({true, k});
      steps.push_back({false, k});
    }
  }
  return steps;
}

// Runs the script from `first`; returns false on a process that was removed.
bool run_spawn_script(const Options& options, int first, std::vector<std::vector<double>>* spawn,
                      std::vector<std::vector<double>>* remove) {
  const std::vector<SpawnStep> steps = spawn_script(options.quick);
  for (std::size_t s = static_cast<std::size_t>(first); s < steps.size(); ++s) {
    const SpawnStep& step = steps[s];
    std::vector<std::string> args = {"--spawn-step", std::to_string(s + 1), "--output",
                                     options.output};
    if (options.quick) args.push_back("--quick");
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    MPI_Barrier(XMPI_COMM_WORLD);
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank_);
    progress("[spawn] %s %d process%s (step %zu of %zu)", step.spawn ? "spawn" : "remove",
             step.processes, step.processes == 1 ? "" : "es", s + 1, steps.size());
    const double start = MPI_Wtime();
    const int code = step.spawn
                         ? XMPI_Spawn(nullptr, argv.data(), step.processes, MPI_INFO_NULL, nullptr)
                         : XMPI_Remove(step.processes, nullptr);
    const double seconds = (MPI_Wtime() - start) / step.processes;
    check(code, step.spawn ? "XMPI_Spawn" : "XMPI_Remove");
    if (XMPI_Get_process_status() == XMPI_REMOVED) return false;
    if (spawn != nullptr) (step.spawn ? *spawn : *remove)[step.processes].push_back(seconds);
  }
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank_);
  MPI_Comm_size(XMPI_COMM_WORLD, &size_);
  return true;
}

// Spawn and remove cost per process at 1, 2 (and 4) processes (Open MPI only);
// false when skipped.
bool calibrate_spawn(flexmpi::MachineProfile& profile, const Options& options,
                     flexmpi::MpiLibrary library) {
  if (library != flexmpi::MpiLibrary::open_mpi) {
    progress("[spawn] skipped: process creation needs Open MPI (%s cannot spawn); defaults kept",
             std::string(flexmpi::library_name(library)).c_str());
    return false;
  }
  std::vector<std::vector<double>> spawn(5), remove(5);
  run_spawn_script(options, 0, &spawn, &remove);
  profile.spawn.clear();
  profile.remove.clear();
  for (int k : spawn_counts(options.quick)) {
    profile.spawn.push_back({k, flexmpi::median(spawn[k])});
    profile.remove.push_back({k, flexmpi::median(remove[k])});
    progress("[spawn]   %d at once: spawn %.1f ms, remove %.2f ms per process", k,
             1e3 * profile.spawn.back().seconds_per_process,
             1e3 * profile.remove.back().seconds_per_process);
  }
  return true;
}

// ---- redistribution ----------------------------------------------------------

void calibrate_redistribution(flexmpi::MachineProfile& profile, bool quick) {
  const int rows = quick ? (1 << 18) : (1 << 21);  // doubles: 2 MiB / 16 MiB
  int count = 0, displ = 0;
  check(XMPI_Get_wsize(rank_, size_, rows, &count, &displ), "XMPI_Get_wsize");
  double* x = static_cast<double*>(std::malloc(sizeof(double) * std::max(count, 1)));
  for (int i = 0; i < count; ++i) x[i] = displ + i;
  check(XMPI_Register_vector(&x, rows, MPI_DOUBLE, XMPI_DISTRIBUTED), "XMPI_Register_vector");
  const flexmpi::Decomposition block = flexmpi::block_decomposition(rows, size_);
  const std::vector<int> moves =
      quick ? std::vector<int>{1024, 65536} : std::vector<int>{1024, 16384, 131072, 524288};
  const std::vector<flexmpi::StructureShape> shape = {
      {flexmpi::StructureKind::vector, flexmpi::Scheme::distributed, rows, 0, sizeof(double)}};
  flexmpi::MachineProfile unit = profile;  // prices 1 s per byte: gives the busiest bytes
  unit.redistribution_latency = 0;
  unit.redistribution_seconds_per_byte = 1;
  std::vector<double> bytes, seconds;
  for (int k : moves) {
    // Rank 0 takes k rows from the others: every block shifts by k.
    flexmpi::Decomposition moved = block;
    moved[0].count += k;
    moved.back().count -= k;
    for (int r = 1; r < size_; ++r) moved[r].displ += k;
    const double busiest =
        flexmpi::redistribution_cost_planned(shape, block, moved, unit).busiest_bytes;
    std::vector<double> samples;
    for (int rep = 0; rep < (quick ? 3 : 8); ++rep) {
      for (int direction = 0; direction < 2; ++direction) {
        const auto& from = direction == 0 ? block : moved;
        const auto& to = direction == 0 ? moved : block;
        MPI_Barrier(XMPI_COMM_WORLD);
        const double start = MPI_Wtime();
        check(XMPI_Redistribute_data(int(from[rank_].count), int(from[rank_].displ),
                                     int(to[rank_].count), int(to[rank_].displ)),
              "XMPI_Redistribute_data");
        double t = MPI_Wtime() - start, slowest = 0;
        MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, XMPI_COMM_WORLD);
        samples.push_back(slowest);
      }
    }
    bytes.push_back(busiest);
    seconds.push_back(flexmpi::median(samples));
    progress("[redistribution] %d rows (%.0f KiB busiest process): %.3f ms", k, busiest / 1024,
             1e3 * seconds.back());
  }
  // Latency from the smallest move (its bytes cost next to nothing), the price
  // per byte from the larger ones (a least-squares line lets the largest,
  // noisiest point set the intercept).
  const double latency = seconds.front();
  std::vector<double> prices;
  for (std::size_t i = 1; i < bytes.size(); ++i) {
    prices.push_back(std::max(0.0, seconds[i] - latency) / bytes[i]);
  }
  const double price = flexmpi::median(prices);
  profile.redistribution_seconds_per_byte = price;
  profile.redistribution_latency = latency;
  progress("[redistribution]   latency %.3g ms, %.3g ns/B", 1e3 * latency, 1e9 * price);
}

// The network phase measures between two ranks and the redistribution phase
// moves rows between them; the spawn phase alone runs on one process.
int minimum_processes(const Options& options) { return options.only == "spawn" ? 1 : 2; }

// --output is checked before anything is measured: a path that cannot be
// written, or that is the file of an input (--link-from, a FLEXMPI_* file) or
// of another output, would otherwise be found after minutes of measuring.
bool output_writable(const Options& options) {
  int writable = 1;
  if (rank_ == 0) {
    try {
      const flexmpi::Config config = flexmpi::load_config_from_environment();
      std::vector<flexmpi::FileSetting> inputs = flexmpi::input_files(config);
      if (!options.link_from.empty()) inputs.push_back({"--link-from", options.link_from});
      std::vector<flexmpi::OutputSetting> outputs = flexmpi::output_files(config);
      outputs.push_back({"--output", options.output});
      flexmpi::check_outputs(inputs, outputs, flexmpi::Errc::io_failure);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "flexmpi-calibrate: %s\n", error.what());
      writable = 0;
    }
  }
  MPI_Bcast(&writable, 1, MPI_INT, 0, XMPI_COMM_WORLD);
  return writable == 1;
}

std::string library_version() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string text(version, static_cast<std::size_t>(length));
  return text.substr(0, text.find_first_of(std::string("\n\0", 2)));
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{
      "flexmpi-calibrate: measure the machine profile of flexmpi's prediction model (alpha, "
      "beta, gamma, per-collective fits, spawn/remove cost, redistribution cost) and write it "
      "as JSON for FLEXMPI_MACHINE_PROFILE. Run it with mpiexec -n 2 (or more)."};
  app.add_flag("--quick", options.quick, "fewer sizes and repetitions: a few seconds");
  app.add_option("--only", options.only, "measure one phase only (the others keep the defaults)")
      ->check(CLI::IsMember({"network", "spawn", "redistribution"}));
  app.add_option("--output,-o", options.output, "the JSON machine profile to write")->required();
  app.add_option("--link-from", options.link_from,
                 "network phase: take the links and gamma from this profile (e.g. of a 2-process "
                 "run) and measure only the per-collective fits");
  app.add_option("--spawn-step", options.spawn_step, "internal: spawned process")
      ->group("");  // hidden
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank_);
  MPI_Comm_size(XMPI_COMM_WORLD, &size_);
  if (options.spawn_step >= 0) {  // a spawned process: follow the script until removed
    run_spawn_script(options, options.spawn_step, nullptr, nullptr);
    MPI_Finalize();
    return 0;
  }
  const int needed = minimum_processes(options);
  if (size_ < needed) {  // a usage error, not a failure: every rank ends cleanly
    if (rank_ == 0) {
      std::fprintf(stderr,
                   "flexmpi-calibrate: needs at least %d processes, started on %d: run it as "
                   "mpiexec -n %d %s --output FILE\n",
                   needed, size_, needed, argv[0]);
    }
    MPI_Finalize();
    return 2;
  }
  if (!output_writable(options)) {
    MPI_Finalize();
    return 2;
  }
  const std::string version = library_version();
  const flexmpi::MpiLibrary library = flexmpi::detect_mpi_library(version);
  const bool all = options.only.empty();
  const double started = MPI_Wtime();
  progress("%s on %d processes%s; %s", std::string(flexmpi::library_name(library)).c_str(), size_,
           options.quick ? " (--quick)" : "", version.c_str());

  flexmpi::MachineProfile profile = flexmpi::MachineProfile::defaults();
  profile.library = version;
  nlohmann::json measured = {{"network", false}, {"spawn", false}, {"redistribution", false}};
  if (all || options.only == "network") {
    try {
      calibrate_network(profile, options, library);
    } catch (const std::exception& error) {
      fail(error.what());
    }
    measured["network"] = true;
  }
  if (all || options.only == "spawn") {
    measured["spawn"] = calibrate_spawn(profile, options, library);
  }
  if (all || options.only == "redistribution") {
    calibrate_redistribution(profile, options.quick);
    measured["redistribution"] = true;
  }

  if (rank_ == 0) {
    nlohmann::json document = profile.to_json();
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    const std::time_t now = std::time(nullptr);
    char date[32] = {};
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    document["host"] = host;
    document["created"] = date;
    document["processes"] = size_;
    document["quick"] = options.quick;
    document["measured"] = measured;
    document["calibration_seconds"] = MPI_Wtime() - started;
    try {
      flexmpi::parse_machine_profile(document, options.output);  // what the loader will say
      flexmpi::OutputFile out("--output", options.output);
      out.append(document.dump(2) + "\n");
      if (!out.close()) fail("--output='" + options.output + "' is not complete (see above)");
    } catch (const std::exception& error) {
      fail(error.what());
    }
    progress("wrote %s in %.1f s", options.output.c_str(), MPI_Wtime() - started);
  }
  MPI_Finalize();
  return 0;
}
