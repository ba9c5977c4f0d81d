// When checkpoints are written (docs/reference/settings.md, FLEXMPI_CHECKPOINT*):
// every N iterations, every T seconds, or at the first iteration end after a
// scheduler's signal (SIGUSR1; SIGTERM if asked), on every process at the
// same iteration.
//
// The per-iteration path makes no collective: a count is the same everywhere,
// and time and signals are polled with one small allreduce every so many
// iterations, spaced so that polls come about every latency / 2 seconds (as
// the iterations measured between the last two polls go). A signal is thus
// acted on within about `latency` seconds, at a cost of one allreduce of
// three doubles per latency / 2 seconds.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.hpp"

namespace flexmpi {

/// FLEXMPI_CHECKPOINT_EVERY: "N" iterations or "Ts" seconds (both > 0).
/// Throws Error(invalid_argument) saying what it expected.
void parse_checkpoint_period(std::string_view text, CheckpointSettings& settings);
/// FLEXMPI_CHECKPOINT_SIGNALS: "USR1" or "USR1,TERM".
void parse_checkpoint_signals(std::string_view text, CheckpointSettings& settings);

/// Why a checkpoint is due now.
enum class CheckpointReason { none, iterations, seconds, signal };
[[nodiscard]] std::string_view reason_name(CheckpointReason reason);

class CheckpointSchedule {
 public:
  /// Installs the signal handlers (SIGUSR1, and SIGTERM if settings say so).
  explicit CheckpointSchedule(const CheckpointSettings& settings);
  /// Puts back the dispositions it replaced.
  ~CheckpointSchedule();
  CheckpointSchedule(const CheckpointSchedule&) = delete;
  CheckpointSchedule& operator=(const CheckpointSchedule&) = delete;

  /// At the end of `iteration`, the same on every process of comm. `generation`
  /// (Context::generation) changes when the process set does: that call
  /// decides nothing (new processes are still joining) and timing starts over.
  /// Collective on the polled iterations only.
  CheckpointReason at_iteration_end(std::int64_t iteration, unsigned long generation,
                                    MPI_Comm comm);
  /// A checkpoint was written: the time period starts again.
  void checkpoint_written();

 private:
  const CheckpointSettings& settings_;
  bool started_ = false;
  unsigned long generation_ = 0;
  std::int64_t next_poll_ = 0;
  std::int64_t last_poll_iteration_ = 0;
  double last_poll_time_ = 0.0;
  double last_checkpoint_time_ = 0.0;
};

}  // namespace flexmpi
