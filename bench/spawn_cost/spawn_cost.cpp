// bench-spawn-cost: the average cost of creating and of removing a dynamic
// process on this machine (thesis 5.3.3, Table 6.6), the input of the
// computational prediction model (process_spawning_cost of eq. 5.6,
// process_removing_cost of eq. 5.7).
//
//   mpiexec -n 2 bench-spawn-cost [--repeat R] [--batch K] [--output FILE.json] [--append]
//
// --append adds this run's samples to those of FILE.json and recomputes the
// averages (bench/spawn_cost/run.sh runs it several times that way).
//
// It runs a script of collective operations; the processes it spawns run
// this program too and join the script where their spawn left it (the step
// comes in their argv). Per repetition:
//   spawn 1, remove 1                     (Alg. 1, Alg. 3: one process)
//   spawn K one by one, remove K          (Alg. 1, K spawns in one call)
//   spawn K in one batch, remove K        (Alg. 2)
// Each time is the wall time of the call on rank 0, divided by the
// processes it created or removed. No data are registered: moving data is
// modelled apart (eq. 5.8). Output (JSON, documented in docs/reference/formats.md):
//   process_spawning_cost, process_removing_cost, batch_spawning_cost
//   (seconds per process) and every sample.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "flexmpi.h"

namespace {

enum class Kind { spawn_one, spawn_k, spawn_batch, remove_one, remove_k };

struct Step {
  Kind kind;
  int processes;
};

std::vector<Step> script(int repeat, int batch) {
  std::vector<Step> steps;
  for (int r = 0; r < repeat; ++r) {
    steps.push_back({Kind::spawn_one, 1});
    steps.push_back({Kind::remove_one, 1});
    steps.push_back({Kind::spawn_k, batch});
    steps.push_back({Kind::remove_k, batch});
    steps.push_back({Kind::spawn_batch, batch});
    steps.push_back({Kind::remove_k, batch});
  }
  return steps;
}

const char* name(Kind kind) {
  switch (kind) {
    case Kind::spawn_one:
      return "spawn_one";
    case Kind::spawn_k:
      return "spawn_one_by_one";
    case Kind::spawn_batch:
      return "spawn_batch";
    case Kind::remove_one:
      return "remove_one";
    case Kind::remove_k:
      return "remove_k";
  }
  return "?";
}

double mean(const std::vector<double>& values) {
  return values.empty() ? 0.0 : std::accumulate(values.begin(), values.end(), 0.0) / values.size();
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void fail(const char* what, int code) {
  std::fprintf(stderr, "bench-spawn-cost: %s failed: %s (%s)\n", what, XMPI_Error_string(code),
               XMPI_Last_error_message());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5, batch = 4, first_step = 0;
  bool append = false;
  std::string output = "spawn_cost.json";
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--repeat" && a + 1 < argc) {
      repeat = std::atoi(argv[++a]);
    } else if (arg == "--batch" && a + 1 < argc) {
      batch = std::atoi(argv[++a]);
    } else if (arg == "--output" && a + 1 < argc) {
      output = argv[++a];
    } else if (arg == "--append") {
      append = true;
    } else if (arg == "--step" && a + 1 < argc) {  // given to spawned processes
      first_step = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--repeat R] [--batch K] [--output FILE.json] [--append]\n",
                   argv[0]);
      return 2;
    }
  }
  if (repeat < 1 || batch < 1) {
    std::fprintf(stderr, "bench-spawn-cost: --repeat and --batch must be >= 1\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int initial = 0;
  MPI_Comm_size(XMPI_COMM_WORLD, &initial);
  const std::vector<Step> steps = script(repeat, batch);
  std::vector<std::vector<double>> samples(5);  // per process, seconds, by Kind

  for (std::size_t s = static_cast<std::size_t>(first_step); s < steps.size(); ++s) {
    const Step& step = steps[s];
    // What a spawned process needs to join the script after this step.
    const std::vector<std::string> args = {"--repeat", std::to_string(repeat),
                                           "--batch",  std::to_string(batch),
                                           "--step",   std::to_string(s + 1)};
    std::vector<char*> child_argv;
    for (const std::string& arg : args) child_argv.push_back(const_cast<char*>(arg.c_str()));
    child_argv.push_back(nullptr);
    MPI_Info info = MPI_INFO_NULL;
    if (step.kind == Kind::spawn_batch) {
      MPI_Info_create(&info);
      MPI_Info_set(info, XMPI_INFO_BATCH, "true");
    }
    MPI_Barrier(XMPI_COMM_WORLD);
    if (std::getenv("BENCH_TRACE")) {
      int r = 0;
      MPI_Comm_rank(XMPI_COMM_WORLD, &r);
      std::fprintf(stderr, "[pid %d rank %d] step %zu %s\n", getpid(), r, s, name(step.kind));
    }
    const double start = MPI_Wtime();
    int code = XMPI_SUCCESS;
    if (step.kind == Kind::remove_one || step.kind == Kind::remove_k) {
      code = XMPI_Remove(step.processes, nullptr);
    } else {
      code = XMPI_Spawn(nullptr, child_argv.data(), step.processes, info, nullptr);
    }
    const double seconds = MPI_Wtime() - start;
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    if (code != XMPI_SUCCESS) fail(name(step.kind), code);
    if (XMPI_Get_process_status() == XMPI_REMOVED) break;
    samples[static_cast<std::size_t>(step.kind)].push_back(seconds / step.processes);
  }

  if (XMPI_Get_process_status() != XMPI_REMOVED) {
    int rank = 0;
    MPI_Comm_rank(XMPI_COMM_WORLD, &rank);
    if (rank == 0 && first_step == 0) {
      const char* keys[] = {"spawn_one", "spawn_one_by_one", "spawn_batch", "remove_one",
                            "remove_k"};
      int runs = 1;
      if (append) {
        std::ifstream previous(output);
        if (previous) {
          const nlohmann::json old = nlohmann::json::parse(previous);
          for (int k = 0; k < 5; ++k) {
            const auto earlier = old["samples"][keys[k]].get<std::vector<double>>();
            samples[k].insert(samples[k].begin(), earlier.begin(), earlier.end());
          }
          runs += old.value("runs", 1);
        }
      }
      std::vector<double> spawn = samples[0], remove = samples[3];
      spawn.insert(spawn.end(), samples[1].begin(), samples[1].end());
      remove.insert(remove.end(), samples[4].begin(), samples[4].end());
      char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
      int length = 0;
      MPI_Get_library_version(version, &length);
      std::string library(version, static_cast<std::size_t>(length));
      library = library.substr(0, library.find_first_of(std::string("\n\0", 2)));
      char host[256] = {};
      gethostname(host, sizeof host - 1);
      nlohmann::json tuning = nlohmann::json::object();
      for (const char* variable :
           {"OMPI_MCA_pml", "OMPI_MCA_btl", "OMPI_MCA_osc", "PMIX_MCA_gds"}) {
        if (const char* value = std::getenv(variable)) tuning[variable] = value;
      }
      nlohmann::json result = {{"benchmark", "flexmpi process creation and removal cost"},
                               {"units", "seconds per process"},
                               {"process_spawning_cost", mean(spawn)},
                               {"process_removing_cost", mean(remove)},
                               {"batch_spawning_cost", mean(samples[2])},
                               {"median",
                                {{"spawning", median(spawn)},
                                 {"removing", median(remove)},
                                 {"batch_spawning", median(samples[2])}}},
                               {"initial_processes", initial},
                               {"repetitions", repeat},
                               {"runs", runs},
                               {"batch_size", batch},
                               {"mpi_library", library},
                               {"host", host},
                               {"mpi_environment", tuning},
                               {"samples", nlohmann::json::object()}};
      for (int k = 0; k < 5; ++k) result["samples"][keys[k]] = samples[k];
      std::ofstream(output) << result.dump(2) << "\n";
      std::printf(
          "flexmpi process management cost (%d initial processes, %d x %d repetitions, "
          "K = %d)\n",
          initial, runs, repeat, batch);
      std::printf("  %-36s %10s %10s\n", "operation (per process)", "mean ms", "median ms");
      const char* labels[] = {"spawn 1 (Alg. 1)", "spawn K one by one (Alg. 1)",
                              "spawn K in one batch (Alg. 2)", "remove 1 (Alg. 3)",
                              "remove K (Alg. 3)"};
      for (int k = 0; k < 5; ++k) {
        std::printf("  %-36s %10.3f %10.3f\n", labels[k], 1e3 * mean(samples[k]),
                    1e3 * median(samples[k]));
      }
      std::printf(
          "  process_spawning_cost %.3f ms, process_removing_cost %.3f ms, "
          "batch %.3f ms -> %s\n",
          1e3 * mean(spawn), 1e3 * mean(remove), 1e3 * mean(samples[2]), output.c_str());
    }
  }
  MPI_Finalize();
  return 0;
}
