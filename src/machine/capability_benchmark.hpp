// The arithmetic of DRUM's capability benchmark (thesis 3.1.1): a LINPACK-style
// dense solve rates each computing node in MFLOPS, the static b_n of the
// processing power (3.1.2.1). flexmpi-drum-config runs the solve (LAPACK
// dgesv); these functions turn its times into the rating.
#pragma once

#include <vector>

namespace flexmpi::machine {

/// Floating-point operations of solving a dense system of order `order`
/// (LU factorization and the two triangular solves), as LINPACK counts them:
/// 2/3 n^3 + 2 n^2.
double linpack_operations(int order);

/// The capability rating b_n in MFLOPS: linpack_operations(order) over the
/// median of the solve times `seconds`, times the relative speed of an
/// emulated core (1 on real hardware; FLEXMPI_EMULATE_SPEED),
/// so that an emulated cluster shows its heterogeneity in the model. Throws
/// Error(invalid_argument) for an order < 1, no time, a median time <= 0, or
/// a relative speed outside (0, 1].
double capability_mflops(int order, const std::vector<double>& seconds,
                         double relative_speed = 1.0);

}  // namespace flexmpi::machine
