/*
 * flexmpi.h - C API of flexmpi, the adaptive runtime for iterative MPI programs.
 *
 * The contract (thesis Tables 4.1 and 5.1); docs/reference/api.md is its map.
 * Every function returns XMPI_SUCCESS (0) or a negative XMPI_ERR_* code;
 * XMPI_Error_string(code) explains a code and XMPI_Last_error_message() gives
 * the detail of the last failure on the calling thread (which argument, what
 * was expected). No function of this API throws; a bad argument or call order
 * is a return code, never an abort (flexmpi ends a run only when it cannot go
 * on: docs/reference/inputs.md, "Faults at run time").
 *
 * The library is initialised by the MPI_Init / MPI_Init_thread wrappers and
 * finalised by MPI_Finalize: an application only links with libflexmpi.
 */
#ifndef FLEXMPI_H
#define FLEXMPI_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Return codes. */
enum {
  XMPI_SUCCESS = 0,
  XMPI_ERR_ARG = -1,         /**< an argument is invalid (null, out of range, inconsistent) */
  XMPI_ERR_STATE = -2,       /**< call out of order (not initialised, iteration not open, ...) */
  XMPI_ERR_UNSUPPORTED = -3, /**< the MPI library or the machine cannot do this */
  XMPI_ERR_EVENT = -4,       /**< a requested hardware event is not available */
  XMPI_ERR_MPI = -5,         /**< an underlying MPI call failed */
  XMPI_ERR_NOMEM = -6,       /**< memory could not be allocated */
  XMPI_ERR_CONFIG = -7,      /**< a FLEXMPI_* setting is invalid */
  XMPI_ERR_INTERNAL = -8,    /**< a bug in flexmpi: please report it */
  XMPI_ERR_IO = -9 /**< a file could not be read or written, or is not what was expected */
};

/** Data distribution scheme of a registered structure (see "Distributed in place" below). */
typedef enum { XMPI_DISTRIBUTED, XMPI_REPLICATED, XMPI_DISTRIBUTED_IN_PLACE } XMPI_Scheme;

/** Process status (thesis 4.3). */
enum { XMPI_RUNNING, XMPI_NEWLY_SPAWNED, XMPI_REMOVED };

/** Workload model used by the load balancer (docs/reference/behaviour.md). */
enum { XMPI_LB_COUNT, XMPI_LB_NNZ, XMPI_LB_WEIGHT };

/**
 * The application's communicator: use it wherever the program used
 * MPI_COMM_WORLD. It exists from MPI_Init on and is rebuilt after every
 * reconfiguration.
 */
extern MPI_Comm XMPI_COMM_WORLD;

/** A static, human-readable explanation of a return code. */
const char* XMPI_Error_string(int code);

/** Detail of the last failed call on this thread ("" if none). */
const char* XMPI_Last_error_message(void);

/* ---- monitoring (thesis 4.2, Table 4.1) ---------------------------------- */

/**
 * Start monitoring one iteration of the calling process.
 * events: NULL-terminated array of event names, or NULL for none. Event names
 * are PAPI events ("PAPI_FP_OPS") when flexmpi runs with a PAPI metric, or
 * "WORK" (the work units of the current partition) with the work metric.
 * An event the machine lacks returns XMPI_ERR_EVENT and opens no iteration.
 * Calls are collective over XMPI_COMM_WORLD at sampling-interval boundaries:
 * every process monitors the same number of iterations.
 */
int XMPI_Monitor_iter_begin(char* events[]);

/**
 * Stop monitoring the open iteration. counts (may be NULL) receives one
 * value per event named in XMPI_Monitor_iter_begin. At the end of a sampling
 * interval (FLEXMPI_SAMPLING_INTERVAL iterations) the per-process records are
 * exchanged and, if FLEXMPI_TRACE is set, rank 0 writes a trace line.
 */
int XMPI_Monitor_iter_end(long long* counts);

/**
 * High-level monitoring (thesis Table 5.1): marks the start of an iteration
 * with the configured metric, ending the previous one if it is still open.
 */
int XMPI_Monitor_si_init(void);

