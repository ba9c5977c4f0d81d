#include "machine/drum_runtime.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"
#include "machine/machine_xml.hpp"
#include "util/collective_watchdog.hpp"
#include "util/text_file.hpp"

namespace flexmpi::machine {

std::vector<std::string> gather_host_names(MPI_Comm comm) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  check_mpi(PMPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
  std::vector<char> all(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  check_mpi(PMPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(),
                           MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm),
            "MPI_Allgather (DRUM host names)");
  std::vector<std::string> hosts;
  for (int rank = 0; rank < size; ++rank) hosts.emplace_back(&all[rank * MPI_MAX_PROCESSOR_NAME]);
  return hosts;
}

DrumRuntime::DrumRuntime(MPI_Comm comm, int debug_level) {
  // Non-blocking, so that a rank that never calls DRUM_createMachineModel is
  // named instead of the others waiting forever; the watchdog sends no
  // message on the application's communicator.
  MPI_Request duplicated = MPI_REQUEST_NULL;
  check_mpi(PMPI_Comm_idup(comm, &comm_, &duplicated), "MPI_Comm_idup (DRUM)");
  await_collective_request(comm, duplicated, {CollectiveCall::drum_create, 0});
  int size = 0;
  PMPI_Comm_rank(comm_, &rank_);
  PMPI_Comm_size(comm_, &size);
  host_of_rank_ = gather_host_names(comm_);
  const int cpus = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  cpus_of_rank_.resize(size);
  check_mpi(PMPI_Allgather(&cpus, 1, MPI_INT, cpus_of_rank_.data(), 1, MPI_INT, comm_),
            "MPI_Allgather (DRUM CPU counts)");
  parameters_.debug_level = std::clamp(debug_level, 0, 5);
}

DrumRuntime::~DrumRuntime() {
  monitor_.reset();
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) PMPI_Comm_free(&comm_);
}

std::string DrumRuntime::set_parameter(std::string_view name, std::string_view value) {
  return machine::set_parameter(parameters_, name, value);
}

