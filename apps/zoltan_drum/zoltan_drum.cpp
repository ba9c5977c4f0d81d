// flexmpi-zoltan-drum: Zoltan partitions a real graph with DRUM powers as part
// sizes, the way Zoltan's USE_DRUM did (DRUM thesis ch. 4). Debian's
// Zoltan 13.2 no longer has the DRUM hooks, so the powers go in through
// Zoltan_LB_Set_Part_Sizes, one part per process.
//
//   mpiexec -n P flexmpi-zoltan-drum --matrix FILE.mtx [--method GRAPH|BLOCK]
//                                    [--topology drum.xml] [--monitor-seconds S]
//
// 1. Every process reads the Matrix Market matrix and keeps a block of rows:
//    row i is vertex i of the graph, its off-diagonal nonzeros its edges.
// 2. DRUM (drum.h) monitors a short phase of sparse products on those rows and
//    computes the powers (3.1.2): the flat model of the job's hosts, or the
//    XML file flexmpi-drum-config wrote (--topology), whose MFLOPS carry
//    emulated speeds.
// 3. Zoltan partitions with this process's DRUM part size as the size of part
//    `rank`, then moves the rows with its own migration (Zoltan_Migrate and
//    pack/unpack callbacks).
// 4. Rank 0 prints every process's rows and DRUM part size, and checks that the
//    row count and a checksum of the migrated rows are preserved.
// 5. With --steps N, the solve phase on the new parts (halo_solver.hpp): N
//    steps of a halo exchange and --products products; the slowest process's
//    time, each process's communication, and a checksum of the result that
//    every partition must reproduce.
#include <mpi.h>
#include <zoltan.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "flexmpi/drum.h"
#include "halo_solver.hpp"
#include "row_graph.hpp"