/**
 * Declare the work of this process's partition, in the units of the
 * workload model (rows, nonzeros or weight), for the work metric (speed =
 * work per second of computation). Rarely needed: XMPI_Get_wsize sets it to
 * the process's rows, registration to its nonzeros (FLEXMPI_LB_MODEL=nnz),
 * XMPI_Eval_lbalance to its weight (FLEXMPI_LB_MODEL=weight), and each
 * rebalance to the new block's. Call it when
 * the work per iteration changes in a way flexmpi cannot see (e.g. an
 * adaptive kernel); the value holds until the next call or rebalance.
 */
int XMPI_Set_work(double work_units);

/**
 * What monitoring measured on the calling process since MPI_Init: monitored
 * iterations, and the wall, CPU, MPI and computation (wall - MPI) seconds of
 * the monitored regions. Any pointer may be NULL.
 */
int XMPI_Get_monitor_totals(long long* iterations, double* wall, double* cpu, double* mpi,
                            double* computation);

/* ---- data decomposition (thesis 4.5) ------------------------------------- */

/**
 * The partition of a global size dsize owned by `rank` among `nprocs`:
 * count rows starting at row displ. Before any rebalancing this is the
 * block partition (the first dsize % nprocs ranks get one more row); after
 * one, for the registered size, the current block of any rank, known to
 * every process without communication. After XMPI_Eval_lbalance an
 * application that needs every block (e.g. for MPI_Allgatherv) asks for all
 * of them: another process's block may change while the caller's does not.
 */
int XMPI_Get_wsize(int rank, int nprocs, int dsize, int* count, int* displ);

/**
 * Every block at once: counts[p] rows starting at displs[p] for each of the
 * nprocs ranks (arrays of nprocs ints), what XMPI_Get_wsize gives rank by
 * rank. Local, no communication. The call for a halo exchange or an
 * MPI_Allgatherv after XMPI_Eval_lbalance, when any block may have changed.
 * NULL arrays or nprocs < 1 or dsize < 0 are XMPI_ERR_ARG.
 */
int XMPI_Get_decomposition(int nprocs, int dsize, int* counts, int* displs);

/** Status of the calling process: XMPI_RUNNING, XMPI_NEWLY_SPAWNED or XMPI_REMOVED. */
int XMPI_Get_process_status(void);

