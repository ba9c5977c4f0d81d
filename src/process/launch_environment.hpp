// What the processes of a spawn share with the processes they start, and the
// small MPI steps every side of a spawn, join or removal takes
// (process/process_manager.hpp): the settings they inherit, the program they
// run, the marker that tells them apart from a program's own MPI_Comm_spawn,
// the decomposition in the join message, and communicator chores.
#pragma once

#include <mpi.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/row_block.hpp"

namespace flexmpi::launch {

// Tag of MPI_Intercomm_create on the rank 0 + new processes communicator.
inline constexpr int kJoinTag = 4301;
// MPI_Info key of XMPI_Spawn that asks for one spawn for all processes (Alg. 2).
inline constexpr const char* kBatchKey = "flexmpi_batch";
// Set by a resource manager for the processes it starts: the port of the
// job they join (ResourceManager::launch).
inline constexpr const char* kJoinPortVariable = "FLEXMPI_JOIN_PORT";
// Set (MPI_Info "env" key) for the processes flexmpi's own MPI_Comm_spawn
// starts: a process whose parent is a program's own MPI_Comm_spawn is an
// ordinary MPI process and must not try to join flexmpi's parents. Not
// FLEXMPI_*: those are settings, and an unknown one is refused.
inline constexpr const char* kSpawnedMarker = "XMPI_SPAWNED_BY_FLEXMPI";

// The running processes' side of a spawn or launch: rank 0 merged with the
// new processes, the intercommunicator gone (Alg. 1 line 8).
MPI_Comm merge_with_children(MPI_Comm& inter);
std::string processor_name();
// Every FLEXMPI_* variable of this process: a spawned process gets the same
// settings as its parents even if they were changed after mpiexec started.
nlohmann::json flexmpi_environment();
// Replaces this process's FLEXMPI_* variables with `env` (flexmpi_environment's).
void apply_environment(const nlohmann::json& env);
std::string current_directory();
// The program MPI_Comm_spawn will start, as an absolute path. A missing
// program must be caught here: Open MPI aborts the whole job when it cannot
// start one.
std::string resolve_command(const std::string& command);
std::string self_executable();
// The value of `key` in `info` ("" when absent or info is MPI_INFO_NULL).
std::string info_value(MPI_Info info, const char* key);
// Adds the marker to the environment the "env" key gives the new process,
// after the caller's own variables, if any.
void mark_as_flexmpi_spawn(MPI_Info info);
nlohmann::json to_json(const Decomposition& blocks);
Decomposition from_json(const nlohmann::json& list);
void free_comm(MPI_Comm& comm);
// The new library communicator returns errors (flexmpi checks every code);
// the application's keeps the error handler it had.
void set_error_handlers(MPI_Comm library, MPI_Comm world, MPI_Comm old_world);

}  // namespace flexmpi::launch
