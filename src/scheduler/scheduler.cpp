#include "scheduler/scheduler.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Errc::invalid_argument, message);
}

}  // namespace

SchedulingPolicy parse_scheduling_policy(std::string_view name) {
  if (name == "balance_all") return SchedulingPolicy::balance_all;
  if (name == "balance_occupied") return SchedulingPolicy::balance_occupied;
  throw Error(Errc::bad_config, "FLEXMPI_SCHEDULER='" + std::string(name) +
                                    "': expected balance_all or balance_occupied");
}

std::string_view to_string(SchedulingPolicy policy) {
  return policy == SchedulingPolicy::balance_all ? "balance_all" : "balance_occupied";
}

Scheduler::Scheduler(std::vector<NodeDescription> nodes, SchedulingPolicy policy)
    : nodes_(std::move(nodes)), policy_(policy) {}

void Scheduler::set_initial_processes(const std::vector<std::string>& hosts) {
  processes_.clear();
  for (const std::string& host : hosts) processes_.push_back({host, false, 0, 0});
}

int Scheduler::node_index(std::string_view host) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].hostname == host) return static_cast<int>(i);
  }
  return -1;
}

int Scheduler::running_on(std::string_view host) const {
  return static_cast<int>(std::count_if(processes_.begin(), processes_.end(),
                                        [&](const ScheduledProcess& p) { return p.host == host; }));
}

std::string Scheduler::node_class_of(std::string_view host) const {
  const int index = node_index(host);
  return index < 0 ? std::string() : nodes_[static_cast<std::size_t>(index)].proc_type;
}

int Scheduler::dynamic_count() const {
  return static_cast<int>(std::count_if(processes_.begin(), processes_.end(),
                                        [](const ScheduledProcess& p) { return p.dynamic; }));
}

void Scheduler::check_class(std::string_view node_class) const {
  if (!has_hostfile()) {
    invalid("node class '" + std::string(node_class) +
            "' given but no hostfile describes the nodes (set FLEXMPI_HOSTFILE)");
  }
  for (const NodeDescription& node : nodes_) {
    if (node.proc_type == node_class) return;
  }
  std::set<std::string> classes;
  for (const NodeDescription& node : nodes_) classes.insert(node.proc_type);
  std::string known;
  for (const std::string& c : classes) known += (known.empty() ? "" : ", ") + c;
  invalid("node class '" + std::string(node_class) +
          "' matches no node of the hostfile (classes: " + known + ")");
}

std::vector<std::string> Scheduler::plan_spawn(int nprocs,
                                               std::span<const std::string> node_classes) const {
  if (nprocs < 1) invalid("nprocs=" + std::to_string(nprocs) + ": expected >= 1");
  if (!node_classes.empty() && node_classes.size() != static_cast<std::size_t>(nprocs)) {
    invalid("node_class: " + std::to_string(node_classes.size()) + " classes for " +
            std::to_string(nprocs) + " processes (one per process expected)");
  }
  for (const std::string& c : node_classes) check_class(c);
  if (!has_hostfile()) return std::vector<std::string>(static_cast<std::size_t>(nprocs));

  std::vector<int> running(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) running[i] = running_on(nodes_[i].hostname);
  std::vector<std::string> hosts;
  for (int n = 0; n < nprocs; ++n) {
    const std::string* wanted = node_classes.empty() ? nullptr : &node_classes[n];
    // Candidates: nodes of the class with a free processing element.
    int best = -1;
    int best_occupied = -1;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (wanted != nullptr && nodes_[i].proc_type != *wanted) continue;
      if (running[i] >= nodes_[i].processing_elements) continue;
      const int index = static_cast<int>(i);
      if (best < 0 || running[i] < running[static_cast<std::size_t>(best)]) best = index;
      if (running[i] > 0 &&
          (best_occupied < 0 || running[i] < running[static_cast<std::size_t>(best_occupied)])) {
        best_occupied = index;
      }
    }
    // balance_occupied opens an empty node only when the occupied ones are full.
    const int chosen =
        policy_ == SchedulingPolicy::balance_occupied && best_occupied >= 0 ? best_occupied : best;
    if (chosen < 0) {
      const std::string what = wanted ? "node class '" + *wanted + "'" : "the hostfile";
      int pes = 0, used = 0;
      for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (wanted != nullptr && nodes_[i].proc_type != *wanted) continue;
        pes += nodes_[i].processing_elements;
        used += running[i];
      }
      invalid(what + " has no free processing element for process " + std::to_string(n + 1) +
              " of " + std::to_string(nprocs) + " (" + std::to_string(pes) + " PEs, " +
              std::to_string(used) + " processes)");
    }
    ++running[static_cast<std::size_t>(chosen)];
    hosts.push_back(nodes_[static_cast<std::size_t>(chosen)].hostname);
  }
  return hosts;
}

void Scheduler::add_spawned(const std::vector<std::string>& hosts, bool batch) {
  const std::int64_t first_group = groups_ + 1;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const std::int64_t group = batch ? first_group : first_group + static_cast<std::int64_t>(i);
    processes_.push_back({hosts[i], true, ++spawned_, group});
    groups_ = std::max(groups_, group);
  }
}

