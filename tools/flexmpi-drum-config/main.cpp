// flexmpi-drum-config: the DRUM machine model file of the running job's hosts,
// the role of the thesis's "drumhead" configuration tool (DRUM thesis ch. 4,
// A.1). Re-run it when the hardware changes.
//
//   mpiexec -n P flexmpi-drum-config --output drum.xml [--size 800] [--repetitions 5]
//                                    [--dry-run]
//
// One elected process per host (the lowest rank there, as DRUM elects it)
// surveys its host: cores (hwloc), network interfaces and speeds
// (/sys/class/net), whether the monitors can read it (/proc/stat,
// /proc/net/dev), and runs the capability benchmark of 3.1.1 (LAPACK dgesv,
// MFLOPS = (2/3 n^3 + 2 n^2) / median seconds). Under FLEXMPI_EMULATE_SPEED
// the rating is multiplied by the elected rank's relative
// speed, so that an emulated cluster shows its heterogeneity. Rank 0 writes
// the flat XML model (Fig. 3.5: one NETWORK root over one COMPUTING node per
// host) that DRUM reads with USE_FLAT_MODEL=0 and XML_TOPOLOGY_FILE.
#include <hwloc.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "emulation/speed_emulator.hpp"
#include "flexmpi/error.hpp"
#include "linpack.hpp"
#include "machine/capability_benchmark.hpp"
#include "machine/drum_runtime.hpp"
#include "machine/host_survey.hpp"
#include "machine/machine_model.hpp"
#include "machine/proc_readers.hpp"

namespace {

using flexmpi::machine::HostSurvey;

struct Options {
  std::string output;
  int size = 800;
  int repetitions = 5;
  bool dry_run = false;
};

/// A line that carries a failure instead of a survey through the gather.
constexpr char kFailureMark = '!';

/// The directory of --output must exist: checked before any benchmark runs.
std::string output_directory_exists(const std::string& output) {
  const std::filesystem::path directory = std::filesystem::absolute(output).parent_path();
  if (std::filesystem::is_directory(directory)) return "";
  return "directory '" + directory.string() + "' does not exist";
}

int hwloc_cores() {
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0 || hwloc_topology_load(topology) != 0) {
    throw flexmpi::Error(flexmpi::Errc::internal, "hwloc cannot load the host's topology");
  }
  const int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  hwloc_topology_destroy(topology);
  return std::max(1, cores);
}

/// The relative speed FLEXMPI_EMULATE_SPEED gives `rank` (1 when unset or
/// past the list). A speed function rates by its first segment's speed.
double emulated_speed(int rank) {
  const char* text = std::getenv("FLEXMPI_EMULATE_SPEED");
  if (text == nullptr || *text == '\0') return 1.0;
  const auto speeds = flexmpi::parse_speed_list(text);
  if (rank >= static_cast<int>(speeds.size())) return 1.0;
  return speeds[rank].base_speed();
}

HostSurvey survey_host(const std::string& host, const Options& options, double speed) {
  HostSurvey survey;
  survey.host = host;
  survey.cpus = hwloc_cores();
  survey.interfaces = flexmpi::machine::read_network_interfaces("/sys/class/net");
  const std::string net_dev = flexmpi::machine::read_kernel_file("/proc/net/dev");
  flexmpi::machine::mark_monitorable(survey.interfaces, net_dev);
  survey.monitorable =
      flexmpi::machine::cpu_statistics_readable(flexmpi::machine::read_kernel_file("/proc/stat")) &&
      !net_dev.empty();
  if (!options.dry_run) {
    const auto seconds = flexmpi_drum_config::time_dense_solves(options.size, options.repetitions);
    survey.mflops = flexmpi::machine::capability_mflops(options.size, seconds, speed);
  }
  return survey;
}

