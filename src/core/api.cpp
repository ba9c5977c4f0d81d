// The C++ API (include/flexmpi/flexmpi.hpp) over the runtime.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "checkpoint/checkpointer.hpp"
#include "core/runtime.hpp"
#include "flexmpi/flexmpi.hpp"
#include "process/process_manager.hpp"
#include "profiling/comm_profile.hpp"
#include "util/collective_watchdog.hpp"

namespace flexmpi {

Partition block_partition(int rank, int nprocs, int dsize) {
  if (nprocs < 1) {
    throw Error(Errc::invalid_argument, "nprocs=" + std::to_string(nprocs) + ": expected >= 1");
  }
  if (rank < 0 || rank >= nprocs) {
    throw Error(Errc::invalid_argument, "rank=" + std::to_string(rank) +
                                            ": expected 0 <= rank < nprocs (" +
                                            std::to_string(nprocs) + ")");
  }
  if (dsize < 0) {
    throw Error(Errc::invalid_argument, "dsize=" + std::to_string(dsize) + ": expected >= 0");
  }
  const int base = dsize / nprocs;
  const int extra = dsize % nprocs;
  return {base + (rank < extra ? 1 : 0), rank * base + std::min(rank, extra)};
}

namespace {

// The runtime, for a call that a removed process may not make: it is no
// longer part of the application and may only ask its status, its totals and
// whether its blocks changed (ProcessManager::require_not_removed).
Runtime& member_runtime() {
  Runtime& runtime = Runtime::get();
  runtime.processes().require_not_removed();
  return runtime;
}

Partition to_partition(const RowBlock& block) {
  return {static_cast<int>(block.count), static_cast<int>(block.displ)};
}

// rank and nprocs as the high-level API passes them must be this process's.
void require_own(const Runtime& runtime, int rank, int nprocs) {
  if (rank != runtime.rank()) {
    throw Error(Errc::invalid_argument, "rank=" + std::to_string(rank) +
                                            ": expected the calling process's rank " +
                                            std::to_string(runtime.rank()));
  }
  if (nprocs != runtime.size()) {
    throw Error(Errc::invalid_argument, "nprocs=" + std::to_string(nprocs) +
                                            ": expected the number of processes " +
                                            std::to_string(runtime.size()));
  }
}

// Registered structures follow the application's decomposition: a size of
// another (a process's count for the global size, say) failed only at the
// first rebalance, far from the call that was wrong.
void require_decomposition_size(const Runtime& runtime, std::int64_t size) {
  if (size < 0)
    throw Error(Errc::invalid_argument, "size=" + std::to_string(size) + ": expected >= 0");
  // Blocks are reported in int (Partition, XMPI_Get_wsize's count and displ).
  constexpr std::int64_t largest = std::numeric_limits<int>::max();
  if (size > largest) {
    throw Error(Errc::invalid_argument,
                "size " + std::to_string(size) + " exceeds the largest supported, " +
                    std::to_string(largest) + " (rows are counted in int: count and displ)");
  }
  std::int64_t rows = runtime.state().global_rows();
  std::string source = "XMPI_Get_wsize dsize";
  if (rows < 0) {
    rows = runtime.state().data().rows();
    source = "the structures registered before";
  }
  if (rows >= 0 && size != rows) {
    throw Error(Errc::invalid_argument, "size=" + std::to_string(size) +
                                            ": the decomposition has " + std::to_string(rows) +
                                            " rows (" + source + "); pass the global size");
  }
}

// Rows may not move under a started halo exchange: its messages read and write them.
DecompositionState& state_without_started_halo() {
  DecompositionState& state = Runtime::get().state();
  if (state.halos().any_started()) {
    throw Error(Errc::bad_state,
                "a halo exchange is started: finish it (XMPI_Halo_finish) before a call that may "
                "move rows");
  }
  return state;
}

// Around a call that may change the blocks: records whether it changed any
// (blocks_changed), whether it returns or throws.
class BlockChangeWatch {
 public:
  BlockChangeWatch() : state_(state_without_started_halo()), before_(state_.blocks()) {}
  BlockChangeWatch(const BlockChangeWatch&) = delete;
  BlockChangeWatch& operator=(const BlockChangeWatch&) = delete;
  ~BlockChangeWatch() { state_.set_blocks_changed(state_.blocks() != before_); }

