// From what every process measured to the power of every node of the machine
// model and each process's part size (thesis 3.1.2, ch. 4: a local exchange
// per shared-memory node, then a global one). Pure: DrumRuntime feeds it the measures
// of one MPI_Allgather; a partitioner can feed it measures carried otherwise.
#pragma once

#include <limits>
#include <vector>

#include "machine/drum_parameters.hpp"
#include "machine/machine_model.hpp"

namespace flexmpi::machine {

/// What one process contributes. The node-wide fields are read only from
/// the node's elected process.
struct RankMeasures {
  double utilization = 0;  ///< u_{n,j} of this process
  double idle_sum = 0;     ///< Σ_t i_t over the node's CPUs (elected process)
  /// c_n of the node (elected process); NaN when it could not be measured.
  double communication = std::numeric_limits<double>::quiet_NaN();
  double caf = 0;  ///< CAF_n (elected process)
};

/// The power of every node, by node number. `by_rank[r]` holds rank r's
/// measures; the ranks must be attached to `model`. `monitored_seconds` is
/// the total monitored time, for the early processing power's w_dyn. A
/// computing node on which no process runs gets no share of the load.
std::vector<double> model_powers(const MachineModel& model,
                                 const std::vector<RankMeasures>& by_rank,
                                 const DrumParameters& parameters, double monitored_seconds);

/// Each rank's part size: its node's power split evenly among the node's
/// k_n processes (3.1.2.1: the scheduler shares the node evenly). They sum to
/// the sum of the powers of the nodes with processes (1 when every node runs one).
std::vector<double> part_sizes(const MachineModel& model, const std::vector<double>& powers);

}  // namespace flexmpi::machine
