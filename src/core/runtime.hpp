// The runtime: the one object of flexmpi that lives from MPI_Init to
// MPI_Finalize. It only owns the components and wires them together:
//
//   Context             communicators, rank, size, log (rebound after every reconfiguration)
//   DecompositionState  rows, blocks, registered data, work units
//   Monitor             per-iteration measurements (thesis 4.2), with the emulation hook
//   AdaptationController the per-interval loop: exchange -> policy -> redistribution -> trace
//   ProcessManager      spawn and remove (thesis 4.3), through the controller's hooks
//
// The PMPI wrappers reach it as its base, InterpositionHooks
// (interposition/hooks.hpp): the profile, the monitor's MPI-call hooks, and
// the pointer to the running runtime, which is the only global state of the
// library besides the XMPI_COMM_WORLD handle the C API requires.
#pragma once

#include <mpi.h>
#include <spdlog/logger.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/context.hpp"
#include "base/row_block.hpp"
#include "config/config.hpp"
#include "core/adaptation_controller.hpp"
#include "emulation/speed_emulator.hpp"
#include "interposition/hooks.hpp"
#include "monitoring/metric.hpp"
#include "monitoring/monitor.hpp"
#include "redistribution/decomposition_state.hpp"

namespace flexmpi {

class Checkpointer;
class ProcessManager;
class UllCalibrator;

class Runtime : public InterpositionHooks {
 public:
  /// The runtime, or nullptr outside MPI_Init ... MPI_Finalize.
  static Runtime* instance() noexcept { return static_cast<Runtime*>(active_); }
  /// The runtime; throws Error(bad_state) if MPI (and flexmpi) is not initialised.
  static Runtime& get();

  /// Called by the MPI_Init wrappers after PMPI_Init (start_runtime). Every process calls
  /// it; if any fails, all of them stop with the first failure's message.
  static void start(int thread_level);
  /// Called by the MPI_Finalize wrapper before PMPI_Finalize (stop_runtime). Returns whether
  /// this process lost output (trace, report) and must exit with
  /// kOutputLostStatus after PMPI_Finalize (FLEXMPI_OUTPUT_ERRORS=fail).
  [[nodiscard]] static bool stop() noexcept;

  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime();

  [[nodiscard]] const Config& config() const { return config_; }
  [[nodiscard]] int rank() const { return context_->rank(); }
  [[nodiscard]] int size() const { return context_->size(); }
  /// Private duplicate of the world communicator for the library's own messages.
  [[nodiscard]] MPI_Comm library_comm() const { return context_->library_comm(); }
  Monitor& monitor() { return *monitor_; }
  /// This process's emulated speed; inactive at full speed.
  SpeedEmulator& emulator() { return *emulator_; }
  spdlog::logger& log() { return context_->log(); }
  Context& context() { return *context_; }
  /// The decomposition, the registered data and the work units.
  DecompositionState& state() { return *state_; }
  [[nodiscard]] const DecompositionState& state() const { return *state_; }
  AdaptationController& controller() { return *controller_; }
  /// Dynamic process management (thesis 4.3): spawn, remove, process status.
  ProcessManager& processes() { return *processes_; }
  /// The last completed sampling interval, if any.
  [[nodiscard]] const std::optional<IntervalReport>& last_interval() const {
    return controller_->last_interval();
  }

  /// Work units of this process's partition (work metric).
  void set_work(double work_units);

  /// Registered data moved from this process's old block to its new one
  /// (XMPI_Redistribute_data); collective.
  RedistributionStats redistribute(const RowBlock& old_block, const RowBlock& new_block);

  /// Checkpoint and restart of the registered data (checkpoint/).
  Checkpointer& checkpoints() { return *checkpointer_; }
  /// Ends every process after a signal's checkpoint: flexmpi stops as in
  /// MPI_Finalize, then MPI, then the process with XMPI_CHECKPOINTED_EXIT_STATUS.
  [[noreturn]] static void end_after_checkpoint() noexcept;

  /// State of the ULL calibrating API (include/ull_calibrate.h) between
  /// ULL_MPI_init_calibratelib and ULL_MPI_shutdown_calibratelib.
  std::unique_ptr<UllCalibrator>& ull_calibrator() { return ull_calibrator_; }

 private:
  // world: MPI_COMM_WORLD, or for a spawned process the communicator merged
  // with its parents.
  /// emulated_speeds: a spawned process of the emulated cluster gets the
  /// relative speed of every process from its parents (its node class's).
  Runtime(Config config, int thread_level, MPI_Comm world = MPI_COMM_WORLD,
          const std::vector<double>& emulated_speeds = {});
  /// MPI_Init of a process started by XMPI_Spawn (thesis Alg. 1).
  static void start_spawned(int thread_level);
  /// Ends this process at once (a spawned process whose spawn was undone).
  [[noreturn]] static void abandon() noexcept;
  /// Whether the profile, if one is wanted, was written whole.
  bool write_profile() noexcept;

  // Declared so that each component is destroyed before what it refers to.
  // The CommProfile is the base's, destroyed last.
  Config config_;
  double start_wall_ = 0.0;
  std::unique_ptr<Context> context_;
  std::unique_ptr<DecompositionState> state_;
  std::unique_ptr<MetricBackend> metric_;
  std::unique_ptr<SpeedEmulator> emulator_;
  std::unique_ptr<Monitor> monitor_;
  std::unique_ptr<AdaptationController> controller_;
  std::unique_ptr<ProcessManager> processes_;
  std::unique_ptr<Checkpointer> checkpointer_;
  std::unique_ptr<UllCalibrator> ull_calibrator_;
};

}  // namespace flexmpi