void Scheduler::check_removable(std::span<const int> ranks) const {
  std::set<int> chosen;
  for (const int rank : ranks) {
    if (rank < 0 || rank >= static_cast<int>(processes_.size())) {
      invalid("rank " + std::to_string(rank) + " does not exist (" +
              std::to_string(processes_.size()) + " processes)");
    }
    if (!processes_[static_cast<std::size_t>(rank)].dynamic) {
      invalid("rank " + std::to_string(rank) +
              " belongs to the initial set (started by mpiexec): only spawned processes can be "
              "removed (thesis 4.3.3)");
    }
    if (!chosen.insert(rank).second) invalid("rank " + std::to_string(rank) + " is listed twice");
  }
  // A batch group shares one MPI_COMM_WORLD: all of it goes, or none.
  for (const int rank : chosen) {
    const std::int64_t group = processes_[static_cast<std::size_t>(rank)].group;
    for (std::size_t p = 0; p < processes_.size(); ++p) {
      if (processes_[p].group == group && !chosen.contains(static_cast<int>(p))) {
        invalid("rank " + std::to_string(rank) + " was spawned in one batch with rank " +
                std::to_string(p) +
                ": processes of a batch spawn (Alg. 2) can only be removed together");
      }
    }
  }
}

std::vector<int> Scheduler::plan_remove(int nprocs,
                                        std::span<const std::string> node_classes) const {
  if (nprocs < 1) invalid("nprocs=" + std::to_string(nprocs) + ": expected >= 1");
  if (!node_classes.empty() && node_classes.size() != static_cast<std::size_t>(nprocs)) {
    invalid("node_class: " + std::to_string(node_classes.size()) + " classes for " +
            std::to_string(nprocs) + " processes (one per process expected)");
  }
  const int removable = dynamic_count();
  if (nprocs > removable) {
    invalid("cannot remove " + std::to_string(nprocs) + " processes: only " +
            std::to_string(removable) +
            " were spawned, and the initial set (started by mpiexec) is never removed");
  }
  for (const std::string& c : node_classes) check_class(c);

  std::set<int> chosen;
  // The newest spawned process among `eligible` ranks not chosen yet.
  auto newest = [&](auto&& eligible) {
    int best = -1;
    for (std::size_t p = 0; p < processes_.size(); ++p) {
      const int rank = static_cast<int>(p);
      if (!processes_[p].dynamic || chosen.contains(rank) || !eligible(processes_[p])) continue;
      if (best < 0 ||
          processes_[p].spawn_order > processes_[static_cast<std::size_t>(best)].spawn_order) {
        best = rank;
      }
    }
    return best;
  };
  for (int n = 0; n < nprocs; ++n) {
    if (node_classes.empty()) {
      chosen.insert(newest([](const ScheduledProcess&) { return true; }));
      continue;
    }
    const std::string& wanted = node_classes[static_cast<std::size_t>(n)];
    // Running processes per node, without the ones already chosen.
    std::vector<int> running(nodes_.size(), 0);
    std::vector<bool> has_removable(nodes_.size(), false);
    for (std::size_t p = 0; p < processes_.size(); ++p) {
      const int index = node_index(processes_[p].host);
      if (index < 0 || chosen.contains(static_cast<int>(p))) continue;
      ++running[static_cast<std::size_t>(index)];
      if (processes_[p].dynamic) has_removable[static_cast<std::size_t>(index)] = true;
    }
    int node = -1;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].proc_type != wanted || !has_removable[i]) continue;
      const int index = static_cast<int>(i);
      const int current = node < 0 ? 0 : running[static_cast<std::size_t>(node)];
      // >= and <=: on a tie the node listed last wins.
      const bool better =
          policy_ == SchedulingPolicy::balance_all ? running[i] >= current : running[i] <= current;
      if (node < 0 || better) node = index;
    }
    if (node < 0) {
      invalid("node class '" + wanted + "' runs no spawned process left to remove (process " +
              std::to_string(n + 1) + " of " + std::to_string(nprocs) + ")");
    }
    const std::string& host = nodes_[static_cast<std::size_t>(node)].hostname;
    chosen.insert(newest([&](const ScheduledProcess& p) { return p.host == host; }));
  }
  std::vector<int> ranks(chosen.begin(), chosen.end());
  check_removable(ranks);
  return ranks;
}

std::vector<int> Scheduler::plan_reclaim() const {
  std::vector<int> ranks;
  for (const NodeDescription& node : nodes_) {
    int excess = running_on(node.hostname) - node.processing_elements;
    std::vector<int> spawned;  // on this node, newest first
    for (std::size_t p = 0; p < processes_.size(); ++p) {
      if (processes_[p].host == node.hostname && processes_[p].dynamic) {
        spawned.push_back(static_cast<int>(p));
      }
    }
    std::sort(spawned.begin(), spawned.end(), [&](int a, int b) {
      return processes_[static_cast<std::size_t>(a)].spawn_order >
             processes_[static_cast<std::size_t>(b)].spawn_order;
    });
    if (excess > static_cast<int>(spawned.size())) {
      invalid("host '" + node.hostname + "' keeps " + std::to_string(node.processing_elements) +
              " PEs for " + std::to_string(running_on(node.hostname)) +
              " processes, and only its " + std::to_string(spawned.size()) +
              " spawned ones can be removed (the initial set never is, thesis 4.3.3)");
    }
    for (int k = 0; k < excess; ++k) ranks.push_back(spawned[static_cast<std::size_t>(k)]);
  }
  std::sort(ranks.begin(), ranks.end());
  check_removable(ranks);
  return ranks;
}

void Scheduler::remove(std::span<const int> ranks) {
  std::set<int> gone(ranks.begin(), ranks.end());
  std::vector<ScheduledProcess> kept;
  for (std::size_t p = 0; p < processes_.size(); ++p) {
    if (!gone.contains(static_cast<int>(p))) kept.push_back(processes_[p]);
  }
  processes_ = std::move(kept);
}

}  // namespace flexmpi