/* ---- data registration and redistribution (thesis 4.5, Alg. 4) ------------ */
/*
 * Registered structures share one row decomposition of `size` rows and follow
 * it when it changes. `size` is the GLOBAL size, the dsize of XMPI_Get_wsize:
 * a registration of another size than the decomposition's (set by
 * XMPI_Get_wsize, or by an earlier registration) is XMPI_ERR_ARG naming both,
 * and registers nothing. Pass the ADDRESS of your pointer: the buffer must
 * come from malloc, and flexmpi reallocates it and updates your pointer. With
 * XMPI_DISTRIBUTED a process holds only its rows; with XMPI_REPLICATED it
 * holds all `size` rows but owns (and updates) only its own. Every process
 * registers (and unregisters) the same structures in the same order.
 *
 * Resizing a registered buffer. Between flexmpi calls the buffer is the
 * application's: it may realloc it (e.g. larger, for halo rows after its
 * block's) or replace it with another malloc'ed one, provided it stores the
 * new pointer through the registered address (x = realloc(x, ...) on the
 * registered x) and the block's rows stay at its start, after its ghost
 * rows if it has some (all `size` rows when replicated). flexmpi reads and
 * writes only those rows. A call that changes this process's block of a
 * distributed structure (XMPI_Get_blocks_changed says when blocks changed)
 * may reallocate the buffer to exactly the new block's size (with its
 * ghost rows), or move the rows in place and keep it: either way nothing
 * but the block's rows survives (extra capacity may be given back, halo
 * and ghost contents are lost). Grow it again after such a call. A
 * replicated buffer is never reallocated, and a call that leaves this
 * process's block as it was leaves its buffer untouched.
 *
 * Distributed in place (XMPI_DISTRIBUTED_IN_PLACE). As XMPI_DISTRIBUTED,
 * but the buffer becomes flexmpi's: the registration of a vector or dense
 * matrix copies the block into a reserved address range of the WHOLE
 * structure (size rows; memory only for the pages touched), at the block's
 * global rows, frees the malloc'ed buffer and points x at the block's first
 * row, so x[0..count) is the block. When the block changes, the rows this
 * process keeps stay where they are (x moves with the first row) and the
 * others are sent and received straight at their global places: nothing is
 * allocated or copied. Never realloc or free x (a replaced pointer is
 * XMPI_ERR_ARG at the next call that moves rows); register it after
 * XMPI_Get_wsize. x[-k] (k <= displ) and x[count+k] (displ + count + k <
 * size) are neighbouring global rows this process does NOT own: halo rows
 * may be written there, but are lost at a call that changes the blocks. XMPI_Unregister, and
 * MPI_Finalize for what is still registered, hand back a malloc'ed copy of the block: the buffer is
 * the application's again.
 *
 * A sparse matrix in place: ja and a go into windows of all `nnz` nonzeros,
 * at the global offset of the block's first nonzero (the nonzeros of the
 * rows before it). That offset depends on the other processes' blocks, so
 * registration only reserves the windows and leaves ia, ja and a as they
 * are; the first redistribution (XMPI_Redistribute_data, even with the
 * same blocks, or a rebalance or reconfiguration that changes the blocks)
 * copies ja and a into the windows, frees them and points ja and a at the
 * block's first nonzero. From then on never realloc or free ja or a, nor
 * change how many nonzeros a block holds (XMPI_ERR_ARG at the next call
 * that moves rows). Kept nonzeros never move: ja and a follow the block's
 * first nonzero, arriving nonzeros are received at their global places,
 * and whole pages of nonzeros that left are given back. ia stays an
 * ordinary malloc'ed array of count + 1 local offsets starting at 0 (its
 * values depend on the block): like a XMPI_DISTRIBUTED one, a call that
 * changes the block rewrites it and may reallocate it (to a larger size
 * only; what lies past ia[count] is lost, and its pages may be given
 * back). Unregistering hands back malloc'ed ja and a (ia is one already).
 */

/*
 * Sizes are long long, so that a size beyond int reaches flexmpi intact and
 * is refused by value (a 64-bit count converted to an int parameter would
 * wrap before the call: 10^12 arrived as -727379968). Rows are counted in
 * int (count and displ above), so `size` is at most 2147483647; `nnz` may
 * be larger for a distributed matrix.
 */

/** A vector of `size` elements of `type`. */
int XMPI_Register_vector(void* ptr_address, long long size, MPI_Datatype type, XMPI_Scheme scheme);
/**
 * A size x size matrix in row blocks, row-major: a process holds count x size elements.
 * The square case of XMPI_Register_rows(ptr_address, size, size, 0, type, scheme).
 */
int XMPI_Register_dense(void* ptr_address, long long size, MPI_Datatype type, XMPI_Scheme scheme);
/**
 * `rows` rows of `row_length` elements of `type` (any width: an N x M grid
 * is rows N, row_length M), in row blocks, row-major, with `ghost_rows`
 * ghost rows before and after the block in the same buffer (0 for none):
 *
 *   ptr -> [ghost_rows rows][count rows: the block][ghost_rows rows]
 *
 * The pointer points at the buffer's start, the first ghost row: row i of
 * the block (global row displ + i) is u[(ghost_rows + i) * row_length + j],
 * the ghost rows above and below it u[(ghost_rows - k) * row_length + j]
 * and u[(ghost_rows + count - 1 + k) * row_length + j], k = 1..ghost_rows.
 * A distributed buffer holds (count + 2 * ghost_rows) rows. When the block
 * changes, the new buffer has the same layout around the new block; the
 * block's rows are moved, the ghost rows' contents are not kept (exchange
 * the halos again after a call that changed the blocks). In place, the
 * ghost rows are the neighbouring global rows of the structure's address
 * range, which has ghost_rows more rows before row 0 and after the last.
 * Replicated structures hold every row: ghost_rows must be 0 (XMPI_ERR_ARG).
 * A buffer smaller than the rows this process holds (at registration, and
 * at each call that moves rows) is XMPI_ERR_ARG naming both byte counts,
 * never a write past its end.
 */
