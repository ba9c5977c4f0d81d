// flexmpi/flexmpi.hpp - the C++ API of flexmpi (namespace flexmpi).
//
// The C API of flexmpi.h is written on these functions. They report failures
// as flexmpi::Error (see error.hpp) carrying the XMPI_ERR_* code.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "flexmpi/error.hpp"

namespace flexmpi {

/// count rows starting at global row displ.
struct Partition {
  int count = 0;
  int displ = 0;
};

/// The block partition of dsize rows over nprocs processes: the first
/// dsize % nprocs ranks get one row more. Throws Error(invalid_argument).
Partition block_partition(int rank, int nprocs, int dsize);

/// The partition `rank` owns now (the block partition until the balancer
/// moves data). For the calling process it also sets its work to count rows.
Partition get_wsize(int rank, int nprocs, int dsize);

/// Declares the work units of this process's partition (work metric).
void set_work(double work_units);

/// Opens a monitored iteration; `events` are names whose counts monitor_end returns.
void monitor_begin(std::span<const std::string> events = {});
/// Closes it and returns one count per event of monitor_begin.
std::vector<long long> monitor_end();
/// High-level form: closes the open iteration, if any, and opens the next one.
void monitor_si_init();

enum class ProcessStatus { running = 0, newly_spawned = 1, removed = 2 };
ProcessStatus process_status();

/// RAII monitoring of one iteration: begins on construction, ends on finish()
/// or, if finish() was not called, on destruction (errors then only logged).
class IterationScope {
 public:
  explicit IterationScope(std::span<const std::string> events = {});
  IterationScope(const IterationScope&) = delete;
  IterationScope& operator=(const IterationScope&) = delete;
  ~IterationScope();
  /// Ends the iteration and returns the counts of the requested events.
  std::vector<long long> finish();

 private:
  bool finished_ = false;
};

}  // namespace flexmpi
