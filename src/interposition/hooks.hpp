// What the PMPI wrappers of this folder reach of the runtime, and no more: the
// profile each MPI call is recorded in, the monitor told when the application
// enters and leaves MPI, and the runtime's start in MPI_Init and stop in
// MPI_Finalize. The runtime (core/runtime) is the one object of this type and
// defines start_runtime and stop_runtime, so the wrappers sit below the
// composition root they serve. The per-call path is inline: a wrapper costs
// what it cost when it called the runtime itself.
#pragma once

#include "monitoring/monitor.hpp"
#include "profiling/comm_profile.hpp"

namespace flexmpi {

class InterpositionHooks {
 public:
  /// The running runtime's hooks, or nullptr outside MPI_Init ... MPI_Finalize.
  static InterpositionHooks* active() noexcept { return active_; }

  InterpositionHooks(const InterpositionHooks&) = delete;
  InterpositionHooks& operator=(const InterpositionHooks&) = delete;

  /// The profile every wrapped MPI call is recorded in.
  CommProfile& comm_profile() noexcept { return comm_profile_; }
  /// The application enters an MPI call (Monitor::before_communication).
  void before_mpi_call() {
    if (call_monitor_ != nullptr) call_monitor_->before_communication();
  }
  /// The application's MPI call returns (Monitor::after_communication).
  void after_mpi_call() {
    if (call_monitor_ != nullptr) call_monitor_->after_communication();
  }

 protected:
  explicit InterpositionHooks(bool thread_multiple) : comm_profile_(thread_multiple) {}
  ~InterpositionHooks() = default;
  InterpositionHooks(InterpositionHooks&&) = delete;
  InterpositionHooks& operator=(InterpositionHooks&&) = delete;

  /// The running runtime: the library's one global, set and cleared by
  /// core/runtime alone (Runtime::instance() reads it).
  static inline InterpositionHooks* active_ = nullptr;
  CommProfile comm_profile_;
  /// The monitor the runtime owns, while it exists (nullptr before and after).
  Monitor* call_monitor_ = nullptr;
};

/// MPI_Init and MPI_Init_thread, after PMPI_Init succeeded: creates the
/// runtime (defined by core/runtime.cpp).
void start_runtime(int thread_level);
/// MPI_Finalize, before PMPI_Finalize: destroys the runtime; returns whether
/// this process lost output and must exit with kOutputLostStatus afterwards.
[[nodiscard]] bool stop_runtime() noexcept;

}  // namespace flexmpi