std::string DrumRuntime::read_parameter_file(const std::string& path) {
  const auto pairs =
      parse_parameter_file(read_text_file(path, "DRUM parameter", Errc::bad_config), path);
  std::string warnings;
  std::string errors;
  for (const auto& [name, value] : pairs) {
    try {
      const std::string warning = set_parameter(name, value);
      if (!warning.empty()) warnings += (warnings.empty() ? "" : "; ") + warning;
    } catch (const Error& e) {
      errors += (errors.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  if (!errors.empty()) throw Error(Errc::invalid_argument, path + ": " + errors);
  return warnings;
}

void DrumRuntime::set_monitoring_frequency_tenths(int tenths) {
  if (tenths <= 0) {
    throw Error(Errc::invalid_argument, "DRUM monitoring frequency " + std::to_string(tenths) +
                                            ": expected a positive number of tenths of a second");
  }
  parameters_.monitoring_period = std::chrono::milliseconds(100 * tenths);
}

std::string DrumRuntime::init() {
  const std::string& file = parameters_.xml_topology_file;
  const bool file_missing = !parameters_.use_flat_model && !std::filesystem::exists(file);
  const bool flat = parameters_.use_flat_model || file_missing;
  MachineModel model = flat ? MachineModel(flat_model_specs(host_of_rank_), "flat model")
                            : MachineModel(read_machine_xml(file), file);
  model.attach_ranks(host_of_rank_);
  model_ = std::move(model);
  report_.reset();
  monitored_seconds_ = 0;
  powers_.clear();
  if (!file_missing) return "";
  return "XML_TOPOLOGY_FILE '" + file + "' does not exist: using the flat model of the job's hosts";
}

const MachineModel& DrumRuntime::model() const {
  if (!model_) {
    throw Error(Errc::bad_state,
                "the machine model is not initialized (DRUM_initMachineModel has not succeeded)");
  }
  return *model_;
}

std::string DrumRuntime::start_monitoring() {
  const MachineModel& tree = model();
  if (!parameters_.use_dynamic_monitoring) {
    return "USE_DYNAMIC_MONITORING=0: no monitoring, powers come from the benchmarks";
  }
  if (monitor_ && monitor_->running()) {
    throw Error(Errc::bad_state, "DRUM monitoring is already running");
  }
  const bool elected = tree.node(tree.leaf_of_rank(rank_)).elected_rank == rank_;
  monitor_ = std::make_unique<ResourceMonitor>(
      MonitorOptions{.period = parameters_.monitoring_period,
                     .probe_node = elected,
                     .monitor_memory = parameters_.monitor_memory});
  monitor_->start();
  return "";
}

void DrumRuntime::stop_monitoring() {
  if (!monitor_ || !monitor_->running()) {
    throw Error(Errc::bad_state, "DRUM monitoring is not running (DRUM_startMonitoring first)");
  }
  report_ = monitor_->stop();
  monitored_seconds_ += report_->seconds;
  if (parameters_.debug_level >= 4) print_monitor_report();
}

RankMeasures DrumRuntime::local_measures() const {
  RankMeasures mine;
  if (!report_) {  // no monitoring yet: a dedicated node, every CPU idle
    mine.idle_sum = cpus_of_rank_[rank_];
    return mine;
  }
  mine.utilization = report_->process_utilization;
  mine.idle_sum = std::accumulate(report_->cpu_idle.begin(), report_->cpu_idle.end(), 0.0);
  if (const auto c = communication_power(parameters_.communication_power, report_->interfaces)) {
    mine.communication = *c;
  }
  mine.caf = mean_caf(report_->interfaces);
  return mine;
}

void DrumRuntime::compute_powers() {
  const MachineModel& tree = model();
  await_every_rank(comm_, {CollectiveCall::drum_compute_powers, computes_++});
  // One Allgather of plain doubles carries every process's measures.
  constexpr int kMeasureCount = 4;
  static_assert(sizeof(RankMeasures) == kMeasureCount * sizeof(double));
  const RankMeasures mine = local_measures();
  std::vector<RankMeasures> all(host_of_rank_.size());
  check_mpi(PMPI_Allgather(&mine, kMeasureCount, MPI_DOUBLE, all.data(), kMeasureCount, MPI_DOUBLE,
                           comm_),
            "MPI_Allgather (DRUM measures)");
  powers_ = model_powers(tree, all, parameters_, monitored_seconds_);
  if (parameters_.debug_level >= 1 && rank_ == 0) print(stdout);
  if (parameters_.debug_level >= 2) {
    std::printf("DRUM rank %d on %s: part size %.6f\n", rank_, host_of_rank_[rank_].c_str(),
                local_part_size());
  }
}

double DrumRuntime::local_part_size() const {
  const MachineModel& tree = model();
  if (powers_.empty()) {
    throw Error(Errc::bad_state, "no DRUM powers yet (DRUM_computePowers has not been called)");
  }
  return part_sizes(tree, powers_)[rank_];
}

void DrumRuntime::print(std::FILE* out) const {
  if (out == nullptr) out = stdout;
  if (!model_) {
    std::fprintf(out, "DRUM machine model: not initialized\n");
    return;
  }
  std::fprintf(out, "DRUM machine model: %zu nodes, %zu computing, %zu ranks\n",
               model_->nodes().size(), model_->leaves().size(), host_of_rank_.size());
  print_subtree(out, model_->root());
}

void DrumRuntime::print_subtree(std::FILE* out, int number) const {
  const MachineNode& node = model_->node(number);
  std::fprintf(out, "%*s[%d] %s %s (%s) level %d leaves %d..%d", 2 * node.level + 2, "", number,
               node_type_name(node.spec.type).data(), node.spec.name.c_str(),
               node.spec.description.c_str(), node.level, node.leftmost_leaf, node.rightmost_leaf);
  if (node.spec.type == NodeType::computing) {
    std::fprintf(out, " MFLOPS %g ranks", node.spec.mflops);
    for (int rank : node.ranks) std::fprintf(out, " %d", rank);
    std::fprintf(out, " elected %d", node.elected_rank);
  } else if (node.representative >= 0) {
    std::fprintf(out, " representative %d", node.representative);
  }
  if (!powers_.empty()) std::fprintf(out, " power %.6f", powers_[number]);
  std::fprintf(out, "\n");
  for (int child : node.children) print_subtree(out, child);
}

void DrumRuntime::print_monitor_report() const {
  std::printf("DRUM rank %d monitor: %.3f s, %d samples, u %.3f, load %.2f, agent %.6f s CPU\n",
              rank_, report_->seconds, report_->samples, report_->process_utilization,
              report_->load.one_minute, report_->agent_cpu_seconds);
  for (std::size_t cpu = 0; cpu < report_->cpu_idle.size(); ++cpu) {
    std::printf("DRUM rank %d   cpu%zu idle %.3f\n", rank_, cpu, report_->cpu_idle[cpu]);
  }
  for (const InterfaceActivity& interface : report_->interfaces) {
    std::printf("DRUM rank %d   %s lambda %.0f mu %.0f octets/s capacity %.0f\n", rank_,
                interface.name.c_str(), interface.in_rate, interface.out_rate, interface.capacity);
  }
}

}  // namespace flexmpi::machine
