// The solve phase of flexmpi-zoltan-drum: what a mesh code does between two
// rebalancings, on the rows Zoltan placed. Each step exchanges the values of
// the rows a neighbouring part needs (its halo: one message per neighbour,
// point to point, as the DRUM thesis's finite-element solvers do) while it
// computes the interior rows, then the boundary rows: x = s A x on the owned rows. A part's
// communication grows with its boundary, so with its size: the case where DRUM's communication term
// can pay (DRUM thesis 5.3, the perforated shock tube behind a slow switch).
#pragma once

#include <cstdint>

#include "row_graph.hpp"

namespace flexmpi_zoltan_drum {

struct SolveResult {
  double seconds = 0;                ///< the steps, wall time, the slowest process
  double communication_seconds = 0;  ///< this process's wait for its halo
  double computation_seconds = 0;    ///< this process's products
  long long halo_values = 0;         ///< values this process receives per step
  /// Sum over the rows of a hash of (row, x_row's bits): the same for every
  /// partition, since each row's sum runs over its columns in one order.
  std::uint64_t checksum = 0;
};

/// Collective: `steps` steps, each of one halo exchange and `products`
/// products y = s A x of the owned rows (x <- y after the last; s makes the
/// largest row sum 1, so x stays bounded). `products` sets the computation
/// per step: DRUM's test solvers compute far more per element than one
/// product. `speed` < 1 emulates a slower processing element (emulate_speed).
SolveResult solve(const RowGraph& graph, int steps, int products, double speed);

}  // namespace flexmpi_zoltan_drum
