// flexrun's launch plan: which environment variables and which mpiexec
// command line run an application under flexmpi (docs/reference/tools.md). Pure
// functions of their inputs, so --dry-run shows exactly what a launch does.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "resources/resource_manager.hpp"

namespace flexrun {

/// The MPI implementation behind an mpiexec, detected from `mpiexec --version`.
enum class MpiFlavour { open_mpi, mpich, unknown };

struct MpiInfo {
  MpiFlavour flavour = MpiFlavour::unknown;
  std::string version;  ///< first line of `mpiexec --version`, for messages
  /// The MPI launcher `--version` named ("Open MPI", "MPICH", or a batch
  /// system's launcher a resource manager declares),
  /// or "" when it named none: then the command is no launcher flexrun knows
  /// (`/bin/true` answers "true (GNU coreutils)" and runs nothing).
  std::string launcher;
};

/// "Open MPI", "MPICH" or "unknown MPI".
const char* flavour_name(MpiFlavour flavour);

/// Classifies the output of `mpiexec --version`.
MpiInfo classify_mpi(const std::string& version_output);

/// Runs `mpiexec --version` and classifies it. Throws std::runtime_error if
/// mpiexec cannot be run or has not answered within 10 s (it is then killed,
/// with everything it started).
MpiInfo detect_mpi(const std::string& mpiexec);

/// The MPI a program or a library is linked with, as the dynamic loader
/// resolves it (`ldd`): libmpi.so.40 and libopen-pal are Open MPI's,
/// libmpich.so.12 and libmpi.so.12 (the MPICH ABI) MPICH's.
struct LinkedMpi {
  MpiFlavour flavour = MpiFlavour::unknown;  ///< unknown: no MPI, both, or not visible
  std::string library;                       ///< the MPI library seen, for messages
};

/// Classifies the output of `ldd FILE`.
LinkedMpi classify_linked_mpi(const std::string& ldd_output);

/// Runs `ldd path` and classifies it. What the loader will load is not
/// visible for a script (mpi4py: the interpreter loads MPI later) or a
/// static program: then the flavour is unknown.
LinkedMpi linked_mpi(const std::string& path);

/// The file `mpiexec` would run for `program`: itself if it names a
/// directory, else the first executable of that name on PATH; "" if none.
std::string find_program(const std::string& program);

/// An environment as an ordered list of NAME=value pairs.
using Environment = std::vector<std::pair<std::string, std::string>>;

/// The process environment (environ), in order.
Environment current_environment();

/// Value of `name` in `env`, or nullptr.
const std::string* find_variable(const Environment& env, const std::string& name);

/// Sets `name` to `value` (replacing it if present, appending otherwise).
void set_variable(Environment& env, const std::string& name, const std::string& value);

/// What the user asked for.
struct LaunchRequest {
  std::string mpiexec;                    ///< launcher to run
  std::optional<int> nprocs;              ///< -n N (none: let mpiexec decide)
  std::vector<std::string> mpiexec_args;  ///< extra launcher arguments, before -n
  Environment settings;                   ///< FLEXMPI_* variables from flexrun options
  std::vector<std::string> program;       ///< application and its arguments, untouched
  std::string preload;     ///< libflexmpi to preload into the processes (profile-only mode), or ""
  bool fast_spawn = true;  ///< Open MPI: the transport settings that make XMPI_Spawn fast
};

/// What will run.
struct LaunchPlan {
  Environment environment;             ///< full environment of mpiexec
  Environment added;                   ///< variables flexrun set or changed, in order
  std::vector<std::string> forwarded;  ///< FLEXMPI_* variables the processes receive
  std::vector<std::string> argv;       ///< mpiexec command line
  std::vector<std::string> notes;      ///< why some variables were added (for --dry-run)
};

/// Machine facts the plan depends on.
struct Host {
  unsigned cores = 1;  ///< std::thread::hardware_concurrency()
  bool root = false;   ///< running as uid 0
};

/// Whether the environment's FLEXMPI_POLICY spawns and removes processes (its
/// descriptor's capability); false for an unknown name, which the settings
/// check refuses.
bool policy_changes_processes(const Environment& env);

/// What each resource-manager backend adds to the launch of `request` by
/// `mpi` in `inherited` (flexmpi::advise_launch: a batch system's, inside its
/// allocation). Asks the backends, which may run commands (scontrol).
std::vector<flexmpi::LaunchAdvice> resource_advice(const LaunchRequest& request, const MpiInfo& mpi,
                                                   const Environment& inherited);

/**
 * Builds the launch: `inherited` overridden by the request's settings; for
 * Open MPI every FLEXMPI_* variable is also passed with `-x` so that remote
 * hosts get it; oversubscription and idle yielding when -n exceeds the cores
 * (and oversubscription for malleability policies, which spawn processes);
 * root permission for Open MPI when running as root; with Open MPI and
 * `fast_spawn`, pml ob1 and PMIx gds hash. Variables the user
 * already set are never overridden, except FLEXMPI_* ones given as options.
 * A preload is passed to the application processes only (not to mpiexec),
 * with -x LD_PRELOAD=... (Open MPI) or -genv LD_PRELOAD ... (MPICH, unknown).
 * The resource managers' `advice` (resource_advice) adds its defaults, the
 * variables Open MPI exports, launcher arguments and, without -n, the
 * process count.
 */
LaunchPlan plan_launch(const LaunchRequest& request, const MpiInfo& mpi,
                       const Environment& inherited, const Host& host,
                       const std::vector<flexmpi::LaunchAdvice>& advice = {});

}  // namespace flexrun