int XMPI_Register_rows(void* ptr_address, long long rows, long long row_length, int ghost_rows,
                       MPI_Datatype type, XMPI_Scheme scheme);
/**
 * Two buffers of the same rows that the application swaps, e.g. current
 * and next of a time step (tmp = u; u = unew; unew = tmp), each as
 * XMPI_Register_rows describes. flexmpi moves both together, with their
 * contents, in every scheme, and follows the swap: at each call it moves
 * whatever buffer each pointer points at then (in place: the pointers may
 * only be exchanged with each other). XMPI_Unregister of either address
 * forgets both.
 */
int XMPI_Register_pair(void* current_address, void* next_address, long long rows,
                       long long row_length, int ghost_rows, MPI_Datatype type, XMPI_Scheme scheme);
/**
 * A size x size CSR matrix in row blocks: local row pointers ia[0..count]
 * starting at 0, global column indices ja, values a (ia[count] = local nnz).
 * size and nnz describe the whole matrix (the same on every process), like
 * the sizes of the other structures.
 */
int XMPI_Register_sparse(int** ia_address, int** ja_address, void* a_address, long long size,
                         long long nnz, MPI_Datatype type, XMPI_Scheme scheme);
/**
 * Stops following a registered structure: ptr_address is the address given
 * at its registration (for a sparse matrix, ia_address). Its buffers become
 * the application's, as they are now (in place: a malloc'ed copy of the
 * block, XMPI_ERR_NOMEM if there is no memory for it): flexmpi no longer
 * moves or frees them (so the pointer need not outlive the loop at file
 * scope). An address that is not registered is XMPI_ERR_ARG. Local, but
 * every process must unregister the same structures before the next call
 * that moves rows.
 */
int XMPI_Unregister(void* ptr_address);

/**
 * Moves every registered structure from this process's old block
 * (scount rows at sdispl) to its new one (rcount rows at rdispl). Collective.
 * Only rows that change owner move. If the blocks of all processes do not
 * tile the rows exactly, every process gets XMPI_ERR_ARG and nothing changes;
 * the message names the rows at fault (a gap, an overlap, rows past the end).
 * The blocks may tile the rows in any rank order (rank 1's block may come
 * before rank 0's).
 */
int XMPI_Redistribute_data(int scount, int sdispl, int rcount, int rdispl);

/**
 * *changed = 1 if the last of the calls that may change the blocks
 * (XMPI_Eval_lbalance, XMPI_Eval_reconfig, XMPI_Redistribute_data,
 * XMPI_Spawn, XMPI_Remove, XMPI_Send_data, XMPI_Get_data) changed any
 * process's block or the number of processes, else 0 (also before any of
 * them). The same on every process: rebuild what depends on the blocks (a
 * halo exchange, the counts of an MPI_Allgatherv) only when it is 1. An
 * array sized by the block that is not registered (scratch space) is the
 * application's to resize then: rank and size from XMPI_COMM_WORLD, then
 * XMPI_Get_wsize, then realloc; its contents are the old block's. Local.
 */
int XMPI_Get_blocks_changed(int* changed);

/*
 * Halo exchange of a structure registered with ghost rows (XMPI_Register_rows,
 * XMPI_Register_pair): every ghost row that is a row of the structure gets
 * its current owner's values, from as many processes as own those rows (a
 * neighbour's block may be shorter than ghost_rows). Ghost rows before row 0
 * and after the last row are left as they are; a process with an empty
 * block sends and receives nothing. flexmpi computes the messages once per
 * decomposition and again at the first exchange after the blocks changed:
 * call it every iteration, nothing to rebuild. ptr_address is the registered
 * address (of a pair, either one: the buffer its pointer points at now is
 * exchanged). Every process of XMPI_COMM_WORLD calls it for the same
 * structure; the messages travel on flexmpi's own communicator, apart from
 * the application's. Errors: an address not registered, or registered
 * without ghost rows, XMPI_ERR_ARG; a removed process, no decomposition yet,
 * a start while one is started, a finish without a start, XMPI_ERR_STATE.
 */