namespace {

struct Options {
  std::string matrix;
  std::string method = "GRAPH";
  std::string topology;
  double monitor_seconds = 0.5;
  int expect_fewest = -1;
  std::vector<std::string> drum_parameters;  ///< NAME=VALUE, for DRUM_setParam
  bool equal_parts = false;                  ///< Zoltan without DRUM: 1/P each
  int steps = 0;
  int products = 1;
  bool monitor_solve = false;  ///< DRUM's agents run during the solve phase (overhead)
  double speed = 1.0;          ///< emulated relative speed of every process (sleep mode)
};

/// Stops the program on every process: the example has no way to go on.
[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "flexmpi-zoltan-drum: %s\n", message.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void check_drum(int code, const char* call) {
  if (code == DRUM_FATAL || code == DRUM_MEMERR) fail(std::string(call) + " failed");
}

/// A DRUM model of the job, with the parameters of the command line.
DRUM_machineModel* create_drum(const Options& options) {
  DRUM_machineModel* dmm = DRUM_createMachineModel(MPI_COMM_WORLD, DRUM_SILENT);
  if (dmm == nullptr) fail("DRUM_createMachineModel failed");
  if (!options.topology.empty()) {
    check_drum(DRUM_setParam(dmm, "USE_FLAT_MODEL", "0"), "DRUM_setParam(USE_FLAT_MODEL)");
    check_drum(DRUM_setParam(dmm, "XML_TOPOLOGY_FILE", options.topology.c_str()),
               "DRUM_setParam(XML_TOPOLOGY_FILE)");
  }
  for (const std::string& parameter : options.drum_parameters) {
    const std::size_t equals = parameter.find('=');
    if (equals == std::string::npos) fail("--drum-param " + parameter + ": expected NAME=VALUE");
    const std::string name = parameter.substr(0, equals);
    check_drum(DRUM_setParam(dmm, name.c_str(), parameter.substr(equals + 1).c_str()),
               ("DRUM_setParam(" + name + ")").c_str());
  }
  check_drum(DRUM_initMachineModel(dmm), "DRUM_initMachineModel");
  return dmm;
}

/// This process's DRUM part size after monitoring `seconds` of sparse products.
float drum_part_size(DRUM_machineModel* dmm, const Options& options,
                     const flexmpi_zoltan_drum::RowGraph& graph) {
  check_drum(DRUM_startMonitoring(dmm), "DRUM_startMonitoring");
  graph.multiply_for(options.monitor_seconds, options.speed);
  check_drum(DRUM_stopMonitoring(dmm), "DRUM_stopMonitoring");
  check_drum(DRUM_computePowers(dmm), "DRUM_computePowers");
  int ierr = DRUM_OK;
  const float part_size = DRUM_getLocalPartSize(dmm, &ierr);
  check_drum(ierr, "DRUM_getLocalPartSize");
  return part_size;
}

void check_zoltan(int code, const char* call) {
  if (code != ZOLTAN_OK && code != ZOLTAN_WARN) fail(std::string(call) + " failed");
}

/// A Zoltan instance over the graph's callbacks, one part per process.
Zoltan_Struct* create_zoltan(const Options& options, flexmpi_zoltan_drum::RowGraph& graph) {
  Zoltan_Struct* zz = Zoltan_Create(MPI_COMM_WORLD);
  const std::vector<std::pair<const char*, const char*>> parameters = {
      {"DEBUG_LEVEL", "0"},      {"LB_METHOD", options.method.c_str()},
      {"GRAPH_PACKAGE", "PHG"},  {"NUM_GID_ENTRIES", "1"},
      {"NUM_LID_ENTRIES", "0"},  {"OBJ_WEIGHT_DIM", "0"},
      {"EDGE_WEIGHT_DIM", "0"},  {"RETURN_LISTS", "ALL"},
      {"IMBALANCE_TOL", "1.02"}, {"LB_APPROACH", "PARTITION"}};
  for (const auto& [name, value] : parameters) {
    check_zoltan(Zoltan_Set_Param(zz, name, value), name);
  }
  flexmpi_zoltan_drum::register_callbacks(zz, graph);
  return zz;
}

/// Partitions with `part_size` as this process's part and migrates the rows;
/// returns how many rows left this process.
int partition_and_migrate(Zoltan_Struct* zz, float part_size) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int weight_index = 0;
  check_zoltan(Zoltan_LB_Set_Part_Sizes(zz, 1, 1, &rank, &weight_index, &part_size),
               "Zoltan_LB_Set_Part_Sizes");
  int changes = 0, gid_entries = 0, lid_entries = 0, imports = 0, exports = 0;
  ZOLTAN_ID_PTR import_gids = nullptr, import_lids = nullptr;
  ZOLTAN_ID_PTR export_gids = nullptr, export_lids = nullptr;
  int *import_procs = nullptr, *import_parts = nullptr;
  int *export_procs = nullptr, *export_parts = nullptr;
  check_zoltan(Zoltan_LB_Partition(zz, &changes, &gid_entries, &lid_entries, &imports, &import_gids,
                                   &import_lids, &import_procs, &import_parts, &exports,
                                   &export_gids, &export_lids, &export_procs, &export_parts),
               "Zoltan_LB_Partition");
  check_zoltan(Zoltan_Migrate(zz, imports, import_gids, import_lids, import_procs, import_parts,
                              exports, export_gids, export_lids, export_procs, export_parts),
               "Zoltan_Migrate");
  Zoltan_LB_Free_Part(&import_gids, &import_lids, &import_procs, &import_parts);
  Zoltan_LB_Free_Part(&export_gids, &export_lids, &export_procs, &export_parts);
  return exports;
}

struct Totals {
  long long rows = 0;
  long long moved = 0;  ///< rows Zoltan_Migrate moved
  std::uint64_t checksum = 0;
};

Totals totals(const flexmpi_zoltan_drum::RowGraph& graph, long long moved = 0) {
  long long counts[2] = {graph.local_rows(), moved};
  long long summed[2] = {0, 0};
  MPI_Allreduce(counts, summed, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  Totals sum{.rows = summed[0], .moved = summed[1]};
  std::uint64_t checksum = graph.checksum();
  // A sum modulo 2^64 of per-row hashes: independent of where each row lives.
  MPI_Allreduce(&checksum, &sum.checksum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

/// Rank 0 prints every process's rows and part size; returns the exit status.
int report(const Options& options, const flexmpi_zoltan_drum::RowGraph& graph, float part_size,
           const Totals& before, int moved) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double mine[2] = {static_cast<double>(graph.local_rows()), part_size};
  std::vector<double> all(2 * static_cast<std::size_t>(size));
  MPI_Gather(mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const Totals after = totals(graph, moved);
  if (rank != 0) return 0;
  int fewest = 0;
  for (int r = 0; r < size; ++r) {
    std::printf("rank %d: %.0f rows, DRUM part size %.4f (%.1f %% of the rows)\n", r, all[2 * r],
                all[2 * r + 1], 100.0 * all[2 * r] / static_cast<double>(after.rows));
    if (all[2 * r] < all[2 * fewest]) fewest = r;
  }
  const bool preserved = after.rows == before.rows && after.checksum == before.checksum;
  std::printf("Zoltan_Migrate moved %lld rows\n", after.moved);
  std::printf("rows %lld -> %lld, checksum %016llx -> %016llx: %s\n", before.rows, after.rows,
              static_cast<unsigned long long>(before.checksum),
              static_cast<unsigned long long>(after.checksum),
              preserved ? "preserved" : "NOT PRESERVED");
  if (options.expect_fewest >= 0 && fewest != options.expect_fewest) {
    std::printf("expected rank %d to get the fewest rows, rank %d did\n", options.expect_fewest,
                fewest);
    return 1;
  }
  return preserved ? 0 : 1;
}

/// Rank 0 prints the solve phase: its time, and per process the halo and the
/// time spent exchanging it and computing.
void report_solve(const Options& options, const flexmpi_zoltan_drum::SolveResult& result) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double mine[3] = {static_cast<double>(result.halo_values), result.communication_seconds,
                          result.computation_seconds};
  std::vector<double> all(3 * static_cast<std::size_t>(size));
  MPI_Gather(mine, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  for (int r = 0; r < size; ++r) {
    std::printf("rank %d: halo %.0f values, exchange %.3f s, products %.3f s\n", r, all[3 * r],
                all[3 * r + 1], all[3 * r + 2]);
  }
  std::printf("solve: steps=%d products=%d checksum=%016llx time=%.3f s\n", options.steps,
              options.products, static_cast<unsigned long long>(result.checksum), result.seconds);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{
      "flexmpi-zoltan-drum: partition a Matrix Market matrix's graph with Zoltan, "
      "using DRUM powers as part sizes, and migrate its rows with Zoltan_Migrate"};
  app.add_option("--matrix,-m", options.matrix, "the Matrix Market file (square)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--method", options.method, "Zoltan LB_METHOD")
      ->check(CLI::IsMember({"GRAPH", "BLOCK"}))
      ->capture_default_str();
  app.add_option("--topology", options.topology,
                 "DRUM XML machine model (flexmpi-drum-config); the flat model if not given")
      ->check(CLI::ExistingFile);
  app.add_option("--monitor-seconds", options.monitor_seconds, "length of the phase DRUM monitors")
      ->check(CLI::Range(0.05, 60.0))
      ->capture_default_str();
  app.add_option("--expect-fewest", options.expect_fewest,
                 "fail unless this rank gets the fewest rows (tests)");
  app.add_option("--drum-param", options.drum_parameters,
                 "NAME=VALUE for DRUM_setParam, e.g. COMMUNICATION_WEIGHT=0.3 (repeatable)");
  app.add_flag("--equal-parts", options.equal_parts,
               "Zoltan without DRUM: every part 1/P (DRUM still reports its powers)");
  app.add_option("--steps", options.steps, "steps of the solve phase after the migration")
      ->check(CLI::Range(0, 100000000));
  app.add_option("--products", options.products, "products per step of the solve phase")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_flag("--monitor-solve", options.monitor_solve,
               "run DRUM's monitoring agents during the solve phase (their cost: with "
               "--drum-param DEBUG_LEVEL=4 each rank prints its agent's CPU time)");
  app.add_option("--emulate-speed", options.speed,
                 "relative speed of every process's processing element, emulated by sleeping "
                 "after each computation (1: none); hosts of one machine then do not compete "
                 "for its cores")
      ->check(CLI::Range(0.001, 1.0))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  MPI_Init(&argc, &argv);
  float zoltan_version = 0;
  check_zoltan(Zoltan_Initialize(argc, argv, &zoltan_version), "Zoltan_Initialize");
  flexmpi_zoltan_drum::RowGraph graph(options.matrix);
  const Totals before = totals(graph);
  DRUM_machineModel* dmm = create_drum(options);
  const float part_size = drum_part_size(dmm, options, graph);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Zoltan_Struct* zz = create_zoltan(options, graph);
  const int moved =
      partition_and_migrate(zz, options.equal_parts ? 1.0F / static_cast<float>(size) : part_size);
  Zoltan_Destroy(&zz);
  const int status = report(options, graph, part_size, before, moved);
  if (options.steps > 0) {
    // With --monitor-solve DRUM's agents watch the whole solve phase, as they
    // watch an application between two rebalancings (Table 5.3's overhead).
    if (options.monitor_solve) check_drum(DRUM_startMonitoring(dmm), "DRUM_startMonitoring");
    const flexmpi_zoltan_drum::SolveResult result =
        flexmpi_zoltan_drum::solve(graph, options.steps, options.products, options.speed);
    if (options.monitor_solve) check_drum(DRUM_stopMonitoring(dmm), "DRUM_stopMonitoring");
    report_solve(options, result);
  }
  check_drum(DRUM_deleteMachineModel(dmm), "DRUM_deleteMachineModel");
  MPI_Finalize();
  return status;
}
