// ProcessManager's view of the resources (rank 0): the process table, the
// scheduler and resource manager, the bound on the processes, the speeds the
// rows are shared by.
#include <sched.h>

#include <algorithm>
#include <map>
#include <thread>
#include <utility>

#include "balancing/partitioner.hpp"
#include "base/context.hpp"
#include "base/mpi_check.hpp"
#include "config/config.hpp"
#include "flexmpi/error.hpp"
#include "process/launch_environment.hpp"
#include "process/process_manager.hpp"
#include "redistribution/decomposition_state.hpp"
#include "resources/hostfile.hpp"
#include "resources/node_classes.hpp"
#include "util/clock.hpp"

namespace flexmpi {

using nlohmann::json;
using namespace launch;  // NOLINT(google-build-using-namespace)

namespace {

// The cores this process may run on (its affinity mask: a batch system's
// cgroup or taskset may give fewer than the machine has).
int usable_cores() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0) return CPU_COUNT(&cpus);
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

// MPI_UNIVERSE_SIZE: the slots mpiexec gave the job, if the MPI library says.
std::optional<int> universe_size() {
  int* value = nullptr;
  int flag = 0;
  if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &value, &flag) != MPI_SUCCESS ||
      flag == 0 || value == nullptr) {
    return std::nullopt;
  }
  return *value;
}

}  // namespace

// ---- the process table and the resources -------------------------------------------

void ProcessManager::ensure_process_table() {
  if (table_ready_) return;
  // Before the first reconfiguration every process belongs to the initial set.
  std::string name = processor_name();
  name.resize(MPI_MAX_PROCESSOR_NAME, '\0');
  std::vector<char> all(context_.rank() == 0
                            ? static_cast<std::size_t>(context_.size()) * MPI_MAX_PROCESSOR_NAME
                            : 0);
  check_mpi(PMPI_Gather(name.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(),
                        MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, context_.library_comm()),
            "MPI_Gather (hosts)");
  if (context_.rank() == 0) {
    if (config_.emulate_cluster) {
      initial_hosts_ = place_initial_processes(config_.hosts, context_.size());
    } else {
      for (int p = 0; p < context_.size(); ++p) {
        initial_hosts_.emplace_back(all.data() +
                                    static_cast<std::size_t>(p) * MPI_MAX_PROCESSOR_NAME);
      }
    }
    known_speed_.assign(static_cast<std::size_t>(context_.size()), 0.0);
  }
  table_ready_ = true;
}

Scheduler& ProcessManager::scheduler() {
  if (!scheduler_) {
    resources_ = make_resource_manager(config_.resources, config_.hosts, initial_hosts_,
                                       config_.strategy_settings);
    initial_hosts_ = resources_->place_initial_processes(std::move(initial_hosts_));
    scheduler_ = std::make_unique<Scheduler>(resources_->status(0).nodes, config_.scheduler);
    scheduler_->set_initial_processes(initial_hosts_);
    bound_ = process_bound(
        {config_.max_procs,
         !config_.hosts.empty() || find_resource_manager(config_.resources).grants_bound_processes,
         universe_size(), usable_cores(), static_cast<int>(initial_hosts_.size())});
  }
  return *scheduler_;
}

ResourceView ProcessManager::describe_resources() {
  Scheduler& s = scheduler();
  std::map<std::string, NodeClassStatus> classes;
  for (const NodeDescription& node : s.nodes()) {
    NodeClassStatus& c = classes[node.proc_type];
    c.name = node.proc_type;
    c.granted_pes += node.processing_elements;
    if (node.cost) {
      c.cost = *node.cost;
    } else if (const auto described = find_node_class(config_.node_classes, node.proc_type);
               described && c.cost == 0.0) {
      // No cost on the host's line: its class's, from FLEXMPI_NODE_CLASSES.
      c.cost = described->cost_per_hour;
    }
  }
  ResourceView view;
  view.bound = bound_;
  for (const ScheduledProcess& p : s.processes()) {
    const auto c = classes.find(s.node_class_of(p.host));
    view.process_classes.push_back(c == classes.end() ? std::string() : c->first);
    if (c == classes.end()) continue;  // a host no node describes
    ++c->second.running;
    if (p.dynamic) ++c->second.removable;
  }
  for (auto& [name, c] : classes) view.classes.push_back(std::move(c));
  try {
    view.reclaimed = static_cast<int>(s.plan_reclaim().size());
  } catch (const Error& e) {
    view.unmet_reclaim = e.what();
  }
  return view;
}

