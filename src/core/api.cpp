// The C++ API (include/flexmpi/flexmpi.hpp) over the runtime.
#include <string>

#include "core/runtime.hpp"
#include "flexmpi/flexmpi.hpp"

namespace flexmpi {

Partition block_partition(int rank, int nprocs, int dsize) {
  if (nprocs < 1) {
    throw Error(Errc::invalid_argument, "nprocs=" + std::to_string(nprocs) + ": expected >= 1");
  }
  if (rank < 0 || rank >= nprocs) {
    throw Error(Errc::invalid_argument, "rank=" + std::to_string(rank) + ": expected 0 <= rank < nprocs (" +
                                            std::to_string(nprocs) + ")");
  }
  if (dsize < 0) {
    throw Error(Errc::invalid_argument, "dsize=" + std::to_string(dsize) + ": expected >= 0");
  }
  const int base = dsize / nprocs;
  const int extra = dsize % nprocs;
  return {base + (rank < extra ? 1 : 0), rank * base + std::min(rank, extra)};
}

Partition get_wsize(int rank, int nprocs, int dsize) {
  Runtime& runtime = Runtime::get();
  const Partition partition = block_partition(rank, nprocs, dsize);
  if (rank == runtime.rank() && nprocs == runtime.size()) runtime.set_work(partition.count);
  return partition;
}

void set_work(double work_units) {
  if (!(work_units >= 0.0)) {
    throw Error(Errc::invalid_argument, "work_units=" + std::to_string(work_units) + ": expected >= 0");
  }
  Runtime::get().set_work(work_units);
}

void monitor_begin(std::span<const std::string> events) { Runtime::get().begin_iteration(events); }

std::vector<long long> monitor_end() {
  Runtime& runtime = Runtime::get();
  std::vector<long long> counts(runtime.monitor().requested_event_count());
  runtime.end_iteration(counts);
  return counts;
}

void monitor_si_init() {
  Runtime& runtime = Runtime::get();
  if (runtime.monitor().iteration_open()) runtime.end_iteration({});
  runtime.begin_iteration({});
}

ProcessStatus process_status() {
  Runtime::get();
  return ProcessStatus::running;
}

IterationScope::IterationScope(std::span<const std::string> events) { monitor_begin(events); }

IterationScope::~IterationScope() {
  if (finished_) return;
  try {
    monitor_end();
  } catch (const std::exception& e) {
    if (Runtime* runtime = Runtime::instance()) runtime->log().error("ending an iteration: {}", e.what());
  }
}

std::vector<long long> IterationScope::finish() {
  finished_ = true;
  return monitor_end();
}

}  // namespace flexmpi
