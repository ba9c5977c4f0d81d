// The capability benchmark of the DRUM thesis (3.1.1): a LINPACK-style dense
// solve, here LAPACK's dgesv (LU with partial pivoting and the two
// triangular solves) on a well-conditioned random system.
#pragma once

#include <vector>

namespace flexmpi_drum_config {

/// Seconds of each of `repetitions` dgesv solves of order `order` (the same
/// system each time; the copy of the matrix is not timed). Throws
/// flexmpi::Error(internal) if dgesv fails or its solution is wrong.
std::vector<double> time_dense_solves(int order, int repetitions);

}  // namespace flexmpi_drum_config