/** Exchanges the ghost rows and returns when they arrived (blocking). */
int XMPI_Halo_exchange(void* ptr_address);
/**
 * Starts the exchange and returns at once: the application may read the
 * buffer (compute the rows that need no ghost row) but not write it until
 * XMPI_Halo_finish(ptr_address), which returns when the ghost rows arrived.
 * Between the two, a call that may move rows (the list of
 * XMPI_Get_blocks_changed) is XMPI_ERR_STATE.
 */
int XMPI_Halo_start(void* ptr_address);
int XMPI_Halo_finish(void* ptr_address);

/* ---- dynamic load balancing (thesis 5.2, Fig. 5.4, Alg. 5) ---------------- */

/**
 * The load-balancing point of the loop: call it on every process once per
 * iteration, after the iteration's work and communication,
 *   - after XMPI_Monitor_iter_end (an iteration opened by
 *     XMPI_Monitor_iter_begin still open is XMPI_ERR_STATE), or
 *   - in place of the end of an iteration opened by XMPI_Monitor_si_init,
 *     which it ends.
 * `it` is the index of the iteration just completed (0-based) and `maxit` the
 * number of iterations of the loop (0 <= it < maxit, else XMPI_ERR_ARG): the
 * balancer weighs what a move gains over the maxit - it - 1 iterations left
 * and moves nothing in the last. Only at the end of a sampling interval
 * (every FLEXMPI_SAMPLING_INTERVAL iterations) does it do anything: thesis
 * Alg. 5 (the computation times differ by more than
 * FLEXMPI_IMBALANCE_THRESHOLD, an outside load, if any, is long-term), made
 * to hold on noisy machines (docs/design/balancing.md): data move only after
 * FLEXMPI_LB_CONFIRM unbalanced intervals, on the median times of the last
 * FLEXMPI_LB_WINDOW intervals, and only if the predicted gain exceeds
 * FLEXMPI_LB_MARGIN times the predicted cost. Then every process gets a
 * block in proportion to its measured speed, every registered structure is
 * redistributed, and *count / *displ become the new block: the registered
 * pointers, count and displ may all change under the caller, so read them
 * again after the call, and the other processes' blocks with
 * XMPI_Get_decomposition (XMPI_Get_blocks_changed says whether any moved).
 * Collective. weight: per-row workload (size entries, the same on every
 * process) for FLEXMPI_LB_MODEL=weight, else NULL.
 * It never spawns or removes processes, under any FLEXMPI_POLICY: with a
 * malleability policy (smp, hpmp, amp) it balances only, and a process
 * change the policy calls for waits for the next XMPI_Eval_reconfig (a due
 * FLEXMPI_SCHEDULE line stays due); the trace record of that interval says
 * so ("process_change_waits_for": "XMPI_Eval_reconfig", the change under
 * "waiting_change").
 */
int XMPI_Eval_lbalance(int rank, int nprocs, int it, int maxit, int* count, int* displ,
                       double* weight);

/**
 * The adaptation point of the loop (thesis Fig. 5.9): XMPI_Eval_lbalance
 * (same placement and arguments) for the policy of FLEXMPI_POLICY. With
 * "lb" it balances, with "none" it only monitors; a malleability policy
 * ("smp": the predefined schedule of FLEXMPI_SCHEDULE) may also spawn or
 * remove processes at the end of a sampling interval, then rebalance every
 * row. Policies decide only at sampling-interval ends: a FLEXMPI_SCHEDULE
 * line "<iteration> spawn|remove ..." is carried out at the first interval
 * end whose `it` is at or after its iteration (with
 * FLEXMPI_SAMPLING_INTERVAL=10 and a loop from it = 0, "40 spawn 1" spawns
 * at the end of it = 49, and the new process starts at 50), one line per
 * interval. New processes run `command` (NULL: this program) with `argv`
 * (NULL-terminated; NULL with a NULL command: this program's own
 * arguments); they register the same structures, call XMPI_Get_data(&it)
 * and continue the loop from `it` (it + 1 of this call). After the call
 * every process reads its rank and size from XMPI_COMM_WORLD again and its
 * block from *count / *displ; a process whose XMPI_Get_process_status() is
 * XMPI_REMOVED leaves the loop and calls MPI_Finalize. A process change the
 * policy asks for and the machine refuses (no free processing element) is
 * logged and skipped. Collective.
 */
