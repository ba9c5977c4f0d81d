// flexmpi-calibrate's spawn phase (main.cpp): what XMPI_Spawn and XMPI_Remove
// cost per process, which the reconfiguration cost of the model prices
// (thesis 6.3.1), measured as bench/spawn_cost does.
//
// The phase grows the job beyond what mpiexec started, on purpose: by at most
// largest_spawn() processes, whatever the cores. Two bounds would stop it on
// a machine with as many cores as processes (`mpiexec -n 2` on 2 cores):
// flexmpi's (the job's slots, resources/process_bound.hpp), which the tool
// raises by FLEXMPI_MAX_PROCS unless the user set it, and Open MPI's slot
// check, which its spawn info key map_by=:OVERSUBSCRIBE lifts for these
// processes alone.
#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "calibrate.hpp"
#include "core/settings.hpp"
#include "flexmpi.h"
#include "util/statistics.hpp"

namespace flexmpi_calibrate {

namespace {

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

// The most processes the script adds to the job at once.
int largest_spawn(bool quick) { return spawn_counts(quick).back(); }

// Open MPI places the spawned processes beyond the job's slots.
MPI_Info oversubscribing_info() {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "map_by", ":OVERSUBSCRIBE");
  return info;
}

// Runs the script from `first` (a removed process leaves it at its removal).
void run_spawn_script(const Options& options, int first, std::vector<std::vector<double>>* spawn,
                      std::vector<std::vector<double>>* remove) {
  const std::vector<SpawnStep> steps = spawn_script(options.quick);
  MPI_Info info = oversubscribing_info();
  for (std::size_t s = static_cast<std::size_t>(first); s < steps.size(); ++s) {
    const SpawnStep& step = steps[s];
    std::vector<std::string> args = {"--spawn-step", std::to_string(s + 1), "--output",
                                     options.output};
    if (options.quick) args.push_back("--quick");
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    MPI_Barrier(XMPI_COMM_WORLD);
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    progress("[spawn] %s %d process%s (step %zu of %zu)", step.spawn ? "spawn" : "remove",
             step.processes, step.processes == 1 ? "" : "es", s + 1, steps.size());
    const double start = MPI_Wtime();
    const int code = step.spawn ? XMPI_Spawn(nullptr, argv.data(), step.processes, info, nullptr)
                                : XMPI_Remove(step.processes, nullptr);
    const double seconds = (MPI_Wtime() - start) / step.processes;
    check(code, step.spawn ? "XMPI_Spawn" : "XMPI_Remove");
    if (XMPI_Get_process_status() == XMPI_REMOVED) {
      MPI_Info_free(&info);
      return;
    }
    if (spawn != nullptr) (step.spawn ? *spawn : *remove)[step.processes].push_back(seconds);
  }
  MPI_Info_free(&info);
  MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
  MPI_Comm_size(XMPI_COMM_WORLD, &size);
}

}  // namespace

void make_room_for_spawns(const Options& options) {
  // OMPI_COMM_WORLD_SIZE: the processes Open MPI's mpiexec starts, known
  // before MPI_Init. Other launchers' MPIs do not spawn here (calibrate_spawn).
  const char* started = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!measures(options, "spawn") || options.spawn_step >= 0 || started == nullptr ||
      std::getenv("FLEXMPI_MAX_PROCS") != nullptr) {
    return;
  }
  const int room = std::atoi(started) + largest_spawn(options.quick);
  setenv("FLEXMPI_MAX_PROCS", std::to_string(room).c_str(), 0);
}

std::string spawn_room_problem(const Options& options, flexmpi::MpiLibrary library) {
  if (!measures(options, "spawn") || library != flexmpi::MpiLibrary::open_mpi) return {};
  const flexmpi::Config config = flexmpi::load_config_from_environment();
  const int needed = size + largest_spawn(options.quick);
  const std::string remedy = "run it with FLEXMPI_MAX_PROCS=" + std::to_string(needed) +
                             ", or without the spawn phase (--only=network, --only=redistribution)";
  if (config.max_procs > 0 && config.max_procs < needed) {
    return "the spawn phase grows the job to " + std::to_string(needed) +
           " processes, over FLEXMPI_MAX_PROCS=" + std::to_string(config.max_procs) + ": " + remedy;
  }
  if (config.max_procs == 0 && config.hosts.empty()) {  // not started by Open MPI's mpiexec
    return "the spawn phase grows the job to " + std::to_string(needed) +
           " processes, over the job's bound (the slots it was started with): " + remedy;
  }
  return {};
}

void follow_spawn_script(const Options& options) {
  run_spawn_script(options, options.spawn_step, nullptr, nullptr);
}

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

}  // namespace flexmpi_calibrate
