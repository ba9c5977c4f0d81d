// XMPI_Checkpoint and XMPI_Resume against a bare collective HDF5 write and read of the same
// bytes, and what periodic checkpoints cost an iterative loop.
//
// The state: B / 8 doubles, element i = 0.5 * i, in XMPI_Get_wsize's block partition.
// --mode write: --repeats rounds, the order alternating. "bare" writes the blocks collectively
//   into one 1-D HDF5 dataset under a temporary name, closes the file and renames it to
//   DIR/bare.h5, as a checkpoint does; "flexmpi" is XMPI_Checkpoint of the same buffer,
//   registered as a distributed vector, into DIR/flexmpi.h5 (FLEXMPI_CHECKPOINT). The last
//   round's files stay for restart-read.
// --mode restart-read: a fresh job, as a restart is (FLEXMPI_RESTART=DIR/flexmpi.h5), reads
//   both back into fresh memory, the bare file collectively and the checkpoint by XMPI_Resume,
//   in the order of --first; checks every element and removes each file after its read.
// --mode periodic: --iterations iterations of --passes memory-bound sweeps over the state, each
//   monitored and followed by XMPI_Eval_lbalance, with FLEXMPI_CHECKPOINT_EVERY=PERIOD ("60s")
//   or without checkpoints; counts the checkpoints written.
// Times are the slowest rank's wall time from a barrier. The page cache is not dropped (that
// needs root): reads come from memory, as a restart soon after its checkpoint's do. On this VM
// the first page-cache write after a second without one is 3-10 times slower (256 MiB: 0.2-0.8 s
// instead of 0.065 s): the driver runs an untimed pair of jobs first.
// bench/checkpoint/checkpoint_bench.py runs the modes and prints the tables.
#include <flexmpi.h>
#include <hdf5.h>
#include <mpi.h>
#include <sys/stat.h>

#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr const char* kUsage =
    "usage: bench-checkpoint [--mode write|restart-read|periodic] --bytes B --dir DIR\n"
    "         [--first bare|flexmpi]                                   (write, restart-read)\n"
    "         [--repeats N]                                            (write)\n"
    "         --iterations N [--passes K] [--checkpoint-every PERIOD]  (periodic)\n";
constexpr int kNextIteration = 1;  // what every checkpoint says the loop resumes at

enum class Mode { write, restart_read, periodic };

struct Options {
  Mode mode = Mode::write;
  long long bytes = 0;
  std::string dir;
  int repeats = 1;
  bool flexmpi_first = false;
  int iterations = 0;
  int passes = 1;
  std::string checkpoint_every;  // empty: the periodic loop without checkpoints
};

struct World {
  MPI_Comm comm;
  int rank, nprocs;
};

struct Block {
  long long count, displ;
};

template <class Number>
bool parse_positive(const std::string& text, Number& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && out > 0;
}