int XMPI_Eval_reconfig(int rank, int nprocs, int it, int maxit, int* count, int* displ,
                       double* weight, char* argv[], char* command);

/* ---- dynamic process management (thesis 4.3, 4.4, Algs. 1-3) -------------- */
/*
 * Spawning and removing processes are collective over XMPI_COMM_WORLD: every
 * process calls them (a process spawned earlier too: it runs the same
 * program); only rank 0's arguments count, as in the thesis (Figs. 4.9,
 * 4.11). Afterwards XMPI_COMM_WORLD is a new communicator: read it again.
 * They need an MPI library that can spawn (Open MPI); elsewhere, e.g. with
 * Debian's MPICH 4.0, they return XMPI_ERR_UNSUPPORTED.
 */

/** MPI_Info key of XMPI_Spawn: value "true" spawns all nprocs processes with
 *  one MPI_Comm_spawn (thesis Alg. 2): cheaper, but they can only be removed
 *  together. Default: one MPI_Comm_spawn per process (Alg. 1). */
#define XMPI_INFO_BATCH "flexmpi_batch"

/**
 * Spawns nprocs processes of `command` (NULL: this program) with arguments
 * argv (NULL-terminated, without the program name). command and argv both
 * NULL: this program with the arguments it was started with, the usual case,
 * since the new processes must run the same collectives as the others
 * (to start this program without arguments, name it in command). info may
 * be MPI_INFO_NULL (or NULL); its keys go to MPI_Comm_spawn. node_class: NULL,
 * or one node class (procType of FLEXMPI_HOSTFILE) per process: the
 * scheduler (FLEXMPI_SCHEDULER) picks a node of that class with a free
 * processing element and sets the MPI_Info "host" key; with a hostfile and
 * no node_class it picks among all nodes; without a hostfile MPI places them.
 * The hostfile's hosts must be in mpiexec's allocation (--host/--hostfile),
 * under the names hostname(1) gives: Open MPI 4.1 cannot recover from a
 * spawn on a host it does not know (its later spawns abort the job).
 * The new processes run the program's main: their MPI_Init returns once all
 * of them have joined, XMPI_Get_process_status() == XMPI_NEWLY_SPAWNED, and
 * they own no rows until XMPI_Get_data. Atomic: on any error (unknown or
 * full node class, no such program, MPI_Comm_spawn failure) no process is
 * added and every process gets the error.
 */
int XMPI_Spawn(const char* command, char* argv[], int nprocs, MPI_Info info, char* node_class[]);

/**
 * Removes nprocs spawned processes: with node_class (one per process) from
 * nodes of those classes as the scheduler's policy says, without it the most
 * recently spawned ones. Their rows go to the remaining processes in
 * proportion to their last measured speeds (equal shares if never
 * measured). A removed process gets XMPI_REMOVED and XMPI_COMM_WORLD ==
 * MPI_COMM_NULL: it should only free the communicators it made from
 * XMPI_COMM_WORLD (Open MPI's MPI_Finalize would otherwise send to processes
 * that no longer know them) and call MPI_Finalize, which waits for nobody.
 * The processes started by mpiexec are never removed: asking for more than
 * were spawned returns XMPI_ERR_ARG and changes nothing.
 */
int XMPI_Remove(int nprocs, char* node_class[]);

/**
 * In a newly spawned process, after registering the same structures as the
 * others (with its empty block, from XMPI_Get_wsize) and the same records
 * (XMPI_Register_record): receives its rows of every registered structure,
 * rank 0's copy of every record, and *it, the iteration its loop starts from:
 * the `it` the running processes pass to XMPI_Send_data at the same time
 * (from XMPI_Eval_reconfig, the iteration after the one that spawned it, so
 * `for (; it < maxit; ++it)` runs the iterations the others have not yet).
 * Afterwards call XMPI_Get_wsize again for the new block; the status
 * becomes XMPI_RUNNING.
 */
