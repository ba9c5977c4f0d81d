// Checkpoint and restart (docs/guide.md, "Make your job survive preemption"):
// the component that saves the registered data, the decomposition, the
// speeds and the application's records into the checkpoint file
// (checkpoint_file.hpp) when the schedule says, and that fills them from a
// checkpoint when the job restarts, on any number of processes.
//
// Files: FLEXMPI_CHECKPOINT=FILE is written as FILE.partial and renamed to
// FILE only when complete (metadata last, every dataset checksummed); the
// FILE it replaces becomes FILE.prev. A restart reads FLEXMPI_RESTART=FILE,
// or FILE.prev when FILE is damaged, saying so.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/checkpoint_schedule.hpp"
#include "config/config.hpp"

namespace flexmpi {

class Context;
class DecompositionState;

class Checkpointer {
 public:
  /// What the checkpointer needs of the rest of the runtime.
  struct Links {
    std::function<std::vector<double>()> speeds;       ///< last measured, by rank (empty: none)
    std::function<void(const nlohmann::json&)> trace;  ///< a record for the trace (rank 0)
  };

  /// With FLEXMPI_RESTART, reads the checkpoint's metadata (falling back on
  /// FILE.prev) and plans the first decomposition from its speeds; with
  /// FLEXMPI_CHECKPOINT, checks that the file can be written there and
  /// installs the signal handlers. Collective over the context's library
  /// communicator; throws Error(bad_config / io_failure) naming the file.
  /// A process joining a running job (spawned) does neither collective: it
  /// takes its rows from the others, and the others checked the file.
  Checkpointer(const CheckpointSettings& settings, Context& context, DecompositionState& state,
               Links links, bool joining);
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  /// Whether this run restarts from a checkpoint not yet read (XMPI_Resume pending).
  [[nodiscard]] bool restart_pending() const { return restart_.has_value() && !resumed_; }
  /// XMPI_Resume on a restart: fills the registered structures and records
  /// and returns the iteration to resume from. Collective.
  std::int64_t resume();

  /// At the end of iteration `iteration` (XMPI_Eval_*): writes a checkpoint
  /// when one is due; returns true when the job must now end (a signal's
  /// checkpoint, FLEXMPI_CHECKPOINT_ON_SIGNAL=stop).
  /// A periodic checkpoint due at the loop's last iteration is not written
  /// (a restart would have nothing left to do).
  bool at_iteration_end(std::int64_t iteration, std::int64_t max_iterations);
  /// XMPI_Checkpoint: writes one now; a restart resumes at next_iteration. Collective.
  void write(std::int64_t next_iteration, std::string_view reason = "request");

 private:
  struct Restart {
    std::string path;  ///< the file read (FLEXMPI_RESTART, or its .prev)
    checkpoint::Header header;
  };
  // The header of FLEXMPI_RESTART, or of its .prev when it is damaged.
  [[nodiscard]] Restart read_restart_header() const;
  // Every rank's block for the restart, from the writers' speeds where the hosts are the same.
  [[nodiscard]] Decomposition warm_decomposition(const checkpoint::Header& header) const;
  // Fails (on every process) unless FILE can be written as FILE.partial and
  // renamed into place (util/output_file's check_output_destination).
  void check_destination() const;
  // FILE.partial -> FILE, FILE -> FILE.prev (rank 0), agreed.
  void commit_partial() const;
  void read_into_registered(const Restart& restart);
  // Makes the block partition of the registered rows the decomposition when
  // the program registered data without asking for its block.
  void use_registered_rows();

  const CheckpointSettings& settings_;
  Context& context_;
  DecompositionState& state_;
  Links links_;
  std::unique_ptr<CheckpointSchedule> schedule_;  // with FLEXMPI_CHECKPOINT
  std::optional<Restart> restart_;
  bool resumed_ = false;
};

}  // namespace flexmpi
