// The communication context of the runtime: the library's private
// communicator, the application's XMPI_COMM_WORLD, this process's rank and
// the process count, the log, and where this process runs. One object, held
// by the runtime; every component that talks to the other processes reads
// them here, and a reconfiguration changes them in one place (rebind).
#pragma once

#include <mpi.h>
#include <spdlog/logger.h>

#include <memory>
#include <string>

namespace flexmpi {

class Context {
 public:
  /// Duplicates `world` twice (the library's communicator, XMPI_COMM_WORLD),
  /// reads rank and size, finds this process's node and creates the log
  /// (spdlog level name `log_level`).
  Context(const std::string& log_level, MPI_Comm world);
  /// Frees the two communicators it holds.
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  /// Private communicator for the library's own messages.
  [[nodiscard]] MPI_Comm library_comm() const { return library_comm_; }
  spdlog::logger& log() { return *log_; }

  /// Hash of this process's node name (52 bits, exact in a double) and its
  /// core count, for the interval exchange (IntervalReport::mark_oversubscribed_nodes).
  [[nodiscard]] double host_id() const { return host_id_; }
  [[nodiscard]] double node_cores() const { return node_cores_; }

  /// After a reconfiguration: the library works on `library`, the
  /// application on `world` (XMPI_COMM_WORLD; MPI_COMM_NULL for a removed
  /// process). Rank and size are read from `library`; the log says `label`
  /// (default: the new rank). Freeing the old communicators is the caller's part.
  void rebind(MPI_Comm library, MPI_Comm world, const std::string& label = {});
  /// How many times rebind was called: changes whenever the process set does.
  [[nodiscard]] unsigned long generation() const { return generation_; }

  /// Whether the program called any flexmpi function (false: profile-only mode).
  [[nodiscard]] bool api_used() const { return api_used_; }
  void note_api_call() { api_used_ = true; }

 private:
  int rank_ = 0;
  int size_ = 1;
  MPI_Comm library_comm_ = MPI_COMM_NULL;
  std::shared_ptr<spdlog::logger> log_;
  double host_id_ = 0.0;
  double node_cores_ = 1.0;
  bool api_used_ = false;
  unsigned long generation_ = 0;
};

}  // namespace flexmpi