int XMPI_Get_data(int* it);

/**
 * The running processes' side of XMPI_Get_data, after XMPI_Spawn: it is
 * the iteration the new processes start from; every process's rows are
 * rebalanced in proportion to the last measured speeds (a new process counts
 * as fast as the processes of its node class, thesis 5.2.1) and moved.
 * count/displ receive this process's new block. Call it before the next
 * monitored iteration: sampling intervals and load balancing are collective
 * over the new processes too (until then XMPI_Redistribute_data returns
 * XMPI_ERR_STATE).
 */
int XMPI_Send_data(int it, int* count, int* displ);

/* ---- checkpoint and restart (docs/guide.md "Make your job survive preemption") ---- */
/*
 * flexmpi saves what the application registered (every structure, the
 * decomposition, the measured speeds, the records below) and the iteration
 * into one parallel HDF5 file, FLEXMPI_CHECKPOINT, indexed by global row, so
 * that a job can be restarted on any number of processes
 * (FLEXMPI_RESTART=FILE, flexrun --restart). Checkpoints are written at the
 * end of an iteration, inside XMPI_Eval_lbalance / XMPI_Eval_reconfig: every
 * FLEXMPI_CHECKPOINT_EVERY iterations or seconds, on SIGUSR1 (and SIGTERM if
 * FLEXMPI_CHECKPOINT_SIGNALS says so), or when XMPI_Checkpoint is called.
 * After a signal's checkpoint every process ends with
 * XMPI_CHECKPOINTED_EXIT_STATUS (unless FLEXMPI_CHECKPOINT_ON_SIGNAL=continue).
 */

/** Exit status of a job that a signal stopped after a checkpoint: "checkpointed, requeue me"
 *  (EX_TEMPFAIL of sysexits.h). */
#define XMPI_CHECKPOINTED_EXIT_STATUS 75

/**
 * The iteration the loop starts from; call it once on every process after
 * registering the structures (and records), before the loop:
 *   - on a restart (FLEXMPI_RESTART), every registered structure and record
 *     is filled from the checkpoint with this process's rows of the current
 *     decomposition, and *it is the iteration after the checkpointed one;
 *     the structures must be those that wrote it (kinds, sizes, types, in
 *     registration order), else XMPI_ERR_ARG naming what differs and no
 *     data is touched;
 *   - in a process spawned by a malleability policy, it is XMPI_Get_data;
 *   - otherwise *it = 0.
 * Collective. Afterwards read the block again (XMPI_Get_wsize): buffers sized
 * by the block must follow it, as after XMPI_Eval_lbalance.
 */
int XMPI_Resume(int* it);

/**
 * Writes a checkpoint now, from which a restart resumes at iteration
 * next_it (>= 0). Collective; needs FLEXMPI_CHECKPOINT (else
 * XMPI_ERR_STATE). The file is written under a temporary name and renamed
 * when complete; the one it replaces is kept as FILE.prev.
 */
int XMPI_Checkpoint(int next_it);

/**
 * A small replicated record of the application's own state (simulated
 * time, a residual history, a curve so far): `count` elements of `type` at
 * `buffer`, the same on every process. One list serves both ways state
 * outlives a set of processes: a process spawned at run time receives rank
 * 0's copy with its rows (XMPI_Get_data, or XMPI_Resume in it; the running
 * processes keep their own copies), and every checkpoint saves rank 0's copy
 * under `name` for XMPI_Resume to restore on a restart. Every process,
 * newcomers too, registers the same records (names, counts, types, in the
 * same order) before that call: else XMPI_Get_data and XMPI_Send_data return
 * XMPI_ERR_ARG on every process, naming the first difference, and nothing
 * moves (register the right records and call both again). The buffer must
 * stay valid while registered; XMPI_Unregister(buffer) forgets it. name:
 * 1-64 characters of [A-Za-z0-9_.-], not registered before.
 */
int XMPI_Register_record(const char* name, void* buffer, long long count, MPI_Datatype type);

#ifdef __cplusplus
}
#endif

#endif /* FLEXMPI_H */
