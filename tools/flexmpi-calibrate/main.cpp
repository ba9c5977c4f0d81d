// flexmpi-calibrate: measures the machine profile the prediction model prices
// with (thesis 6.3.1) and writes it as JSON (src/model/machine_profile.hpp).
//
//   mpiexec -n 2 flexmpi-calibrate [--quick] [--only=network|spawn|redistribution]
//                                  --output FILE
//
// Phases, in this order (rank 0 prints progress on stderr):
//   network         ping-pong between ranks 0 and 1: alpha = median one-way
//                   time of 8 B, beta = median (t - alpha) / n over n >= 32 KiB;
//                   between rank 0 and the first rank on another host too, if
//                   any (inter_node); gamma = MPI_Reduce_local(MPI_SUM) of
//                   doubles, seconds per byte; then each collective of the
//                   model at a few sizes on all ranks, and the per-collective
//                   fit (latency and bandwidth scales, least squares) of the
//                   linked library's cost model (src/model/comm_model.hpp).
//   spawn           (Open MPI only: Debian's MPICH cannot spawn) XMPI_Spawn of 1
//                   and of 2 processes, XMPI_Remove of them, as bench/spawn_cost
//                   does: seconds per process at 1 and 2 processes. The spawned
//                   processes run this program with --spawn-step and follow the
//                   script until they are removed.
//   redistribution  XMPI_Redistribute_data of a registered vector of doubles,
//                   moving k rows for several k: latency and seconds per byte of
//                   the busiest process (sent + received), least squares.
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

#include "flexmpi.h"
#include "model/comm_model.hpp"
#include "model/machine_profile.hpp"
#include "model/reconfiguration_cost.hpp"
#include "util/statistics.hpp"

namespace {

using flexmpi::Routine;

struct Options {
  bool quick = false;
  std::string only;
  std::string output;
  int spawn_step = -1;  // >= 0: a spawned process joining the spawn script there
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

// Median over `reps` of the slowest process's time of `body`.
template <class Body>
double timed(MPI_Comm comm, int reps, Body body) {
  std::vector<double> samples;
  body();  // warm-up
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    body();
    double t = MPI_Wtime() - start, slowest = 0.0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    samples.push_back(slowest);
  }
  return flexmpi::median(samples);
}

// ---- network -------------------------------------------------------------

// One-way ping-pong time between rank 0 and `peer` for each size (others wait).
std::vector<double> ping_pong(int peer, const std::vector<int>& sizes, int reps) {
  std::vector<char> buffer(static_cast<std::size_t>(sizes.back()));
  std::vector<double> one_way;
  for (int n : sizes) {
    const int r = n >= (1 << 20) ? std::max(3, reps / 10) : reps;
    std::vector<double> samples;
    for (int i = 0; i <= r; ++i) {
      MPI_Barrier(XMPI_COMM_WORLD);
      const double start = MPI_Wtime();
      if (rank_ == 0) {
        MPI_Send(buffer.data(), n, MPI_BYTE, peer, 7, XMPI_COMM_WORLD);
        MPI_Recv(buffer.data(), n, MPI_BYTE, peer, 7, XMPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank_ == peer) {
        MPI_Recv(buffer.data(), n, MPI_BYTE, 0, 7, XMPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), n, MPI_BYTE, 0, 7, XMPI_COMM_WORLD);
      }
      if (i > 0) samples.push_back((MPI_Wtime() - start) / 2);
    }
    double t = flexmpi::median(samples);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, XMPI_COMM_WORLD);
    one_way.push_back(t);
  }
  return one_way;
}

// alpha = the 8-byte time; beta minimises the squared RELATIVE error of
// alpha + n beta over all sizes (what the model is judged by: shared-memory
// bandwidth changes with the cache level, so no single beta fits every size).
flexmpi::LinkParameters fit_link(const std::vector<int>& sizes, const std::vector<double>& t) {
  flexmpi::LinkParameters link;
  link.alpha = t.front();
  double num = 0.0, den = 0.0;
  for (std::size_t i = 1; i < sizes.size(); ++i) {
    const double n = sizes[i] / t[i];
    num += n * (t[i] - link.alpha) / t[i];
    den += n * n;
  }
  link.beta = den > 0 ? std::max(0.0, num / den) : 0.0;
  return link;
}

double measure_gamma(bool quick) {
  const int n = 1 << 17;  // 1 MiB of doubles
  std::vector<double> in(n, 1.0), inout(n, 2.0);
  std::vector<double> samples;
  for (int r = 0; r < (quick ? 5 : 30); ++r) {
    const double start = MPI_Wtime();
    MPI_Reduce_local(in.data(), inout.data(), n, MPI_DOUBLE, MPI_SUM);
    samples.push_back((MPI_Wtime() - start) / (n * sizeof(double)));
  }
  double gamma = flexmpi::median(samples), slowest = 0.0;
  MPI_Allreduce(&gamma, &slowest, 1, MPI_DOUBLE, MPI_MAX, XMPI_COMM_WORLD);
  return slowest;
}

