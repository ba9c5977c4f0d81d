// The C++ API's checkpoint, restart and monitoring calls (include/flexmpi/flexmpi.hpp).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "checkpoint/checkpointer.hpp"
#include "core/api_support.hpp"
#include "core/runtime.hpp"
#include "flexmpi/flexmpi.hpp"
#include "process/process_manager.hpp"
#include "util/collective_watchdog.hpp"

namespace flexmpi {

int resume() {
  Runtime& runtime = member_runtime();
  runtime.context().note_api_call();
  if (runtime.processes().status() == ProcessStatus::newly_spawned) return get_data();
  if (runtime.checkpoints().restart_pending()) {
    await_every_rank(runtime.context().library_comm(),
                     {CollectiveCall::resume, runtime.controller().iterations_monitored()});
  }
  const std::int64_t iteration = runtime.checkpoints().resume();
  if (iteration > std::numeric_limits<int>::max()) {
    throw Error(Errc::io_failure, "the checkpoint's iteration " + std::to_string(iteration) +
                                      " does not fit XMPI_Resume's int");
  }
  return static_cast<int>(iteration);
}

void write_checkpoint(int next_iteration) {
  Runtime& runtime = member_runtime();
  runtime.context().note_api_call();
  await_same_iteration(runtime.context().library_comm(),
                       {CollectiveCall::checkpoint, next_iteration}, "next_it",
                       "the iteration a restart resumes at");
  runtime.checkpoints().write(next_iteration);
}

void register_record(const std::string& name, void* buffer, std::int64_t count, MPI_Datatype type) {
  Runtime& runtime = member_runtime();
  runtime.context().note_api_call();
  runtime.state().records().add(name, buffer, count, type);
}

void set_work(double work_units) {
  if (!(work_units >= 0.0) || !std::isfinite(work_units)) {
    throw Error(Errc::invalid_argument,
                fmt::format("work_units={}: expected a finite number >= 0", work_units));
  }
  member_runtime().set_work(work_units);
}

void monitor_begin(std::span<const std::string> events) {
  member_runtime().controller().begin_iteration(events, false);
}

std::vector<long long> monitor_end() {
  Runtime& runtime = member_runtime();
  std::vector<long long> counts(runtime.monitor().requested_event_count());
  runtime.controller().end_iteration(counts);
  return counts;
}

void monitor_si_init() {
  Runtime& runtime = member_runtime();
  if (runtime.monitor().iteration_open()) runtime.controller().end_iteration({});
  runtime.controller().begin_iteration({}, /*closed_by_evaluate=*/true);
}

MonitorTotals monitor_totals() {
  const ProcessInterval& totals = Runtime::get().monitor().totals();
  return {totals.iterations, totals.wall, totals.cpu, totals.mpi, totals.computation()};
}

ProcessStatus process_status() { return Runtime::get().processes().status(); }

IterationScope::IterationScope(std::span<const std::string> events) { monitor_begin(events); }

IterationScope::~IterationScope() {
  if (finished_) return;
  try {
    monitor_end();
  } catch (const std::exception& e) {
    if (Runtime* runtime = Runtime::instance())
      runtime->log().error("ending an iteration: {}", e.what());
  }
}

std::vector<long long> IterationScope::finish() {
  finished_ = true;
  return monitor_end();
}

}  // namespace flexmpi