 private:
  DecompositionState& state_;
  const Decomposition before_;
};

// This process's block of the application's decomposition is `rows` rows:
// its work units (the metric without counters), except under
// the weight model once weights were seen, whose work is its rows' weights
// (as rows, a process of heavy rows looked up to 9 times slower).
void note_own_rows(Runtime& runtime, std::int64_t rows) {
  DecompositionState& state = runtime.state();
  if (state.model() == WorkloadModel::weight && !state.latest_row_work().empty()) {
    state.update_work();
  } else {
    runtime.set_work(static_cast<double>(rows));
  }
}

}  // namespace

Partition get_wsize(int rank, int nprocs, int dsize) {
  Runtime& runtime = member_runtime();
  block_partition(rank, nprocs, dsize);  // validates the arguments
  const Partition partition = to_partition(runtime.state().block_of(rank, nprocs, dsize));
  if (rank == runtime.rank() && nprocs == runtime.size()) note_own_rows(runtime, partition.count);
  return partition;
}

std::vector<Partition> get_decomposition(int nprocs, int dsize) {
  Runtime& runtime = member_runtime();
  std::vector<Partition> blocks;
  blocks.reserve(nprocs > 0 ? static_cast<std::size_t>(nprocs) : 0);
  for (int rank = 0; rank < std::max(nprocs, 1); ++rank) {
    block_partition(rank, nprocs, dsize);  // validates the arguments
    blocks.push_back(to_partition(runtime.state().block_of(rank, nprocs, dsize)));
  }
  if (nprocs == runtime.size())
    note_own_rows(runtime, blocks[static_cast<std::size_t>(runtime.rank())].count);
  return blocks;
}

namespace {

// A process that holds rows of a structure needs a buffer for them: all of
// them when replicated, else its block (all, as far as it knows, before it
// has one). Accepting NULL would turn the first redistribution into a crash.
void require_buffer(const Runtime& runtime, void** data, std::int64_t size, Scheme scheme,
                    const char* call) {
  if (data == nullptr || *data != nullptr) return;  // a null address is the registry's error
  const auto& blocks = runtime.state().blocks();
  const std::int64_t held = scheme == Scheme::replicated || blocks.empty()
                                ? size
                                : blocks[static_cast<std::size_t>(runtime.rank())].count;
  if (held > 0) {
    throw Error(Errc::invalid_argument,
                std::string(call) + ": the buffer is NULL but this process holds " +
                    std::to_string(held) + " rows: expected a malloc'ed buffer");
  }
}

}  // namespace

void register_vector(void** data, std::int64_t size, MPI_Datatype type, Scheme scheme) {
  Runtime& runtime = member_runtime();
  require_decomposition_size(runtime, size);
  require_buffer(runtime, data, size, scheme, "register_vector");
  runtime.state().data().register_vector(data, size, type, scheme);
  runtime.state().update_work();  // the nnz model counts the registered nonzeros
}

void register_dense(void** data, std::int64_t size, MPI_Datatype type, Scheme scheme) {
  Runtime& runtime = member_runtime();
  require_decomposition_size(runtime, size);
  require_buffer(runtime, data, size, scheme, "register_dense");
  runtime.state().data().register_dense(data, size, type, scheme);
  runtime.state().update_work();  // the nnz model counts the registered nonzeros
}

void register_rows(void** data, const RowShape& shape, MPI_Datatype type, Scheme scheme) {
  Runtime& runtime = member_runtime();
  require_decomposition_size(runtime, shape.rows);
  require_buffer(runtime, data, shape.rows, scheme, "register_rows");
  runtime.state().data().register_rows(data, shape, type, scheme);
  runtime.state().update_work();  // the nnz model counts the registered nonzeros
}

void register_pair(void** current, void** next, const RowShape& shape, MPI_Datatype type,
                   Scheme scheme) {
  Runtime& runtime = member_runtime();
  require_decomposition_size(runtime, shape.rows);
  require_buffer(runtime, current, shape.rows, scheme, "register_pair (current)");
  require_buffer(runtime, next, shape.rows, scheme, "register_pair (next)");
  runtime.state().data().register_pair(current, next, shape, type, scheme);
  runtime.state().update_work();  // the nnz model counts the registered nonzeros
}

void register_sparse(int** ia, int** ja, void** values, std::int64_t size, std::int64_t nnz,
                     MPI_Datatype type, Scheme scheme) {
  Runtime& runtime = member_runtime();
  require_decomposition_size(runtime, size);
  // The row pointers have an entry per row held (+1): NULL is only for none.
  require_buffer(runtime, reinterpret_cast<void**>(ia), size, scheme, "register_sparse (ia)");
  runtime.state().data().register_sparse(ia, ja, values, size, nnz, type, scheme);
  runtime.state().update_work();  // the nnz model counts the registered nonzeros
}

void unregister(const void* address) {
  Runtime& runtime = member_runtime();
  if (runtime.state().records().remove(address)) return;
  runtime.state().data().unregister(address);
  runtime.state().update_work();  // the nnz model counts the registered nonzeros
}

void redistribute_data(Partition old_block, Partition new_block) {
  const BlockChangeWatch watch;
  member_runtime().redistribute({old_block.count, old_block.displ},
                                {new_block.count, new_block.displ});
}

bool blocks_changed() { return Runtime::get().state().blocks_changed(); }

namespace {

// The registered vector or dense structure one of whose buffer addresses
// (either of a pair) is `address`, if it has ghost rows.
const detail::Structure& structure_with_ghost_rows(const DataRegistry& data, const void* address,
                                                   const char* call) {
  const auto structures = data.structures();
  const auto found = std::find_if(structures.begin(), structures.end(), [&](const auto& s) {
    return !s.sparse() && (s.data == address || s.partner == address);
  });
  if (found == structures.end()) {
    throw Error(Errc::invalid_argument,
                std::string(call) +
                    ": this address is not registered (expected the address of the pointer "
                    "given to XMPI_Register_rows or XMPI_Register_pair)");
  }
  if (found->ghost_rows == 0) {
    throw Error(Errc::invalid_argument,
                std::string(call) +
                    ": the structure has no ghost rows: register it with ghost_rows > 0 "
                    "(XMPI_Register_rows)");
  }
  return *found;
}

// The halo exchange of the structure registered at `address`, rebuilt if the
// blocks or the process set changed since its last use.
HaloExchange& prepared_halo(Runtime& runtime, const void* address, const char* call) {
  DecompositionState& state = runtime.state();
  const detail::Structure& structure = structure_with_ghost_rows(state.data(), address, call);
  if (state.blocks().empty()) {
    throw Error(Errc::bad_state, std::string(call) +
                                     ": there is no decomposition yet (XMPI_Get_wsize or "
                                     "XMPI_Get_decomposition make one)");
  }
  const HaloExchanges::Layout layout{structure.ghost_rows, structure.row_bytes(),
                                     runtime.library_comm(), runtime.rank(),
                                     runtime.context().generation()};
  return state.halos().prepare(address, state.blocks(), layout);
}

// The halo messages are the application's communication: the monitor and the
// profile count them as they would a hand-written exchange's (MPI time, not
// computation, so that a process waiting for a slower neighbour does not look
// slow itself; the plan's bytes). A blocking exchange is one MPI_Sendrecv row,
// a started one an MPI_Isend row and its finish an MPI_Waitall row.
template <class Body>
void as_mpi_call(Runtime& runtime, MpiOp op, const HaloExchange& exchange, Body&& body) {
  runtime.before_mpi_call();
  CommProfile& profile = runtime.comm_profile();
  const std::uint64_t start = profile.call_starts();
  const auto bytes = [&](const CommShape&) {
    CommProfile::Bytes moved;
    if (op == MpiOp::Waitall) return moved;
    const HaloPlan& plan = exchange.plan();
    for (const HaloMessage& m : plan.sends)
      moved.sent += static_cast<std::uint64_t>(m.rows) * exchange.row_bytes();
    for (const HaloMessage& m : plan.receives)
      moved.received += static_cast<std::uint64_t>(m.rows) * exchange.row_bytes();
    return moved;
  };
  const MPI_Comm comm = op == MpiOp::Waitall ? MPI_COMM_NULL : exchange.comm();
  try {
    body();
  } catch (...) {
    profile.call_ends(op, comm, false, bytes, start);
    runtime.after_mpi_call();
    throw;
  }
  profile.call_ends(op, comm, true, bytes, start);
  runtime.after_mpi_call();
}

}  // namespace

void halo_start(const void* address) {
  Runtime& runtime = member_runtime();
  HaloExchange& exchange = prepared_halo(runtime, address, "XMPI_Halo_start");
  as_mpi_call(runtime, MpiOp::Isend, exchange,
              [&] { exchange.start(*static_cast<void* const*>(address)); });
}

void halo_finish(const void* address) {
  Runtime& runtime = member_runtime();
  HaloExchange* exchange = runtime.state().halos().find(address);
  if (exchange == nullptr || !exchange->started()) {
    throw Error(Errc::bad_state,
                "XMPI_Halo_finish: no halo exchange of this address is started (XMPI_Halo_start)");
  }
  as_mpi_call(runtime, MpiOp::Waitall, *exchange, [&] { exchange->finish(); });
}

void halo_exchange(const void* address) {
  Runtime& runtime = member_runtime();
  HaloExchange& exchange = prepared_halo(runtime, address, "XMPI_Halo_exchange");
  as_mpi_call(runtime, MpiOp::Sendrecv, exchange, [&] {
    exchange.start(*static_cast<void* const*>(address));
    exchange.finish();
  });
}

namespace {

// This program's arguments (argv[1..]), as the kernel recorded them.
std::vector<std::string> own_arguments() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::string> arguments;
  std::string::size_type start = 0;
  while (start < text.size()) {
    const auto end = text.find('\0', start);
    arguments.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (!arguments.empty()) arguments.erase(arguments.begin());
  return arguments;
}

// How spawned processes start: no command and no arguments is this program
// as it was started, so that they take part in the same collectives.
SpawnRequest spawn_request(const std::string& command, std::vector<std::string> argv) {
  SpawnRequest request;
  request.command = command;
  request.argv = command.empty() && argv.empty() ? own_arguments() : std::move(argv);
  return request;
}

SpawnRequest spawn_request(const ReconfigureOptions& options) {
  SpawnRequest request = spawn_request(options.command, options.argv);
  request.info = options.spawn.info;
  request.batch = options.spawn.batch;
  return request;
}

// XMPI_Eval_lbalance (`how` null: the processes may not change) and
// XMPI_Eval_reconfig: the same checks, one loop.
Partition evaluate(int rank, int nprocs, int iteration, int max_iterations, Partition current,
                   std::span<const double> weight, const SpawnRequest* how) {
  Runtime& runtime = member_runtime();
  require_own(runtime, rank, nprocs);
  if (runtime.checkpoints().restart_pending()) {
    throw Error(Errc::bad_state,
                "FLEXMPI_RESTART is set but XMPI_Resume was not called: call it after registering "
                "the data, before the loop, and start the loop at the iteration it gives");
  }
  if (iteration < 0 || max_iterations <= iteration) {
    throw Error(Errc::invalid_argument,
                "it=" + std::to_string(iteration) + ", maxit=" + std::to_string(max_iterations) +
                    ": expected 0 <= it < maxit (it: the iteration just completed, maxit: the "
                    "iterations of the loop)");
  }
  if (!runtime.state().blocks().empty()) {
    const RowBlock& mine = runtime.state().blocks()[static_cast<std::size_t>(rank)];
    if (current.count != mine.count || current.displ != mine.displ) {
      throw Error(Errc::invalid_argument,
                  "count/displ (" + std::to_string(current.count) + ", " +
                      std::to_string(current.displ) + ") are not this process's block (" +
                      std::to_string(mine.count) + ", " + std::to_string(mine.displ) + ")");
    }
  }
  const RowBlock block = runtime.controller().evaluate(iteration, max_iterations, weight, how);
  if (runtime.processes().status() != ProcessStatus::removed &&
      runtime.checkpoints().at_iteration_end(iteration, max_iterations)) {
    Runtime::end_after_checkpoint();
  }
  return to_partition(block);
}

}  // namespace

Partition eval_lbalance(int rank, int nprocs, int iteration, int max_iterations, Partition current,
                        std::span<const double> weight) {
  const BlockChangeWatch watch;
  return evaluate(rank, nprocs, iteration, max_iterations, current, weight, nullptr);
}

Partition eval_reconfig(int rank, int nprocs, int iteration, int max_iterations, Partition current,
                        std::span<const double> weight, const ReconfigureOptions& options) {
  const BlockChangeWatch watch;
  const SpawnRequest how = spawn_request(options);
  return evaluate(rank, nprocs, iteration, max_iterations, current, weight, &how);
}

bool spawn_supported() { return !ProcessManager::spawn_unsupported_reason().has_value(); }

void spawn_processes(const std::string& command, std::span<const std::string> argv, int nprocs,
                     std::span<const std::string> node_classes, const SpawnOptions& options) {
  SpawnRequest request = spawn_request(command, {argv.begin(), argv.end()});
  request.nprocs = nprocs;
  request.node_classes.assign(node_classes.begin(), node_classes.end());
  request.info = options.info;
  request.batch = options.batch;
  const BlockChangeWatch watch;
  member_runtime().processes().spawn(request);
}

void remove_processes(int nprocs, std::span<const std::string> node_classes) {
  const BlockChangeWatch watch;
  member_runtime().processes().remove(nprocs, node_classes);
}

void remove_ranks(std::span<const int> ranks) {
  const BlockChangeWatch watch;
  member_runtime().processes().remove_ranks(ranks);
}

int get_data() {
  const BlockChangeWatch watch;
  return member_runtime().processes().get_data();
}

Partition send_data(int iteration) {
  const BlockChangeWatch watch;
  return to_partition(member_runtime().processes().send_data(iteration));
}

Partition reconfigure(const std::map<std::string, int>& processes, int iteration,
                      const ReconfigureOptions& options) {
  const BlockChangeWatch watch;
  return to_partition(
      member_runtime().processes().reconfigure(processes, iteration, spawn_request(options)));
}

int resume() {
  Runtime& runtime = member_runtime();
  runtime.context().note_api_call();
  if (runtime.processes().status() == ProcessStatus::newly_spawned) return get_data();
  if (runtime.checkpoints().restart_pending()) {
    await_every_rank(runtime.context().library_comm(),
                     {CollectiveCall::resume, runtime.controller().iterations_monitored()});
  }
  const std::int64_t iteration = runtime.checkpoints().resume();
  if (iteration > std::numeric_limits<int>::max()) {
    throw Error(Errc::io_failure, "the checkpoint's iteration " + std::to_string(iteration) +
                                      " does not fit XMPI_Resume's int");
  }
  return static_cast<int>(iteration);
}

void write_checkpoint(int next_iteration) {
  Runtime& runtime = member_runtime();
  runtime.context().note_api_call();
  await_same_iteration(runtime.context().library_comm(),
                       {CollectiveCall::checkpoint, next_iteration}, "next_it",
                       "the iteration a restart resumes at");
  runtime.checkpoints().write(next_iteration);
}

void register_record(const std::string& name, void* buffer, std::int64_t count, MPI_Datatype type) {
  Runtime& runtime = member_runtime();
  runtime.context().note_api_call();
  runtime.state().records().add(name, buffer, count, type);
}

void set_work(double work_units) {
  if (!(work_units >= 0.0) || !std::isfinite(work_units)) {
    throw Error(Errc::invalid_argument,
                fmt::format("work_units={}: expected a finite number >= 0", work_units));
  }
  member_runtime().set_work(work_units);
}

void monitor_begin(std::span<const std::string> events) {
  member_runtime().controller().begin_iteration(events, false);
}

std::vector<long long> monitor_end() {
  Runtime& runtime = member_runtime();
  std::vector<long long> counts(runtime.monitor().requested_event_count());
  runtime.controller().end_iteration(counts);
  return counts;
}

void monitor_si_init() {
  Runtime& runtime = member_runtime();
  if (runtime.monitor().iteration_open()) runtime.controller().end_iteration({});
  runtime.controller().begin_iteration({}, /*closed_by_evaluate=*/true);
}

MonitorTotals monitor_totals() {
  const ProcessInterval& totals = Runtime::get().monitor().totals();
  return {totals.iterations, totals.wall, totals.cpu, totals.mpi, totals.computation()};
}

ProcessStatus process_status() { return Runtime::get().processes().status(); }

IterationScope::IterationScope(std::span<const std::string> events) { monitor_begin(events); }

IterationScope::~IterationScope() {
  if (finished_) return;
  try {
    monitor_end();
  } catch (const std::exception& e) {
    if (Runtime* runtime = Runtime::instance())
      runtime->log().error("ending an iteration: {}", e.what());
  }
}

std::vector<long long> IterationScope::finish() {
  finished_ = true;
  return monitor_end();
}

}  // namespace flexmpi
