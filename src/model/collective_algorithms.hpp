// The algorithms each MPI library runs for a collective, and their costs
// (comm_model.hpp's collective_cost): Open MPI 4.1's coll/tuned fixed
// decisions (open_mpi_costs.cpp) and thesis Table 5.2 for MPICH
// (mpich_costs.cpp), with the round counts and step shapes they share.
#pragma once

#include <limits>

#include "model/comm_model.hpp"

namespace flexmpi::collectives {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline int ceil_log2(int p) {
  int rounds = 0;
  for (long long reach = 1; reach < p; reach *= 2) ++rounds;
  return rounds;
}

inline int floor_log2(int p) {
  int rounds = 0;
  while ((1LL << (rounds + 1)) <= p) ++rounds;
  return rounds;
}

inline bool power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

// Hockney terms of the common shapes.
inline CostTerms steps(double count, double m, bool reduce = false) {
  return {count, count * m, reduce ? count * m : 0.0};
}

// The algorithm Open MPI 4.1 runs for `routine` on m bytes and p processes, and its cost.
AlgorithmCost open_mpi_cost(Routine routine, double m, int p);
// The algorithm of thesis Table 5.2 (MPICH), and its cost.
AlgorithmCost mpich_cost(Routine routine, double m, int p);

}  // namespace flexmpi::collectives