/// Every rank's line, at rank 0 (empty elsewhere).
std::vector<std::string> gather_lines(const std::string& line, int rank, int size) {
  const int length = static_cast<int>(line.size());
  std::vector<int> lengths(size);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(size, 0);
  for (int r = 1; r < size; ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(rank == 0 ? offsets.back() + lengths.back() : 0, '\0');
  MPI_Gatherv(line.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  std::vector<std::string> lines;
  if (rank != 0) return lines;
  for (int r = 0; r < size; ++r) lines.push_back(all.substr(offsets[r], lengths[r]));
  return lines;
}

std::string interface_list(const HostSurvey& survey) {
  std::string text;
  for (const auto& interface : survey.interfaces) {
    text += (text.empty() ? "" : ", ") + interface.name + " " +
            (interface.speed_mbits > 0
                 ? std::to_string(static_cast<long>(interface.speed_mbits)) + " Mbit/s"
                 : std::string("speed unknown")) +
            (interface.monitorable ? "" : " (not monitorable)");
  }
  return text;
}

void print_host(const HostSurvey& survey, double speed, const Options& options) {
  std::printf("  %s: %d cores, ", survey.host.c_str(), survey.cpus);
  if (options.dry_run) {
    std::printf("not benchmarked (--dry-run)");
  } else {
    std::printf("%.1f MFLOPS", survey.mflops);
    if (speed < 1.0) {
      std::printf(" (emulated: measured %.1f x relative speed %g of FLEXMPI_EMULATE_SPEED)",
                  survey.mflops / speed, speed);
    }
  }
  std::printf(", %s; interfaces: %s\n", survey.monitorable ? "monitorable" : "NOT monitorable",
              interface_list(survey).c_str());
}

/// Rank 0: decodes the elected processes' surveys, prints them and writes the model.
int write_model(const std::vector<std::string>& lines, const std::vector<double>& speeds,
                const Options& options) {
  std::vector<HostSurvey> hosts;
  for (std::size_t r = 0; r < lines.size(); ++r) {
    if (lines[r].empty()) continue;  // not its host's elected process
    if (lines[r].front() == kFailureMark) {
      std::fprintf(stderr, "flexmpi-drum-config: rank %zu: %s\n", r, lines[r].c_str() + 1);
      return 1;
    }
    hosts.push_back(flexmpi::machine::decode_host_survey(lines[r]));
    print_host(hosts.back(), speeds[r], options);
  }
  const std::string xml = flexmpi::machine::flat_machine_xml(hosts);
  if (options.dry_run) {
    std::printf("--dry-run: %s not written; it would hold:\n%s", options.output.c_str(),
                xml.c_str());
    return 0;
  }
  std::ofstream file(options.output);
  if (!(file << xml)) {
    std::fprintf(stderr, "flexmpi-drum-config: --output: cannot write '%s'\n",
                 options.output.c_str());
    return 1;
  }
  std::printf("wrote %s (%zu hosts)\n", options.output.c_str(), hosts.size());
  return 0;
}

}  // namespace

namespace {

/// This rank's survey line: the survey if it is its host's elected process,
/// "" otherwise, or kFailureMark and the message if something failed.
std::string local_line(const Options& options, double speed, int rank) {
  try {
    const std::vector<std::string> hosts = flexmpi::machine::gather_host_names(MPI_COMM_WORLD);
    flexmpi::machine::MachineModel model(flexmpi::machine::flat_model_specs(hosts), "job's hosts");
    model.attach_ranks(hosts);
    if (model.node(model.leaf_of_rank(rank)).elected_rank != rank) return "";
    return flexmpi::machine::encode_host_survey(survey_host(hosts[rank], options, speed));
  } catch (const std::exception& error) {
    return kFailureMark + std::string(error.what());
  }
}

/// Under FLEXMPI_EMULATE_SPEED, says which ranks' speeds rate their host.
void print_emulation_note(const std::vector<std::string>& lines,
                          const std::vector<double>& speeds) {
  std::string ignored;
  for (std::size_t r = 0; r < lines.size(); ++r) {
    if (lines[r].empty() && speeds[r] < 1.0) ignored += " " + std::to_string(r);
  }
  std::printf(
      "FLEXMPI_EMULATE_SPEED: each host's MFLOPS is the measured rating times the relative "
      "speed of its elected (lowest) rank\n");
  if (!ignored.empty()) {
    std::printf("  ranks%s are not elected: their speeds do not count (one host, one rating)\n",
                ignored.c_str());
  }
}

int run(const Options& options) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double speed = 1.0;
  std::string line;
  try {
    speed = emulated_speed(rank);
  } catch (const std::exception& error) {
    line = kFailureMark + ("FLEXMPI_EMULATE_SPEED: " + std::string(error.what()));
  }
  if (line.empty()) line = local_line(options, speed, rank);
  std::vector<double> speeds(size);
  MPI_Gather(&speed, 1, MPI_DOUBLE, speeds.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const std::vector<std::string> lines = gather_lines(line, rank, size);
  int status = 0;
  if (rank == 0) {
    std::printf(
        "flexmpi-drum-config: %d processes; capability benchmark: LAPACK dgesv, n = %d, "
        "median of %d runs\n",
        size, options.size, options.repetitions);
    if (std::getenv("FLEXMPI_EMULATE_SPEED") != nullptr) print_emulation_note(lines, speeds);
    try {
      status = write_model(lines, speeds, options);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "flexmpi-drum-config: %s\n", error.what());
      status = 1;
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{
      "flexmpi-drum-config: write the DRUM machine model (XML, DRUM thesis Fig. 3.5) of the "
      "hosts this job runs on: cores, network interfaces and speeds, what the monitors can "
      "read, and each host's capability rating in MFLOPS (a LINPACK-style LAPACK dgesv solve, "
      "thesis 3.1.1; times the relative speed of FLEXMPI_EMULATE_SPEED). Run it with mpiexec "
      "over the job's processes; DRUM reads the file with USE_FLAT_MODEL=0 and "
      "XML_TOPOLOGY_FILE."};
  app.add_option("--output,-o", options.output, "the XML machine model to write")
      ->required()
      ->check(CLI::Validator(output_directory_exists, "FILE", "directory exists"));
  app.add_option("--size,-n", options.size, "order n of the dense system the benchmark solves")
      ->check(CLI::Range(50, 5000))
      ->capture_default_str();
  app.add_option("--repetitions,-r", options.repetitions,
                 "solves per host; the median time rates it")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_flag("--dry-run", options.dry_run,
               "survey the hosts without the benchmark and print the XML instead of writing it");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  MPI_Init(&argc, &argv);
  const int status = run(options);
  MPI_Finalize();
  return status;
}
