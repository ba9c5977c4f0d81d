// Partitioner "drum": each process's share is its DRUM processing power
// (DRUM thesis 3.1.2.1), p_j = b_j (u_j + ī_n): what it computes per second
// of CPU, times the CPU it got plus the idle CPU of its node it could use,
// ī_n = min(k_n − Σ u, Σ_t i_t) / k_n over the k_n processes of node n.
//
// The thesis's b_n is a static benchmark rating (flexmpi-drum-config writes
// one into the XML model for programs that use drum.h). Inside the runtime
// the application's own rate per CPU-second stands in for it: the quantity
// the benchmark approximates, for this application and its partition size.
// u_j = Tcpu / Treal of the interval; Σ_t i_t comes from /proc/stat
// (ProcessInterval::node_idle_cpus). On a dedicated node (u = 1, no idle
// CPU) the shares are rcp's; a node with idle CPUs gets more than its
// measured speed, a shared one less.
#pragma once

#include <vector>

#include "balancing/partitioner.hpp"

namespace flexmpi {

/// p_j of every process of `input` (0 where the measurements are missing).
std::vector<double> drum_processing_powers(const PartitionInput& input);

class DrumPartitioner final : public Partitioner {
 public:
  std::string_view name() const override { return "drum"; }
  PartitionResult partition(const PartitionInput& input) override;
};

}  // namespace flexmpi
