// flexmpi/flexmpi.hpp - the C++ API of flexmpi (namespace flexmpi).
//
// The C API of flexmpi.h is written on these functions. They report failures
// as flexmpi::Error (see error.hpp) carrying the XMPI_ERR_* code.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "flexmpi/error.hpp"

// The application's communicator, rebuilt by flexmpi after every spawn or
// removal (the same declaration as in flexmpi.h, so either header, or both,
// may be included).
extern "C" {
extern MPI_Comm XMPI_COMM_WORLD;
}

namespace flexmpi {

/// XMPI_COMM_WORLD: use it wherever the program used MPI_COMM_WORLD, and read
/// it again after a reconfiguration.
inline MPI_Comm world() { return XMPI_COMM_WORLD; }

/// count rows starting at global row displ.
struct Partition {
  int count = 0;
  int displ = 0;
};

/// The block partition of dsize rows over nprocs processes: the first
/// dsize % nprocs ranks get one row more. Throws Error(invalid_argument).
Partition block_partition(int rank, int nprocs, int dsize);

/// The partition `rank` owns now (the block partition until the balancer
/// moves data). For the calling process it also sets its work to count rows.
Partition get_wsize(int rank, int nprocs, int dsize);

/// Every rank's partition (get_wsize for ranks 0 .. nprocs-1, including its
/// setting of the caller's work), without communication.
std::vector<Partition> get_decomposition(int nprocs, int dsize);

/// Declares the work units of this process's partition (work metric).
void set_work(double work_units);

/// Opens a monitored iteration; `events` are names whose counts monitor_end returns.
void monitor_begin(std::span<const std::string> events = {});
/// Closes it and returns one count per event of monitor_begin.
std::vector<long long> monitor_end();
/// High-level form: closes the open iteration, if any, and opens the next one.
void monitor_si_init();

/// Data distribution scheme of a registered structure (thesis 4.5.1);
/// distributed_in_place is XMPI_DISTRIBUTED_IN_PLACE (flexmpi.h).
enum class Scheme { distributed = 0, replicated = 1, distributed_in_place = 2 };

/// Registers structures that follow the decomposition (see flexmpi.h):
/// `data` is the address of a malloc'ed pointer flexmpi may reallocate, and
/// `size` the decomposition's global size (another is Error(invalid_argument)).
void register_vector(void** data, std::int64_t size, MPI_Datatype type, Scheme scheme);
void register_dense(void** data, std::int64_t size, MPI_Datatype type, Scheme scheme);
void register_sparse(int** ia, int** ja, void** values, std::int64_t size, std::int64_t nnz,
                     MPI_Datatype type, Scheme scheme);
/// The rows of a registration of any width (XMPI_Register_rows): `rows`
/// global rows (the decomposition's size) of `row_length` elements, and
/// `ghost_rows` ghost rows before and after a distributed block in the same
/// buffer, whose pointer points at the first ghost row.
struct RowShape {
  std::int64_t rows = 0;
  std::int64_t row_length = 1;
  std::int64_t ghost_rows = 0;
};
/// XMPI_Register_rows and XMPI_Register_pair (flexmpi.h).
void register_rows(void** data, const RowShape& shape, MPI_Datatype type, Scheme scheme);
void register_pair(void** current, void** next, const RowShape& shape, MPI_Datatype type,
                   Scheme scheme);
/// XMPI_Unregister: stops following the structure registered at `address`
/// (for a sparse matrix, its ia address); its buffers stay the caller's.
void unregister(const void* address);
/// Moves every registered structure from this process's old block to its new one.
void redistribute_data(Partition old_block, Partition new_block);
/// XMPI_Get_blocks_changed: whether the last call that may change the blocks
/// (eval_lbalance, eval_reconfig, redistribute_data, spawn_processes,
/// remove_processes, remove_ranks, send_data, get_data, reconfigure)
/// changed any process's block.
bool blocks_changed();
/// XMPI_Halo_exchange, XMPI_Halo_start, XMPI_Halo_finish (flexmpi.h): the
/// ghost rows of the structure registered at `address`.
void halo_exchange(const void* address);
void halo_start(const void* address);
void halo_finish(const void* address);

/// Load balancing at the end of a sampling interval (thesis Alg. 5); returns
/// this process's block, unchanged unless the data were redistributed. Never
/// spawns or removes processes, whatever FLEXMPI_POLICY says (see flexmpi.h).
Partition eval_lbalance(int rank, int nprocs, int iteration, int max_iterations, Partition current,
                        std::span<const double> weight = {});

/// XMPI_Eval_reconfig (thesis Fig. 5.9): eval_lbalance for the policy of
/// FLEXMPI_POLICY, which may also spawn (as `options` says) or remove
/// processes; returns this process's block ({0, 0} if it was removed).
struct ReconfigureOptions;
Partition eval_reconfig(int rank, int nprocs, int iteration, int max_iterations, Partition current,
                        std::span<const double> weight, const ReconfigureOptions& options);

/// What monitoring measured on the calling process since start-up.
struct MonitorTotals {
  long long iterations = 0;
  double wall = 0.0;         ///< seconds in monitored regions
  double cpu = 0.0;          ///< CPU seconds the process got in them
  double mpi = 0.0;          ///< seconds inside MPI calls in them
  double computation = 0.0;  ///< wall - mpi
};
MonitorTotals monitor_totals();

enum class ProcessStatus { running = 0, newly_spawned = 1, removed = 2 };
ProcessStatus process_status();

/// Whether this MPI library can spawn processes (Open MPI: yes; Debian's MPICH 4.0: no).
bool spawn_supported();

/// Options of spawn_processes() beyond XMPI_Spawn's arguments.
struct SpawnOptions {
  MPI_Info info = MPI_INFO_NULL;  ///< keys for MPI_Comm_spawn (copied); the scheduler sets "host"
  bool batch = false;             ///< one MPI_Comm_spawn for all processes (thesis Alg. 2)
};

/// XMPI_Spawn (see flexmpi.h). command empty: this program; command and argv
/// both empty: this program with its own arguments (the usual case: the new
/// processes must run the same collectives as the others).
void spawn_processes(const std::string& command, std::span<const std::string> argv, int nprocs,
                     std::span<const std::string> node_classes = {},
                     const SpawnOptions& options = {});
/// XMPI_Remove (see flexmpi.h).
void remove_processes(int nprocs, std::span<const std::string> node_classes = {});
/// Removes the processes of these ranks of XMPI_COMM_WORLD (spawned ones only;
/// a rank of the initial set is an Error(invalid_argument) and changes nothing).
void remove_ranks(std::span<const int> ranks);
/// XMPI_Get_data: returns the iteration.
int get_data();
/// XMPI_Send_data: returns this process's new block.
Partition send_data(int iteration);

/// How reconfigure() starts new processes.
struct ReconfigureOptions {
  std::string command;            ///< empty: this program
  std::vector<std::string> argv;  ///< arguments; with command also empty: this program's own
  SpawnOptions spawn;
};

/// Moves the application to a new set of processing elements: `processes`
/// per node class of the hostfile, or {{"", n}} for n processes wherever the
/// scheduler puts them. Removes the surplus spawned processes (their rows go
/// to the others), spawns the missing ones, then rebalances every row in
/// proportion to the last measured speeds (new processes as fast as their
/// node class) and moves the data; the new processes call get_data().
/// Collective. Returns this process's block ({0, 0} if it was removed).
/// Each of the two steps is atomic; if the spawn fails after a removal, the
/// application continues, smaller, with its data.
Partition reconfigure(const std::map<std::string, int>& processes, int iteration,
                      const ReconfigureOptions& options = {});

/// Exit status of a job that a signal stopped after a checkpoint (XMPI_CHECKPOINTED_EXIT_STATUS).
inline constexpr int checkpointed_exit_status = 75;

/// XMPI_Resume: the iteration the loop starts from (the checkpoint's on a
/// restart, after filling the registered data; get_data() in a spawned
/// process; else 0). Collective, once, after registering.
int resume();
/// XMPI_Checkpoint: writes a checkpoint now, resumed at next_iteration. Collective.
void write_checkpoint(int next_iteration);
/// XMPI_Register_record: `count` elements of `type` at `buffer`, saved with
/// every checkpoint (rank 0's copy) and restored on every process by resume().
void register_record(const std::string& name, void* buffer, std::int64_t count, MPI_Datatype type);

/// RAII monitoring of one iteration: begins on construction, ends on finish()
/// or, if finish() was not called, on destruction (errors then only logged).
class IterationScope {
 public:
  explicit IterationScope(std::span<const std::string> events = {});
  IterationScope(const IterationScope&) = delete;
  IterationScope& operator=(const IterationScope&) = delete;
  ~IterationScope();
  /// Ends the iteration and returns the counts of the requested events.
  std::vector<long long> finish();

 private:
  bool finished_ = false;
};

}  // namespace flexmpi