// One call of `routine` with `bytes` (the model's convention) on XMPI_COMM_WORLD.
void run_collective(Routine routine, int bytes, std::vector<char>& a, std::vector<char>& b,
                    std::vector<int>& counts, std::vector<int>& displs) {
  const int p = size_;
  const int count = bytes / 8;  // doubles, so that reductions are real
  for (int i = 0; i < p; ++i) {
    counts[i] = bytes;
    displs[i] = i * bytes;
  }
  switch (routine) {
    case Routine::bcast:
      MPI_Bcast(a.data(), bytes, MPI_BYTE, 0, XMPI_COMM_WORLD);
      break;
    case Routine::scatter:
      MPI_Scatter(a.data(), bytes, MPI_BYTE, b.data(), bytes, MPI_BYTE, 0, XMPI_COMM_WORLD);
      break;
    case Routine::gather:
      MPI_Gather(a.data(), bytes, MPI_BYTE, b.data(), bytes, MPI_BYTE, 0, XMPI_COMM_WORLD);
      break;
    case Routine::allgather:
      MPI_Allgather(a.data(), bytes, MPI_BYTE, b.data(), bytes, MPI_BYTE, XMPI_COMM_WORLD);
      break;
    case Routine::allgatherv:
      MPI_Allgatherv(a.data(), bytes, MPI_BYTE, b.data(), counts.data(), displs.data(), MPI_BYTE,
                     XMPI_COMM_WORLD);
      break;
    case Routine::reduce:
      MPI_Reduce(a.data(), b.data(), count, MPI_DOUBLE, MPI_SUM, 0, XMPI_COMM_WORLD);
      break;
    case Routine::allreduce:
      MPI_Allreduce(a.data(), b.data(), count, MPI_DOUBLE, MPI_SUM, XMPI_COMM_WORLD);
      break;
    case Routine::alltoall:
      MPI_Alltoall(a.data(), bytes, MPI_BYTE, b.data(), bytes, MPI_BYTE, XMPI_COMM_WORLD);
      break;
    case Routine::alltoallv:  // `bytes` in total to the others, split evenly
      for (int i = 0; i < p; ++i) {
        counts[i] = i == rank_ ? 0 : bytes / std::max(1, p - 1);
        displs[i] = i * (bytes / std::max(1, p - 1));
      }
      MPI_Alltoallv(a.data(), counts.data(), displs.data(), MPI_BYTE, b.data(), counts.data(),
                    displs.data(), MPI_BYTE, XMPI_COMM_WORLD);
      break;
    default:
      break;
  }
}

// Least squares of the relative error of t ~ a x + b y with a, b > 0 (one
// common scale if that fails).
flexmpi::CollectiveFit fit_scales(std::vector<double> x, std::vector<double> y,
                                  std::vector<double> t) {
  for (std::size_t i = 0; i < t.size(); ++i) {  // divide each row by its measured time
    x[i] /= t[i];
    y[i] /= t[i];
    t[i] = 1.0;
  }
  double xx = 0, xy = 0, yy = 0, xt = 0, yt = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    xx += x[i] * x[i];
    xy += x[i] * y[i];
    yy += y[i] * y[i];
    xt += x[i] * t[i];
    yt += y[i] * t[i];
  }
  const double det = xx * yy - xy * xy;
  if (det > 1e-30 * xx * yy) {
    const double a = (xt * yy - yt * xy) / det, b = (yt * xx - xt * xy) / det;
    if (a > 0 && b > 0) return {a, b};
  }
  const double pp = xx + 2 * xy + yy;
  const double s = pp > 0 ? (xt + yt) / pp : 1.0;
  return {s, s};
}

