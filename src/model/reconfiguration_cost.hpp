// Reconfiguration costs of the prediction model (thesis 5.3.3, 5.3.4):
// creating and removing processes (eq. 5.6, 5.7) and redistributing the
// registered data (eq. 5.8-5.10 as the thesis's baseline, and priced from
// flexmpi's own transfer plan, which moves only the rows that change owner,
// point to point, see redistribution/data_registry.cpp).
//
// Pure arithmetic on a MachineProfile, no MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/row_block.hpp"
#include "flexmpi/flexmpi.hpp"  // Scheme
#include "model/comm_model.hpp"
#include "model/machine_profile.hpp"

namespace flexmpi {

/// Eq. 5.6: seconds to spawn `processes` (>= 0) in one operation: processes x
/// the profile's cost per process at that count (piecewise linear between the
/// measured counts, constant beyond them). Throws flexmpi::Error for < 0.
double spawn_cost(const MachineProfile& profile, int processes);

/// Eq. 5.7: seconds to remove `processes` (>= 0), as spawn_cost.
double remove_cost(const MachineProfile& profile, int processes);

/// The shape of one registered structure, as the redistribution sees it.
enum class StructureKind { vector, dense, sparse };
struct StructureShape {
  StructureKind kind = StructureKind::vector;
  Scheme scheme = Scheme::distributed;
  std::int64_t size = 0;  ///< global rows (the decomposition's size)
  std::int64_t nnz = 0;   ///< sparse only: nonzeros of the whole matrix
  std::size_t element_bytes = 8;
  std::size_t index_bytes = sizeof(int);  ///< sparse row pointers and column indices
};

/// Bytes one row of `shape` carries (dense: size elements; sparse: the
/// average row, nnz / size values and indices plus its row pointer).
double row_bytes(const StructureShape& shape);

/// Eq. 5.8-5.10 (the thesis's baseline): every structure priced with the
/// collective Algorithm 4 uses, Alltoallv for distributed data and
/// Allgatherv for replicated (and sparse: one Alltoallv for the row pointers
/// and two for indices and values), on rdata = the elements that change
/// owner, with `library`'s cost model and `network`, times lambda.
/// Throws flexmpi::Error for invalid decompositions or shapes.
double redistribution_cost_thesis(std::span<const StructureShape> structures,
                                  const Decomposition& from, const Decomposition& to,
                                  MpiLibrary library, const Hockney& network, double lambda = 1.0);

/// The price of a redistribution whose busiest process sends `messages` and
/// sends + receives `bytes` (5.3.4): the profile's redistribution latency +
/// messages x alpha + bytes x seconds per byte; 0 when nothing moves.
double redistribution_seconds(const MachineProfile& profile, std::uint64_t messages, double bytes,
                              bool across_nodes = false);

/// The prediction from flexmpi's transfer plan.
struct RedistributionEstimate {
  double seconds = 0.0;                ///< latency + busiest process's messages and bytes
  double busiest_bytes = 0.0;          ///< max over processes of bytes sent + received
  std::uint64_t busiest_messages = 0;  ///< messages sent by the busiest process
  double moved_bytes = 0.0;            ///< bytes that change owner, all processes
};

/// Redistribution priced from the plan: for each process the rows it sends
/// and receives under plan_transfers (rows it keeps do not move), summed
/// over the structures; seconds = profile.redistribution_latency + max over
/// processes of (messages x alpha + (sent + received) x seconds per byte).
/// The same bytes as rebalance_model's busiest_process_bytes. `across_nodes`
/// picks the alpha. Throws flexmpi::Error for invalid decompositions or shapes.
RedistributionEstimate redistribution_cost_planned(std::span<const StructureShape> structures,
                                                   const Decomposition& from,
                                                   const Decomposition& to,
                                                   const MachineProfile& profile,
                                                   bool across_nodes = false);

}  // namespace flexmpi
