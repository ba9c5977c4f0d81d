// What the phases of flexmpi-calibrate share (main.cpp says what each
// measures): the options, this process's place in XMPI_COMM_WORLD, progress
// and failure reporting.
#pragma once

#include <string>

#include "model/comm_model.hpp"
#include "model/machine_profile.hpp"

namespace flexmpi_calibrate {

struct Options {
  bool quick = false;
  std::string only;
  std::string output;
  std::string link_from;  // reuse the links and gamma of this profile (fits only)
  int spawn_step = -1;    // >= 0: a spawned process joining the spawn script there
};

/// This process's rank and the process count of XMPI_COMM_WORLD (the spawn
/// phase changes both).
inline int rank = 0;
inline int size = 1;

/// A line "flexmpi-calibrate: ..." on standard error, from rank 0 only.
void progress(const char* format, ...) __attribute__((format(printf, 1, 2)));

/// Says `what` and aborts the job (a measurement that cannot go on).
[[noreturn]] void fail(const std::string& what);

/// fail() naming the call `what` unless `code` is XMPI_SUCCESS.
void check(int code, const char* what);

/// Whether the run measures `phase` ("network", "spawn", "redistribution").
bool measures(const Options& options, const std::string& phase);

// ---- the phases ---------------------------------------------------------------

/// Links, gamma and per-collective fits (network.cpp).
void calibrate_network(flexmpi::MachineProfile& profile, const Options& options,
                       flexmpi::MpiLibrary library);

/// Before MPI_Init: lets the spawn phase grow the job (spawn.cpp).
void make_room_for_spawns(const Options& options);

/// After MPI_Init, before anything is measured: "" if the spawn phase can
/// add its processes, else why not and what to pass (spawn.cpp).
std::string spawn_room_problem(const Options& options, flexmpi::MpiLibrary library);

/// Spawn and remove cost; false when skipped (spawn.cpp).
bool calibrate_spawn(flexmpi::MachineProfile& profile, const Options& options,
                     flexmpi::MpiLibrary library);

/// A spawned process: follows the spawn script from `options.spawn_step`
/// until it is removed (spawn.cpp).
void follow_spawn_script(const Options& options);

/// Latency and seconds per byte of XMPI_Redistribute_data (redistribution.cpp).
void calibrate_redistribution(flexmpi::MachineProfile& profile, bool quick);

}  // namespace flexmpi_calibrate
