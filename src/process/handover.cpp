// Handing data to new processes (XMPI_Send_data, XMPI_Get_data) and moving
// the application to a new set of processing elements.
#include <algorithm>

#include "base/context.hpp"
#include "flexmpi/error.hpp"
#include "process/launch_environment.hpp"
#include "process/process_manager.hpp"
#include "redistribution/decomposition_state.hpp"
#include "util/clock.hpp"

namespace flexmpi {

using nlohmann::json;
using namespace launch;  // NOLINT(google-build-using-namespace)

int ProcessManager::apply_data(const json& plan) {
  // Records first: a newcomer that registered others fails before any row moves.
  state_.records().share(context_.library_comm(), status_ == ProcessStatus::newly_spawned);
  if (plan.contains("target")) {
    const double start = wall_seconds();
    state_.move_to(from_json(plan["target"]));
    state_.share_replicated();
    loop_.record_reconfiguration({{"action", "data_handover"},
                                  {"nprocs", context_.size()},
                                  {"redistribution_seconds", wall_seconds() - start}});
    state_.update_work({});
  }
  awaiting_data_.assign(awaiting_data_.size(), false);
  if (status_ == ProcessStatus::newly_spawned) status_ = ProcessStatus::running;
  loop_.restart_after_reconfiguration();
  return plan["iteration"].get<int>();
}

RowBlock ProcessManager::send_data(int iteration) {
  Blocker blocker = reconfiguration_blocker(false);
  if (blocker.message.empty() && status_ == ProcessStatus::newly_spawned) {
    blocker = {"this process was just spawned: it receives its data with XMPI_Get_data",
               Errc::bad_state};
  }
  if (blocker.message.empty() && !newcomers_pending()) {
    blocker = {"no spawned process waits for data: XMPI_Send_data follows XMPI_Spawn",
               Errc::bad_state};
  }
  agree(Op::data, blocker);
  ensure_process_table();
  const json plan = decide([&] {
    json p = {{"iteration", iteration}};
    if (!state_.blocks().empty())
      p["target"] = to_json(proportional_decomposition(estimated_speeds()));
    return p;
  });
  apply_data(plan);
  return state_.own_block();
}

int ProcessManager::get_data() {
  Blocker blocker = reconfiguration_blocker(false);
  if (blocker.message.empty() && status_ != ProcessStatus::newly_spawned) {
    blocker = {
        "XMPI_Get_data is for newly spawned processes; the others hand the data over "
        "with XMPI_Send_data",
        Errc::bad_state};
  }
  agree(Op::data, blocker);
  ensure_process_table();
  // Rank 0 always belongs to the initial set: it never runs this function's decision.
  const json plan = decide([]() -> json { throw Error(Errc::internal, "get_data on rank 0"); });
  return apply_data(plan);
}

// ---- moving to a new set of processing elements -------------------------------------------

RowBlock ProcessManager::reconfigure(const std::map<std::string, int>& target, int iteration,
                                     const SpawnRequest& how) {
  agree(Op::reconfigure, reconfiguration_blocker(true));
  ensure_process_table();
  std::vector<std::string> spawn_classes;
  int spawn_count = 0;
  const json plan = decide([&] {
    Scheduler& s = scheduler();
    std::vector<std::string> remove_classes;
    int remove_count = 0;
    if (target.contains("")) {
      if (target.size() != 1) {
        throw Error(
            Errc::invalid_argument,
            "target: give either a total (node class \"\") or counts per node class, not both");
      }
      const int delta = target.at("") - static_cast<int>(s.processes().size());
      spawn_count = std::max(delta, 0);
      remove_count = std::max(-delta, 0);
    } else {
      std::map<std::string, int> running;
      for (const ScheduledProcess& p : s.processes()) ++running[s.node_class_of(p.host)];
      for (const auto& [node_class, wanted] : target) {
        if (wanted < 0) {
          throw Error(Errc::invalid_argument, "target: " + std::to_string(wanted) +
                                                  " processes of class '" + node_class + "'");
        }
        const int delta = wanted - running[node_class];
        for (int k = 0; k < delta; ++k) spawn_classes.push_back(node_class);
        for (int k = 0; k < -delta; ++k) remove_classes.push_back(node_class);
      }
      spawn_count = static_cast<int>(spawn_classes.size());
      remove_count = static_cast<int>(remove_classes.size());
    }
    // Check both halves before changing anything.
    if (spawn_count > 0) {
      check_bound(static_cast<int>(s.processes().size()) - remove_count, spawn_count);
      (void)s.plan_spawn(spawn_count, spawn_classes);
    }
    json p = {{"spawn", spawn_count}, {"classes", spawn_classes}};
    if (remove_count > 0) p["removal"] = plan_removal(s.plan_remove(remove_count, remove_classes));
    return p;
  });
  if (plan.contains("removal")) {
    apply_removal(plan["removal"]);
    if (status_ == ProcessStatus::removed) return {};
  }
  spawn_count = plan["spawn"].get<int>();
  if (spawn_count == 0) return state_.own_block();
  SpawnRequest request = how;
  request.nprocs = spawn_count;
  request.node_classes = plan["classes"].get<std::vector<std::string>>();
  spawn_planned(decide([&] { return plan_spawn(request); }));
  // The new processes call get_data (XMPI_Get_data) to match this.
  return send_data(iteration);
}

}  // namespace flexmpi
