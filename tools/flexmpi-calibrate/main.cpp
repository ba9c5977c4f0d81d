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
//                   and follow the script until they are removed. The job
//                   grows beyond its slots for them (spawn.cpp says how).
//   redistribution  XMPI_Redistribute_data of a registered vector of doubles,
//                   moving k rows for several k: latency and seconds per byte of
//                   the busiest process (sent + received), least squares.
// --link-from FILE keeps FILE's links and gamma and measures only the fits:
// calibrate the links on 2 processes, then the fits on more (bench/comm_model/run.sh).
// Phases left out by --only keep the documented defaults (MachineProfile::defaults)
// and "measured" in the output says which were measured.
//
// The phases live in network.cpp, spawn.cpp and redistribution.cpp; this file
// checks what can be checked before measuring (processes, --output, room to
// spawn), runs the phases and writes the profile.
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate.hpp"
#include "core/settings.hpp"
#include "flexmpi.h"
#include "util/output_file.hpp"

namespace flexmpi_calibrate {

void progress(const char* format, ...) {
  if (rank != 0) return;
  va_list args;
  va_start(args, format);
  std::fprintf(stderr, "flexmpi-calibrate: ");
  std::vfprintf(stderr, format, args);
  std::fprintf(stderr, "\n");
  va_end(args);
}

void fail(const std::string& what) {
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

bool measures(const Options& options, const std::string& phase) {
  return options.only.empty() || options.only == phase;
}

}  // namespace flexmpi_calibrate

namespace {

using namespace flexmpi_calibrate;

// The network phase measures between two ranks and the redistribution phase
// moves rows between them; the spawn phase alone runs on one process.
int minimum_processes(const Options& options) { return options.only == "spawn" ? 1 : 2; }

// --output is checked before anything is measured: a path that cannot be
// written, or that is the file of an input (--link-from, a FLEXMPI_* file) or
// of another output, would otherwise be found after minutes of measuring.
void check_output(const Options& options) {
  const flexmpi::Config config = flexmpi::load_config_from_environment();
  std::vector<flexmpi::FileSetting> inputs = flexmpi::input_files(config);
  if (!options.link_from.empty()) inputs.push_back({"--link-from", options.link_from});
  std::vector<flexmpi::OutputSetting> outputs = flexmpi::output_files(config);
  outputs.push_back({"--output", options.output});
  flexmpi::check_outputs(inputs, outputs, flexmpi::Errc::io_failure);
}

// Whether every phase can run to the end, as far as can be known before
// measuring: --output can be written and the spawn phase has room to grow.
// Rank 0 says what stands in the way; every rank gets the answer.
bool ready_to_measure(const Options& options, flexmpi::MpiLibrary library) {
  int ready = 1;
  if (rank == 0) {
    try {
      check_output(options);
      if (const std::string problem = spawn_room_problem(options, library); !problem.empty()) {
        throw std::runtime_error(problem);
      }
    } catch (const std::exception& error) {
      std::fprintf(stderr, "flexmpi-calibrate: %s\n", error.what());
      ready = 0;
    }
  }
  MPI_Bcast(&ready, 1, MPI_INT, 0, XMPI_COMM_WORLD);
  return ready == 1;
}

std::string library_version() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string text(version, static_cast<std::size_t>(length));
  return text.substr(0, text.find_first_of(std::string("\n\0", 2)));
}

// The options; the exit status if the command line was all (--help, an error).
std::optional<int> parse_options(int argc, char** argv, Options& options) {
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
  return std::nullopt;
}

// The phases the options ask for, into `profile`; which were measured.
nlohmann::json measure(flexmpi::MachineProfile& profile, const Options& options,
                       flexmpi::MpiLibrary library) {
  nlohmann::json measured = {{"network", false}, {"spawn", false}, {"redistribution", false}};
  if (measures(options, "network")) {
    try {
      calibrate_network(profile, options, library);
    } catch (const std::exception& error) {
      fail(error.what());
    }
    measured["network"] = true;
  }
  if (measures(options, "spawn")) measured["spawn"] = calibrate_spawn(profile, options, library);
  if (measures(options, "redistribution")) {
    calibrate_redistribution(profile, options.quick);
    measured["redistribution"] = true;
  }
  return measured;
}

// Rank 0: the profile with what describes the run, checked as the loader
// will read it, to --output.
void write_profile(const flexmpi::MachineProfile& profile, const Options& options,
                   const nlohmann::json& measured, double started) {
  nlohmann::json document = profile.to_json();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char date[32] = {};
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  document["host"] = host;
  document["created"] = date;
  document["processes"] = size;
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

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (const std::optional<int> done = parse_options(argc, argv, options)) return *done;
  make_room_for_spawns(options);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
  if (options.spawn_step >= 0) {  // a spawned process: follow the script until removed
    follow_spawn_script(options);
    MPI_Finalize();
    return 0;
  }
  const std::string version = library_version();
  const flexmpi::MpiLibrary library = flexmpi::detect_mpi_library(version);
  const int needed = minimum_processes(options);
  if (size < needed) {  // a usage error, not a failure: every rank ends cleanly
    if (rank == 0) {
      std::fprintf(stderr,
                   "flexmpi-calibrate: needs at least %d processes, started on %d: run it as "
                   "mpiexec -n %d %s --output FILE\n",
                   needed, size, needed, argv[0]);
    }
    MPI_Finalize();
    return 2;
  }
  if (!ready_to_measure(options, library)) {
    MPI_Finalize();
    return 2;
  }
  const double started = MPI_Wtime();
  progress("%s on %d processes%s; %s", std::string(flexmpi::library_name(library)).c_str(), size,
           options.quick ? " (--quick)" : "", version.c_str());
  flexmpi::MachineProfile profile = flexmpi::MachineProfile::defaults();
  profile.library = version;
  const nlohmann::json measured = measure(profile, options, library);
  if (rank == 0) write_profile(profile, options, measured, started);
  MPI_Finalize();
  return 0;
}