ResourceView ProcessManager::resource_view(long long iteration) {
  ensure_process_table();
  return decide([&] {
           Scheduler& s = scheduler();  // creates resources_ at the first call
           SystemStatus status = resources_->status(iteration);
           if (!status.warning.empty()) context_.log().warn("resources: {}", status.warning);
           s.set_nodes(std::move(status.nodes));
           ResourceView view = describe_resources();
           warn_if_beyond_bound(view.granted_pes());
           return json(view);
         })
      .get<ResourceView>();
}

void ProcessManager::warn_if_beyond_bound(int granted_pes) {
  // Once per change of the grants: a policy grows up to the bound only
  // (after a failed spawn, that failure was the message).
  if (bound_.allows(granted_pes) || granted_pes == warned_granted_pes_ || !spawn_failure_.empty()) {
    return;
  }
  warned_granted_pes_ = granted_pes;
  context_.log().warn("resources: {} PEs granted ({}), but the job grows no further than {}",
                      granted_pes, resources_->name(), bound_.describe());
}

void ProcessManager::check_bound(int running, int spawning) const {
  if (!spawn_failure_.empty()) {
    throw Error(Errc::mpi_failure, "spawning " + std::to_string(spawning) +
                                       " process(es): no more spawns in this job, after " +
                                       spawn_failure_);
  }
  // In 64 bits: XMPI_Spawn's nprocs is any int, and INT_MAX more must not wrap.
  const long long total = static_cast<long long>(running) + spawning;
  if (bound_.allows(total)) return;
  throw Error(Errc::invalid_argument, "spawning " + std::to_string(spawning) +
                                          " process(es) would make " + std::to_string(total) +
                                          ", over " + bound_.describe());
}

double ProcessManager::emulated_speed(const std::string& host) {
  return relative_speed(config_.node_classes, scheduler().node_class_of(host));
}

void ProcessManager::submit_allocation(std::span<const std::string> planned) {
  const double start = wall_seconds();
  std::map<std::string, int> per_host;
  for (const ScheduledProcess& p : scheduler().processes()) ++per_host[p.host];
  for (const std::string& host : planned) {
    if (!host.empty()) ++per_host[host];
  }
  resources_->submit_allocation(per_host);
  resource_manager_seconds_ += wall_seconds() - start;
}

// ---- speeds and decompositions (rank 0) ------------------------------------------

void ProcessManager::refresh_known_speeds() {
  // Speeds measured since the last reconfiguration replace what was known.
  const std::vector<double> speeds = loop_.fresh_speeds();
  if (speeds.empty()) return;
  known_speed_.resize(speeds.size(), 0.0);
  for (std::size_t p = 0; p < speeds.size(); ++p) known_speed_[p] = std::max(0.0, speeds[p]);
}

std::vector<double> ProcessManager::estimated_speeds() {
  refresh_known_speeds();
  known_speed_.resize(static_cast<std::size_t>(context_.size()), 0.0);
  // A process never measured is assumed as fast as the measured ones of its
  // node class, else as the average measured one (thesis 5.2.1); with no
  // measurement at all every process counts the same.
  Scheduler& s = scheduler();
  std::map<std::string, std::pair<double, int>> per_class;
  double sum = 0.0;
  int known = 0;
  for (std::size_t p = 0; p < known_speed_.size(); ++p) {
    if (known_speed_[p] <= 0.0) continue;
    auto& entry = per_class[s.node_class_of(s.processes()[p].host)];
    entry.first += known_speed_[p];
    ++entry.second;
    sum += known_speed_[p];
    ++known;
  }
  std::vector<double> speeds(known_speed_.size(), 1.0);
  if (known == 0) return speeds;
  for (std::size_t p = 0; p < speeds.size(); ++p) {
    if (known_speed_[p] > 0.0) {
      speeds[p] = known_speed_[p];
      continue;
    }
    const auto entry = per_class.find(s.node_class_of(s.processes()[p].host));
    speeds[p] = entry != per_class.end() && entry->second.second > 0
                    ? entry->second.first / entry->second.second
                    : sum / known;
  }
  return speeds;
}

Decomposition ProcessManager::proportional_decomposition(const std::vector<double>& shares) const {
  return blocks_from_counts(split_rows(state_.global_rows(), state_.latest_row_work(), shares));
}

}  // namespace flexmpi