// "" or what is wrong, naming the argument.
std::string parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; i += 2) {
    const std::string name = argv[i];
    if (i + 1 == argc) return name + ": missing value";
    const std::string value = argv[i + 1], got = ", got '" + value + "'";
    struct stat info {};
    if (name == "--mode") {
      if (value != "write" && value != "restart-read" && value != "periodic")
        return "--mode: expected write, restart-read or periodic" + got;
      o.mode = value == "write"      ? Mode::write
               : value == "periodic" ? Mode::periodic
                                     : Mode::restart_read;
    } else if (name == "--bytes") {  // flexmpi counts rows in int
      if (!parse_positive(value, o.bytes) || o.bytes % 8 != 0 || o.bytes / 8 > INT_MAX)
        return "--bytes: expected a positive multiple of 8, at most 8 * (2^31 - 1)" + got;
    } else if (name == "--dir") {
      if (stat(value.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
        return "--dir: not a directory" + got;
      o.dir = value;
    } else if (name == "--first") {
      if (value != "bare" && value != "flexmpi") return "--first: expected bare or flexmpi" + got;
      o.flexmpi_first = value == "flexmpi";
    } else if (name == "--checkpoint-every") {
      o.checkpoint_every = value;  // flexmpi checks it, as it checks every FLEXMPI_* setting
    } else if (name == "--repeats" || name == "--iterations" || name == "--passes") {
      int& number = name == "--repeats" ? o.repeats : name == "--passes" ? o.passes : o.iterations;
      if (!parse_positive(value, number)) return name + ": expected a positive integer" + got;
    } else {
      return "unknown argument '" + name + "'";
    }
  }
  if (o.bytes == 0 || o.dir.empty()) return "--bytes and --dir are required";
  if (o.mode == Mode::periodic && o.iterations == 0) return "--mode periodic needs --iterations";
  return "";
}

std::string bare_path(const Options& o) { return o.dir + "/bare.h5"; }

std::string checkpoint_path(const Options& o) {
  return o.dir + (o.mode == Mode::periodic ? "/periodic.h5" : "/flexmpi.h5");
}

// Before MPI_Init: flexmpi reads its settings when it starts, inside MPI_Init.
void set_flexmpi_environment(const Options& o) {
  for (const char* name : {"FLEXMPI_CHECKPOINT", "FLEXMPI_RESTART", "FLEXMPI_CHECKPOINT_EVERY"})
    unsetenv(name);
  setenv("FLEXMPI_POLICY", "none", 1);  // only the checkpoints may touch the data
  if (o.mode == Mode::write) setenv("FLEXMPI_CHECKPOINT", checkpoint_path(o).c_str(), 1);
  if (o.mode == Mode::restart_read) setenv("FLEXMPI_RESTART", checkpoint_path(o).c_str(), 1);
  if (o.mode == Mode::periodic && !o.checkpoint_every.empty()) {
    setenv("FLEXMPI_CHECKPOINT", checkpoint_path(o).c_str(), 1);
    setenv("FLEXMPI_CHECKPOINT_EVERY", o.checkpoint_every.c_str(), 1);
  }
}

[[noreturn]] void fail(const World& w, const std::string& what) {
  std::fprintf(stderr, "bench-checkpoint: rank %d: %s\n", w.rank, what.c_str());
  MPI_Abort(w.comm, 1);
  std::abort();
}

// HDF5 has printed its error stack when a call returns a negative value.
hid_t h5(const World& w, hid_t result, const char* call) {
  if (result < 0) fail(w, std::string(call) + " failed");
  return result;
}

double pattern(long long global_index) { return 0.5 * static_cast<double>(global_index); }

// This rank's block of XMPI_Get_wsize's partition (the first elements % nprocs ranks get one
// more), malloc'ed; with the pattern, or untouched as a restarted job's memory is.
double* allocate_block(const World& w, long long elements, bool filled, Block& b) {
  const long long base = elements / w.nprocs, extra = elements % w.nprocs;
  b = {base + (w.rank < extra ? 1 : 0), w.rank * base + (w.rank < extra ? w.rank : extra)};
  auto* x = static_cast<double*>(std::malloc(b.count * sizeof(double)));
  for (long long k = 0; filled && k < b.count; ++k) x[k] = pattern(b.displ + k);
  return x;
}

void verify(const World& w, const double* x, const Block& b, const char* after) {
  long long wrong = 0, first = -1;
  for (long long k = 0; k < b.count; ++k) {
    if (x[k] != pattern(b.displ + k) && wrong++ == 0) first = k;
  }
  if (wrong == 0) return;
  char what[256];
  std::snprintf(what, sizeof what,
                "after %s, %lld of %lld elements are wrong; the first, global index %lld, is %.17g"
                " instead of %.17g",
                after, wrong, b.count, b.displ + first, x[first], pattern(b.displ + first));
  fail(w, what);
}

template <class Work>
double slowest_seconds(const World& w, Work&& work) {
  MPI_Barrier(w.comm);
  const double start = MPI_Wtime();
  work();
  double seconds = MPI_Wtime() - start;
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, w.comm);
  return seconds;
}

void remove_file(const World& w, const std::string& path) {
  if (w.rank == 0) std::remove(path.c_str());  // may not exist
}

// Moves this rank's block of dataset "x" of a new (write) or existing file, collectively, and
// closes the file. Only the calls that touch the file are checked: a bad property list,
// dataspace or selection makes them fail too.
void transfer_bare(const World& w, const std::string& path, double* x, const Block& b,
                   long long elements, bool write) {
  const hid_t access = H5Pcreate(H5P_FILE_ACCESS), transfer = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_fapl_mpio(access, w.comm, MPI_INFO_NULL);
  H5Pset_dxpl_mpio(transfer, H5FD_MPIO_COLLECTIVE);
  const hsize_t global = elements, start = b.displ, count = b.count;
  const hid_t file_space = H5Screate_simple(1, &global, nullptr);
  const hid_t memory_space = H5Screate_simple(1, &count, nullptr);
  H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &count, nullptr);
  hid_t file = -1, dataset = -1;
  if (write) {
    file = h5(w, H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access), "H5Fcreate");
    dataset = h5(
        w,
        H5Dcreate2(file, "x", H5T_NATIVE_DOUBLE, file_space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        "H5Dcreate2");
    h5(w, H5Dwrite(dataset, H5T_NATIVE_DOUBLE, memory_space, file_space, transfer, x), "H5Dwrite");
  } else {
    file = h5(w, H5Fopen(path.c_str(), H5F_ACC_RDONLY, access), "H5Fopen");
    dataset = h5(w, H5Dopen2(file, "x", H5P_DEFAULT), "H5Dopen2");
    h5(w, H5Dread(dataset, H5T_NATIVE_DOUBLE, memory_space, file_space, transfer, x), "H5Dread");
  }
  H5Dclose(dataset);
  h5(w, H5Fclose(file), "H5Fclose");  // collective: the data has left every rank
  for (const hid_t space : {memory_space, file_space}) H5Sclose(space);
  for (const hid_t list : {access, transfer}) H5Pclose(list);
}

