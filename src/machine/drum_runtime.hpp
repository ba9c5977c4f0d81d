// One DRUM machine model at run time (thesis ch. 4, A.2): the tree, its
// parameters, this process's monitoring agent and the computed powers. The
// C API of include/flexmpi/drum.h is a thin layer over this class; it needs
// MPI only, not XMPI_Init.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "machine/drum_parameters.hpp"
#include "machine/machine_model.hpp"
#include "machine/model_powers.hpp"
#include "machine/resource_monitor.hpp"

namespace flexmpi::machine {

/// Collective over `comm`: every rank's MPI_Get_processor_name, by rank (the
/// host names DRUM matches computing nodes by).
std::vector<std::string> gather_host_names(MPI_Comm comm);

class DrumRuntime {
 public:
  /// Collective over `comm`: duplicates it (DRUM never communicates on the
  /// application's communicator) and gathers every rank's host name and CPU count.
  DrumRuntime(MPI_Comm comm, int debug_level);
  DrumRuntime(const DrumRuntime&) = delete;
  DrumRuntime& operator=(const DrumRuntime&) = delete;
  /// Stops the monitoring agent and frees the duplicated communicator.
  ~DrumRuntime();

  /// DRUM_setParam; returns a warning or "", throws Error naming a bad name or value.
  std::string set_parameter(std::string_view name, std::string_view value);
  /// DRUM_readParamFile: every "PARAM VALUE" line is set; the good lines are
  /// applied even if others are bad, then Error lists the bad ones. Returns the warnings.
  std::string read_parameter_file(const std::string& path);
  /// DRUM_setMonitoringFrequency, in tenths of a second (A.2).
  void set_monitoring_frequency_tenths(int tenths);

  /// DRUM_initMachineModel: builds and numbers the tree (flat, or from
  /// XML_TOPOLOGY_FILE) and attaches the ranks. Returns a warning when a
  /// missing XML file made it fall back to the flat model; throws Error for a
  /// malformed file or a host the file does not describe.
  std::string init();
  /// Starts this process's agent; returns a warning if USE_DYNAMIC_MONITORING=0.
  std::string start_monitoring();
  /// Stops the agent and keeps what it measured.
  void stop_monitoring();
  /// Collective: exchanges every process's measures and computes the power of
  /// every node (3.1.2). Before any monitoring, the powers come from the
  /// benchmark ratings and the CPU counts alone.
  void compute_powers();
  /// This process's share of the load: its node's power / k_n.
  [[nodiscard]] double local_part_size() const;
  /// DRUM_printMachineModel: the tree, the ranks and the powers computed.
  void print(std::FILE* out) const;

 private:
  [[nodiscard]] const MachineModel& model() const;
  [[nodiscard]] RankMeasures local_measures() const;
  void print_subtree(std::FILE* out, int node) const;
  void print_monitor_report() const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  std::int64_t computes_ = 0;  // DRUM_computePowers calls so far, for the watchdog
  std::vector<std::string> host_of_rank_;
  std::vector<int> cpus_of_rank_;
  DrumParameters parameters_;
  std::optional<MachineModel> model_;
  std::unique_ptr<ResourceMonitor> monitor_;
  std::optional<MonitorReport> report_;
  double monitored_seconds_ = 0;  ///< total over all periods, for the early form's w_dyn
  std::vector<double> powers_;    ///< by node number; empty until compute_powers
};

}  // namespace flexmpi::machine
