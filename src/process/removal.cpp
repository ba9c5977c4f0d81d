// Removing processes (Alg. 3).
#include <algorithm>
#include <set>
#include <utility>

#include "balancing/partitioner.hpp"
#include "base/context.hpp"
#include "base/mpi_check.hpp"
#include "flexmpi.h"
#include "flexmpi/error.hpp"
#include "process/launch_environment.hpp"
#include "process/process_manager.hpp"
#include "redistribution/decomposition_state.hpp"
#include "util/clock.hpp"

namespace flexmpi {

using nlohmann::json;
using namespace launch;  // NOLINT(google-build-using-namespace)

json ProcessManager::plan_removal(const std::vector<int>& ranks) {
  scheduler().check_removable(ranks);
  json plan = {{"victims", ranks}};
  if (!state_.blocks().empty()) {
    // The rows of the removed processes go to the others in proportion to
    // their power (under the workload model); the removed ones keep none
    // (not even the minimum of one row).
    const std::vector<double> speeds = estimated_speeds();
    const std::set<int> gone(ranks.begin(), ranks.end());
    std::vector<double> shares;
    for (std::size_t p = 0; p < speeds.size(); ++p) {
      if (!gone.contains(static_cast<int>(p))) shares.push_back(speeds[p]);
    }
    const std::vector<std::int64_t> kept =
        split_rows(state_.global_rows(), state_.latest_row_work(), shares);
    std::vector<std::int64_t> counts;
    for (std::size_t p = 0, k = 0; p < speeds.size(); ++p) {
      counts.push_back(gone.contains(static_cast<int>(p)) ? 0 : kept[k++]);
    }
    plan["target"] = to_json(blocks_from_counts(counts));
  }
  return plan;
}

void ProcessManager::remove(int nprocs, std::span<const std::string> node_classes) {
  agree(Op::remove, reconfiguration_blocker(true));
  ensure_process_table();
  const std::vector<std::string> classes(node_classes.begin(), node_classes.end());
  const json plan = decide([&] { return plan_removal(scheduler().plan_remove(nprocs, classes)); });
  apply_removal(plan);
}

void ProcessManager::remove_ranks(std::span<const int> ranks) {
  agree(Op::remove, reconfiguration_blocker(true));
  ensure_process_table();
  std::vector<int> sorted(ranks.begin(), ranks.end());
  const json plan = decide([&] {
    if (sorted.empty()) throw Error(Errc::invalid_argument, "no rank to remove");
    scheduler().check_removable(sorted);  // before sorting: reports duplicates
    std::sort(sorted.begin(), sorted.end());
    return plan_removal(sorted);
  });
  apply_removal(plan);
}

void ProcessManager::remove_reclaimed() {
  agree(Op::remove, reconfiguration_blocker(true));
  ensure_process_table();
  apply_removal(decide([&] { return plan_removal(scheduler().plan_reclaim()); }));
}

void ProcessManager::apply_removal(const json& plan) {
  const double start = wall_seconds();
  const int before = context_.size();
  const std::vector<int> victims = plan["victims"].get<std::vector<int>>();
  const std::set<int> gone(victims.begin(), victims.end());
  const bool leaving = gone.contains(context_.rank());
  // Their data first: if it fails, nothing else has changed.
  double data_seconds = 0.0;
  if (plan.contains("target")) {
    state_.move_to(from_json(plan["target"]));
    // Timed when every process has its rows, so that rank 0's clock
    // separates the data (5.3.4) from the removal (eq. 5.7).
    check_mpi(PMPI_Barrier(context_.library_comm()), "MPI_Barrier (removal)");
    data_seconds = wall_seconds() - start;
  }
  // Alg. 3 lines 8-12: a communicator without them.
  MPI_Comm library = MPI_COMM_NULL, world = MPI_COMM_NULL;
  check_mpi(PMPI_Comm_split(context_.library_comm(), leaving ? MPI_UNDEFINED : 0, context_.rank(),
                            &library),
            "MPI_Comm_split (remove)");
  if (!leaving) {
    check_mpi(PMPI_Comm_dup(library, &world), "MPI_Comm_dup (remove)");
    set_error_handlers(library, world, XMPI_COMM_WORLD);
  }
  // The context takes the new communicators before the old ones are freed,
  // so that it never holds a freed handle.
  MPI_Comm old_library = context_.library_comm(), old_world = XMPI_COMM_WORLD;
  if (leaving) {
    become_removed();
  } else {
    context_.rebind(library, world);
  }
  free_comm(old_library);
  free_comm(old_world);
  if (leaving) return;
  Decomposition blocks;
  std::vector<bool> awaiting;
  for (std::size_t p = 0; p < awaiting_data_.size(); ++p) {
    if (gone.contains(static_cast<int>(p))) continue;
    if (!state_.blocks().empty()) blocks.push_back(state_.blocks()[p]);
    awaiting.push_back(awaiting_data_[p]);
  }
  state_.assign(state_.global_rows(), std::move(blocks));
  awaiting_data_ = std::move(awaiting);
  if (context_.rank() == 0) {
    scheduler().remove(victims);
    submit_allocation();
    std::vector<double> speeds;
    for (std::size_t p = 0; p < known_speed_.size(); ++p) {
      if (!gone.contains(static_cast<int>(p))) speeds.push_back(known_speed_[p]);
    }
    known_speed_ = std::move(speeds);
  }
  state_.update_work({});
  loop_.restart_after_reconfiguration();
  loop_.record_reconfiguration(
      {{"action", "remove"},
       {"nprocs_before", before},
       {"nprocs", context_.size()},
       {"removed_ranks", victims},
       {"seconds", wall_seconds() - start - data_seconds},
       {"resource_manager_seconds", std::exchange(resource_manager_seconds_, 0.0)},
       {"redistribution_seconds", data_seconds}});
}

void ProcessManager::become_removed() {
  // A communicator of its own, so that MPI_Finalize (and the runtime's last
  // collective, the profile) waits for nobody. Rank 0 of the application
  // writes the profile; this process (rank 0 of its own communicator now)
  // does not (the runtime asks status()).
  MPI_Comm alone = MPI_COMM_NULL;
  check_mpi(PMPI_Comm_dup(MPI_COMM_SELF, &alone), "MPI_Comm_dup (removed)");
  context_.rebind(alone, MPI_COMM_NULL, "removed");
  context_.note_api_call();
  status_ = ProcessStatus::removed;
  state_.clear();
  awaiting_data_.assign(1, false);
  loop_.restart_after_reconfiguration();
}

}  // namespace flexmpi