void remove_checkpoint(const World& w, const Options& o) {
  remove_file(w, checkpoint_path(o));
  remove_file(w, checkpoint_path(o) + ".prev");
}

// Written as a checkpoint is: under a temporary name, renamed when complete.
void write_bare(const World& w, const std::string& path, double* x, const Block& b,
                long long elements) {
  transfer_bare(w, path + ".tmp", x, b, elements, true);
  if (w.rank == 0 && std::rename((path + ".tmp").c_str(), path.c_str()) != 0)
    fail(w, "cannot rename " + path + ".tmp");
}

// Into fresh, untouched memory, as a restarted job's is; checks it and removes the file.
double time_bare_read(const World& w, const Options& o) {
  Block b{};
  double* x = allocate_block(w, o.bytes / 8, false, b);
  const double seconds =
      slowest_seconds(w, [&] { transfer_bare(w, bare_path(o), x, b, o.bytes / 8, false); });
  verify(w, x, b, "the bare read");
  std::free(x);
  remove_file(w, bare_path(o));
  return seconds;
}

void xmpi(const World& w, int code, const char* call) {
  if (code != XMPI_SUCCESS)
    fail(w, std::string(call) + ": " + XMPI_Error_string(code) + ": " + XMPI_Last_error_message());
}

// Registers the caller's block as an application does: it asks flexmpi for
// the block first (XMPI_Eval_lbalance needs that decomposition; it is
// allocate_block's). flexmpi keeps the address of the caller's pointer `x`.
void register_block(const World& w, long long elements, double*& x, const Block& b) {
  int count = 0, displ = 0;
  xmpi(w, XMPI_Get_wsize(w.rank, w.nprocs, static_cast<int>(elements), &count, &displ),
       "XMPI_Get_wsize");
  if (count != b.count || displ != b.displ) fail(w, "XMPI_Get_wsize: another block");
  xmpi(w, XMPI_Register_vector(&x, elements, MPI_DOUBLE, XMPI_DISTRIBUTED), "XMPI_Register_vector");
}

double time_flexmpi_read(const World& w, const Options& o) {
  Block b{};
  double* x = allocate_block(w, o.bytes / 8, false, b);
  register_block(w, o.bytes / 8, x, b);
  int it = -1, count = 0, displ = 0;
  const double seconds = slowest_seconds(w, [&] { xmpi(w, XMPI_Resume(&it), "XMPI_Resume"); });
  xmpi(w, XMPI_Get_wsize(w.rank, w.nprocs, static_cast<int>(o.bytes / 8), &count, &displ),
       "XMPI_Get_wsize");  // the block may have changed with the checkpoint's decomposition
  verify(w, x, {count, displ}, "XMPI_Resume");
  if (it != kNextIteration)
    fail(w, "XMPI_Resume gave iteration " + std::to_string(it) + ", not the checkpoint's " +
                std::to_string(kNextIteration));
  remove_checkpoint(w, o);
  xmpi(w, XMPI_Unregister(&x), "XMPI_Unregister");
  std::free(x);
  return seconds;
}

// A checkpoint is a new file renamed into place: a new inode or modification time.
bool checkpoint_replaced(const std::string& path, struct stat& last) {
  struct stat now {};
  if (stat(path.c_str(), &now) != 0) return false;
  const bool replaced = now.st_ino != last.st_ino || now.st_mtim.tv_sec != last.st_mtim.tv_sec ||
                        now.st_mtim.tv_nsec != last.st_mtim.tv_nsec;
  last = now;
  return replaced;
}

