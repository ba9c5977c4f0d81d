// Process scheduler (thesis 4.4): where a dynamic process is spawned and
// which one is removed. Pure logic, no MPI: rank 0 owns the one instance and
// broadcasts its decisions (src/process/).
//
// The nodes come from the hostfile (`hostname:procType:numPE[:cost]`, thesis
// 5.4.1); procType is the node class of XMPI_Spawn/XMPI_Remove. The
// scheduler knows every process of the application in rank order: its host,
// whether it belongs to the initial set (never removed, thesis 4.3.3) and
// when and with whom it was spawned. Two policies (FLEXMPI_SCHEDULER):
//   balance_all       spawn on the node of the class with the fewest running
//                     processes; remove from the one with the most
//                     (Figs. 4.14, 4.16): spreads the processes, to share
//                     memory, buses and network as little as possible;
//   balance_occupied  spawn on the least loaded node of the class that
//                     already runs a process of the application, opening a
//                     new node only when those are full; remove from the
//                     node with the fewest (Figs. 4.15, 4.17): uses as few
//                     nodes as possible.
// Never more processes on a node than its processing elements (numPE).
// Ties go to the node listed first in the hostfile when spawning and to the
// one listed last when removing, so that a removal undoes the last spawn.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "resources/hostfile.hpp"

namespace flexmpi {

enum class SchedulingPolicy { balance_all, balance_occupied };

/// "balance_all" or "balance_occupied"; throws Error(bad_config) otherwise.
SchedulingPolicy parse_scheduling_policy(std::string_view name);
/// The FLEXMPI_SCHEDULER name of `policy`.
[[nodiscard]] std::string_view to_string(SchedulingPolicy policy);

/// One process of the application as the scheduler sees it.
struct ScheduledProcess {
  std::string host;              ///< where it runs; may be a host the hostfile does not list
  bool dynamic = false;          ///< spawned at run time (removable), not in the initial set
  std::int64_t spawn_order = 0;  ///< grows with every spawned process; 0 for the initial set
  std::int64_t group = 0;        ///< processes of one batch spawn (Alg. 2) share it; 0: initial

  friend bool operator==(const ScheduledProcess&, const ScheduledProcess&) = default;
};

class Scheduler {
 public:
  /// nodes: the hostfile (may be empty: no hostfile, MPI places the processes).
  Scheduler(std::vector<NodeDescription> nodes, SchedulingPolicy policy);

  [[nodiscard]] bool has_hostfile() const { return !nodes_.empty(); }
  [[nodiscard]] const std::vector<NodeDescription>& nodes() const { return nodes_; }
  [[nodiscard]] SchedulingPolicy policy() const { return policy_; }

  /// The resource manager's grants changed (thesis 5.4): the nodes and their
  /// PEs now. Processes keep their hosts; a node may hold fewer PEs than it
  /// runs processes until plan_reclaim()'s ranks are removed.
  void set_nodes(std::vector<NodeDescription> nodes) { nodes_ = std::move(nodes); }
  /// Processes running on PEs that were reclaimed: per node, the newest
  /// spawned ones beyond its PEs, ascending. Throws Error(invalid_argument)
  /// if a node would have to give up a process of the initial set.
  [[nodiscard]] std::vector<int> plan_reclaim() const;

  /// Declares the initial set: one host per rank (thesis 4.3.2).
  void set_initial_processes(const std::vector<std::string>& hosts);
  /// Every process, in rank order.
  [[nodiscard]] const std::vector<ScheduledProcess>& processes() const { return processes_; }
  /// Processes running on `host`.
  [[nodiscard]] int running_on(std::string_view host) const;
  /// Node class (procType) of `host`; "" if the hostfile does not list it.
  [[nodiscard]] std::string node_class_of(std::string_view host) const;
  /// Spawned processes (the ones XMPI_Remove may remove).
  [[nodiscard]] int dynamic_count() const;

  /**
   * Hosts for `nprocs` new processes (Schedule_spawn of Alg. 1, in order).
   * node_classes: empty (any node of the hostfile) or one class per process.
   * Without a hostfile every host is "" (the MPI library places them) and a
   * node class is an error. Throws Error(invalid_argument) for an unknown
   * class or when the class has no free processing element left. Changes
   * nothing: add_spawned() records the processes once they run.
   */
  [[nodiscard]] std::vector<std::string> plan_spawn(
      int nprocs, std::span<const std::string> node_classes) const;
  /// Appends processes spawned on `hosts` (one spawn each, or one batch).
  void add_spawned(const std::vector<std::string>& hosts, bool batch);

  /**
   * Ranks of `nprocs` processes to remove (Schedule_remove of Alg. 3),
   * ascending. With node classes, one process per class, from the node the
   * policy picks. Without them, the most recently spawned ones (the thesis
   * picks at random; the newest is deterministic and undoes the last spawn).
   * Only spawned processes are candidates. Throws Error(invalid_argument)
   * if nprocs exceeds the spawned processes, a class has no spawned process
   * left, or the choice would split a batch group (its processes share one
   * MPI_COMM_WORLD and can only finalize together, thesis 4.3.2).
   */
  [[nodiscard]] std::vector<int> plan_remove(int nprocs,
                                             std::span<const std::string> node_classes) const;
  /// Checks that `ranks` may be removed (spawned, whole batch groups, in range).
  void check_removable(std::span<const int> ranks) const;
  /// Forgets the processes of `ranks`; the others keep their order.
  void remove(std::span<const int> ranks);

 private:
  // Index in nodes_ of `host`, or -1.
  [[nodiscard]] int node_index(std::string_view host) const;
  void check_class(std::string_view node_class) const;

  std::vector<NodeDescription> nodes_;
  SchedulingPolicy policy_;
  std::vector<ScheduledProcess> processes_;
  std::int64_t spawned_ = 0;  // spawn_order of the last spawned process
  std::int64_t groups_ = 0;   // last group id
};

}  // namespace flexmpi