void calibrate_network(flexmpi::MachineProfile& profile, bool quick, flexmpi::MpiLibrary library) {
  std::vector<int> sizes;
  for (int n = 8; n <= (quick ? (1 << 20) : (1 << 22)); n *= quick ? 16 : 4) sizes.push_back(n);
  const int reps = quick ? 20 : 200;
  progress("[network] ping-pong rank 0 <-> 1, %d sizes, 8 B .. %d B", int(sizes.size()),
           sizes.back());
  profile.intra_node = fit_link(sizes, ping_pong(1, sizes, reps));
  progress("[network]   intra-node alpha %.3g us, beta %.3g ns/B (%.2f GB/s)",
           1e6 * profile.intra_node.alpha, 1e9 * profile.intra_node.beta,
           profile.intra_node.beta > 0 ? 1e-9 / profile.intra_node.beta : 0.0);

  // Another host among the ranks? Then the link to it is the inter-node one.
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> names(static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, XMPI_COMM_WORLD);
  int remote = -1;
  for (int r = 1; r < size_ && remote < 0; ++r) {
    if (std::strcmp(&names[r * MPI_MAX_PROCESSOR_NAME], names.data()) != 0) remote = r;
  }
  if (remote > 0) {
    progress("[network] ping-pong rank 0 <-> %d (another host)", remote);
    profile.inter_node = fit_link(sizes, ping_pong(remote, sizes, reps));
    profile.inter_node_measured = true;
  } else {
    progress("[network]   one host: inter_node = intra_node (not measured)");
    profile.inter_node = profile.intra_node;
    profile.inter_node_measured = false;
  }
  profile.gamma = measure_gamma(quick);
  progress("[network]   gamma %.3g ns/B (MPI_Reduce_local, MPI_SUM of doubles)",
           1e9 * profile.gamma);

  // Per-collective fits of the linked library's model on this communicator.
  const std::vector<int> csizes =
      quick ? std::vector<int>{8, 65536} : std::vector<int>{8, 512, 4096, 32768, 262144, 1 << 21};
  const std::vector<Routine> routines = {
      Routine::bcast,     Routine::scatter,    Routine::gather,
      Routine::allgather, Routine::allgatherv, Routine::reduce,
      Routine::allreduce, Routine::alltoall,   Routine::alltoallv};
  std::vector<char> a(static_cast<std::size_t>(csizes.back()) * size_ + 64, 1);
  std::vector<char> b(a.size(), 0);
  std::vector<int> counts(size_), displs(size_);
  const flexmpi::Hockney h = profile.network(false);
  profile.collectives.clear();
  for (Routine routine : routines) {
    std::vector<double> x, y, t;
    for (int bytes : csizes) {
      const int r = quick ? 5 : (bytes >= 262144 ? 10 : 50);
      const double seconds =
          timed(XMPI_COMM_WORLD, r, [&] { run_collective(routine, bytes, a, b, counts, displs); });
      const flexmpi::CostTerms terms =
          flexmpi::collective_cost(library, routine, bytes, size_).terms;
      x.push_back(terms.latency * h.alpha);
      y.push_back(terms.bandwidth * h.beta + terms.reduction * h.gamma);
      t.push_back(seconds);
    }
    const flexmpi::CollectiveFit fit = fit_scales(x, y, t);
    profile.collectives[routine] = fit;
    progress("[network]   %-15s fit: latency x %.2f, bandwidth x %.2f",
             std::string(flexmpi::routine_name(routine)).c_str(), fit.latency_scale,
             fit.bandwidth_scale);
  }
}

// ---- spawn and remove (Open MPI) ------------------------------------------

struct SpawnStep {
  bool spawn;
  int processes;
};

std::vector<SpawnStep> spawn_script(bool quick) {
  std::vector<SpawnStep> steps;
  for (int r = 0; r < (quick ? 1 : 3); ++r) {
    for (int k : {1, 2}) {
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
    if (size_ < 2)
      fail("the network phase needs 2 processes or more: mpiexec -n 2 " + std::string(argv[0]) +
           " ...");
    calibrate_network(profile, options.quick, library);
    measured["network"] = true;
  }
  if (all || options.only == "spawn") {
    if (library != flexmpi::MpiLibrary::open_mpi) {
      progress("[spawn] skipped: process creation needs Open MPI (%s cannot spawn); defaults kept",
               std::string(flexmpi::library_name(library)).c_str());
    } else {
      std::vector<std::vector<double>> spawn(3), remove(3);
      run_spawn_script(options, 0, &spawn, &remove);
      profile.spawn.clear();
      profile.remove.clear();
      for (int k : {1, 2}) {
        profile.spawn.push_back({k, flexmpi::median(spawn[k])});
        profile.remove.push_back({k, flexmpi::median(remove[k])});
        progress("[spawn]   %d at once: spawn %.1f ms, remove %.2f ms per process", k,
                 1e3 * profile.spawn.back().seconds_per_process,
                 1e3 * profile.remove.back().seconds_per_process);
      }
      measured["spawn"] = true;
    }
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
      std::FILE* out = std::fopen(options.output.c_str(), "w");
      if (out == nullptr) fail("cannot write " + options.output);
      std::fprintf(out, "%s\n", document.dump(2).c_str());
      std::fclose(out);
    } catch (const std::exception& error) {
      fail(error.what());
    }
    progress("wrote %s in %.1f s", options.output.c_str(), MPI_Wtime() - started);
  }
  MPI_Finalize();
  return 0;
}