void run_periodic(const World& w, const Options& o) {
  Block b{};
  double* x = allocate_block(w, o.bytes / 8, true, b);
  register_block(w, o.bytes / 8, x, b);
  int it = 0, count = static_cast<int>(b.count), displ = static_cast<int>(b.displ);
  xmpi(w, XMPI_Resume(&it), "XMPI_Resume");  // 0: FLEXMPI_RESTART is unset
  remove_checkpoint(w, o);                   // count this run's checkpoints only
  struct stat last_checkpoint {};
  int checkpoints = 0;
  const double seconds = slowest_seconds(w, [&] {
    for (; it < o.iterations; ++it) {
      xmpi(w, XMPI_Monitor_iter_begin(nullptr), "XMPI_Monitor_iter_begin");
      // The pattern is this sweep's exact fixed point: the data can be checked at the end, and
      // the compiler cannot know that a sweep changes nothing.
      for (int pass = 0; pass < o.passes; ++pass) {
        for (int k = 0; k < count; ++k) x[k] = 0.5 * (x[k] + pattern(displ + k));
      }
      xmpi(w, XMPI_Monitor_iter_end(nullptr), "XMPI_Monitor_iter_end");
      // x, count and displ could change under the call (not with FLEXMPI_POLICY=none).
      xmpi(w, XMPI_Eval_lbalance(w.rank, w.nprocs, it, o.iterations, &count, &displ, nullptr),
           "XMPI_Eval_lbalance");
      if (w.rank == 0 && !o.checkpoint_every.empty())
        checkpoints += checkpoint_replaced(checkpoint_path(o), last_checkpoint);
    }
  });
  verify(w, x, {count, displ}, "the periodic loop");
  if (w.rank == 0)
    std::printf("time=%.3f s iterations=%d seconds_per_iteration=%.4f checkpoints=%d\n", seconds,
                o.iterations, seconds / o.iterations, checkpoints);
  remove_checkpoint(w, o);
  xmpi(w, XMPI_Unregister(&x), "XMPI_Unregister");
  std::free(x);
}

void run_write(const World& w, const Options& o) {
  const long long elements = o.bytes / 8;
  Block b{};
  double* x = allocate_block(w, elements, true, b);
  register_block(w, elements, x, b);
  int it = 0;  // as an application does before its loop (no restart here: 0)
  xmpi(w, XMPI_Resume(&it), "XMPI_Resume");
  for (int round = 0; round < o.repeats; ++round) {
    // New files for both: replacing one would unlink the old one in the timed region, and wait
    // for its writeback if it had begun.
    remove_file(w, bare_path(o));
    remove_checkpoint(w, o);
    const bool flexmpi_first = o.flexmpi_first != (round % 2 == 1);
    if (w.rank == 0) std::printf("round=%d first=%s", round, flexmpi_first ? "flexmpi" : "bare");
    for (const bool flexmpi_turn : {flexmpi_first, !flexmpi_first}) {
      if (!flexmpi_turn) {
        const double write =
            slowest_seconds(w, [&] { write_bare(w, bare_path(o), x, b, elements); });
        if (w.rank == 0) std::printf(" bare_write_s=%.4f", write);
      } else {
        const double write = slowest_seconds(
            w, [&] { xmpi(w, XMPI_Checkpoint(kNextIteration), "XMPI_Checkpoint"); });
        if (w.rank == 0) std::printf(" flexmpi_write_s=%.4f", write);
      }
    }
    if (w.rank == 0) std::printf("\n");
  }
  xmpi(w, XMPI_Unregister(&x), "XMPI_Unregister");
  std::free(x);
}

void run_restart_read(const World& w, const Options& o) {
  if (w.rank == 0) std::printf("first=%s", o.flexmpi_first ? "flexmpi" : "bare");
  for (const bool flexmpi_turn : {o.flexmpi_first, !o.flexmpi_first}) {
    if (!flexmpi_turn) {
      const double read = time_bare_read(w, o);
      if (w.rank == 0) std::printf(" bare_read_s=%.4f", read);
    } else {
      const double read = time_flexmpi_read(w, o);
      if (w.rank == 0) std::printf(" flexmpi_read_s=%.4f", read);
    }
  }
  if (w.rank == 0) std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--help") return std::fputs(kUsage, stdout) < 0;
  Options options;
  const std::string error = parse(argc, argv, options);
  if (error.empty()) set_flexmpi_environment(options);
  MPI_Init(&argc, &argv);
  World w{XMPI_COMM_WORLD, 0, 0};
  MPI_Comm_rank(w.comm, &w.rank);
  MPI_Comm_size(w.comm, &w.nprocs);
  std::string problem = error;
  if (problem.empty() && options.bytes / 8 < w.nprocs)
    problem = "--bytes: fewer than 8 bytes a process (" + std::to_string(w.nprocs) + " processes)";
  if (!problem.empty()) {
    if (w.rank == 0) std::fprintf(stderr, "bench-checkpoint: %s\n%s", problem.c_str(), kUsage);
    MPI_Finalize();
    return 2;
  }
  if (w.rank == 0)
    std::printf("bytes=%lld ranks=%d dir=%s (files stay in the page cache)\n", options.bytes,
                w.nprocs, options.dir.c_str());
  if (options.mode == Mode::write) run_write(w, options);
  if (options.mode == Mode::restart_read) run_restart_read(w, options);
  if (options.mode == Mode::periodic) run_periodic(w, options);
  MPI_Finalize();
  return 0;
}
