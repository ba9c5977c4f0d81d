// Open MPI 4.1 coll/tuned: which algorithm a collective runs and what it costs
// (notation and the MPICH table: mpich_costs.cpp).
//
// Open MPI 4.1 coll/tuned (commutative operations; the decision tables are in
// open_mpi_algorithm below, the costs of its algorithms here; segment sizes
// are 0 in the fixed rules, so nothing is pipelined):
//   Bcast      basic_linear, chain, pipeline  (p-1)(alpha + m beta)
//              split_binary_tree              (L+1)(alpha + m/2 beta)
//              binary_tree                    2 floor(log2 p)(alpha + m beta) (p = 2: 1 step)
//              binomial                       L (alpha + m beta)
//              knomial (radix 4)              ceil(log4 p) min(3, p-1)(alpha + m beta)
//              scatter_allgather(_ring)       (L + p - 1) alpha + 2 (p-1)/p m beta
//   Reduce     linear, chain, pipeline        (p-1)(alpha + m beta + m gamma)
//              binary, in_order_binary        as binary_tree, with gamma
//              binomial                       L (alpha + m beta + m gamma)
//              rabenseifner                   2 L alpha + 2 (p-1)/p m beta + (p-1)/p m gamma
//   Allreduce  basic_linear                   2 (p-1)(alpha + m beta) + (p-1) m gamma
//              nonoverlapping                 binomial reduce + binomial bcast
//              recursive_doubling             R (alpha + m beta + m gamma), R = floor(log2 p)
//                                             + 2 when p is not a power of two
//              ring, segmented_ring           2 (p-1) alpha + 2 (p-1)/p m beta + (p-1)/p m gamma
//              rabenseifner                   as Reduce
//   Alltoall   linear, linear_sync            (p-1) alpha + (p-1) m beta
//              pairwise                       (p-1)(alpha + m beta)
//              modified_bruck                 L alpha + p m / 2 L beta
//              two_proc                       alpha + m beta
//   Alltoallv  basic_linear, pairwise         (p-1) alpha + n beta
//   Allgather  linear (gather + bcast)        (p-1)(alpha + m beta) + (p-1)(alpha + p m beta)
//   (and v)    bruck, recursive_doubling      L alpha + (p-1) m beta
//              ring                           (p-1)(alpha + m beta)
//              neighbor (even p; ring if odd) p/2 alpha + (p-1) m beta
//              two_proc                       alpha + m beta
//              default (allgatherv: gatherv + bcast)  (p-1)(alpha + m beta) + L (alpha + p m beta)
//   Gather     basic_linear                   (p-1)(alpha + m beta)
//              binomial                       L alpha + (p-1) m beta
//              linear_sync                    2 (p-1) alpha + (p-1) m beta
//   Scatter    basic_linear, linear_nb        (p-1)(alpha + m beta)
//              binomial                       L alpha + (p-1) m beta
//   Barrier    linear 2 (p-1) alpha; recursive_doubling, bruck, tree L alpha
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <utility>

#include "flexmpi/error.hpp"
#include "model/collective_algorithms.hpp"
#include "model/comm_model.hpp"

namespace flexmpi::collectives {
namespace {

// ---- Open MPI 4.1 coll/tuned fixed decisions ------------------------------
// One band: the algorithm used while the size is below `below`.
struct Band {
  double below;
  int algorithm;
};

int pick(double bytes, std::span<const Band> bands) {
  for (const Band& band : bands) {
    if (bytes < band.below) return band.algorithm;
  }
  return bands.back().algorithm;
}

int pick(double bytes, std::initializer_list<Band> bands) {
  return pick(bytes, std::span<const Band>(bands.begin(), bands.size()));
}

// Transcribed from coll_tuned_decision_fixed.c (Open MPI v4.1.x), rows for
// communicator sizes < 64; the commutative-operation branches (MPI_SUM & co).
// The numbers are Open MPI's algorithm ids; the comments name them.

// 1 basic_linear 2 chain 3 pipeline 4 split_binary_tree 5 binary_tree
// 6 binomial 7 knomial 8 scatter_allgather
int bcast_algorithm(double m, int p) {
  if (p < 4) {
    constexpr Band kBands[] = {{32, 3},     {256, 5},    {512, 3},    {1024, 7},    {32768, 1},
                               {131072, 5}, {262144, 2}, {524288, 1}, {1048576, 6}, {kInf, 5}};
    return pick(m, kBands);
  }
  if (p < 8) {
    return pick(m, {{64, 5}, {128, 6}, {2048, 5}, {8192, 6}, {1048576, 1}, {kInf, 2}});
  }
  if (p < 16) {
    return pick(m, {{8, 7}, {64, 5}, {4096, 7}, {16384, 5}, {32768, 6}, {kInf, 1}});
  }
  if (p < 32) return pick(m, {{4096, 7}, {1048576, 6}, {kInf, 8}});
  return pick(m, {{2048, 6}, {kInf, 7}});
}

// 1 linear 2 chain 3 pipeline 4 binary 5 binomial 6 in-order_binary 7 rabenseifner
int reduce_algorithm(double m, int p) {
  if (p < 4) {
    return pick(m, {{8, 7}, {16, 4}, {32, 3}, {262144, 1}, {524288, 3}, {1048576, 2}, {kInf, 3}});
  }
  if (p < 8) {
    return pick(m, {{4096, 4}, {65536, 2}, {262144, 5}, {524288, 1}, {1048576, 5}, {kInf, 1}});
  }
  if (p < 16) return pick(m, {{8192, 4}, {kInf, 5}});
  if (p < 32) return pick(m, {{4096, 4}, {kInf, 5}});
  return 5;
}

// 1 basic_linear 2 nonoverlapping 3 recursive_doubling 4 ring 5 segmented_ring
// 6 rabenseifner
int allreduce_algorithm(double m, int p) {
  if (p < 4) {
    return pick(m, {{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}, {kInf, 6}});
  }
  if (p < 8) return pick(m, {{16, 4}, {8192, 3}, {kInf, 6}});
  if (p < 16) return pick(m, {{8192, 3}, {kInf, 6}});
  if (p < 32) return pick(m, {{64, 5}, {4096, 3}, {kInf, 6}});
  return pick(m, {{128, 5}, {kInf, 6}});
}

// 1 linear 2 pairwise 3 modified_bruck 4 linear_sync 5 two_proc
int alltoall_algorithm(double m, int p) {
  if (p == 2) {
    constexpr Band kBands[] = {{2, 2},    {4, 5},     {16, 2},     {64, 5},      {256, 2},
                               {4096, 5}, {32768, 2}, {262144, 4}, {1048576, 5}, {kInf, 2}};
    return pick(m, kBands);
  }
  if (p < 8) {
    return pick(m, {{8192, 4}, {16384, 1}, {65536, 4}, {524288, 1}, {1048576, 2}, {kInf, 1}});
  }
  if (p < 16) return pick(m, {{262144, 4}, {kInf, 1}});
  if (p < 32) {
    return pick(m, {{4, 4}, {512, 3}, {8192, 4}, {32768, 1}, {262144, 4}, {524288, 1}, {kInf, 4}});
  }
  return pick(m, {{512, 3}, {524288, 1}, {kInf, 4}});
}

int open_mpi_algorithm(Routine routine, double m, int p) {
  switch (routine) {
    case Routine::bcast:
      return bcast_algorithm(m, p);
    case Routine::reduce:
      return reduce_algorithm(m, p);
    case Routine::allreduce:
      return allreduce_algorithm(m, p);
    case Routine::alltoall:
      return alltoall_algorithm(m, p);
    case Routine::alltoallv:  // 1 basic_linear 2 pairwise; by communicator size only
      if (p < 4) return 2;
      if (p < 64) return 1;
      if (p < 128) return 2;
      if (p < 256) return 1;
      if (p < 1024) return 2;
      return 1;
    case Routine::allgather:  // 1 linear 2 bruck 3 recursive_doubling 4 ring 5 neighbor 6 two_proc
      if (p == 2) return 6;
      if (p < 32) return 3;
      return pick(m, {{1024, 3}, {65536, 5}, {kInf, 4}});
    case Routine::allgatherv:  // 1 default 2 bruck 3 ring 4 neighbor 5 two_proc
      if (p == 2) return pick(m, {{2048, 3}, {4096, 5}, {8192, 3}, {kInf, 5}});
      if (p < 8) {
        return pick(m, {{256, 1}, {4096, 4}, {8192, 3}, {16384, 4}, {262144, 2}, {kInf, 4}});
      }
      if (p < 16) return pick(m, {{1024, 1}, {kInf, 2}});
      if (p < 32) return pick(m, {{128, 1}, {262144, 2}, {kInf, 3}});
      return pick(m, {{256, 1}, {8192, 2}, {kInf, 3}});
    case Routine::gather:  // 1 basic_linear 2 binomial 3 linear_sync
      if (p < 4) {
        return pick(m, {{2, 3}, {4, 1}, {32768, 2}, {65536, 1}, {131072, 2}, {kInf, 3}});
      }
      if (p < 8) return pick(m, {{1024, 2}, {8192, 1}, {32768, 2}, {262144, 1}, {kInf, 3}});
      return 2;
    case Routine::scatter:  // 1 basic_linear 2 binomial 3 linear_nb
      if (p < 4) return pick(m, {{2, 3}, {131072, 1}, {262144, 3}, {kInf, 1}});
      if (p < 8) {
        return pick(m, {{2048, 2}, {4096, 1}, {8192, 2}, {32768, 1}, {1048576, 3}, {kInf, 1}});
      }
      if (p < 16) return pick(m, {{16384, 2}, {1048576, 3}, {kInf, 1}});
      if (p < 32) return pick(m, {{16384, 2}, {32768, 1}, {kInf, 3}});
      return 2;             // row for 32+ processes not transcribed: binomial
    case Routine::barrier:  // 1 linear 3 recursive_doubling 4 bruck 6 tree
      if (p < 4) return 3;
      if (p < 8) return 1;
      if (p < 64) return 3;
      if (p < 256) return 4;
      return 6;
    case Routine::send_recv:
      return 0;
  }
  return 0;
}

// The quantities the cost formulas share: message size m, processes p,
// q = p - 1, L = ceil(log2 p), and the steps of a binary tree.
struct Shape {
  Shape(double bytes, int processes)
      : m(bytes),
        p(processes),
        q(processes - 1),
        L(ceil_log2(processes)),
        tree(processes == 2 ? 1.0 : 2.0 * floor_log2(processes)) {}
  double m;
  int p;
  double q, L, tree;
};

AlgorithmCost bcast_cost(int algorithm, const Shape& shape) {
  const auto& [m, p, q, L, tree] = shape;
  switch (algorithm) {
    case 1:
      return {"basic_linear", steps(q, m)};
    case 2:
      return {"chain", steps(q, m)};
    case 3:
      return {"pipeline", steps(q, m)};
    case 4:
      return {"split_binary_tree", steps(L + 1, m / 2)};
    case 5:
      return {"binary_tree", steps(tree, m)};
    case 6:
      return {"binomial", steps(L, m)};
    case 7:
      return {"knomial",
              steps(std::ceil(std::log(p) / std::log(4.0) - 1e-12) * std::min(3.0, q), m)};
    default:
      return {"scatter_allgather", {L + q, 2 * q / p * m, 0}};
  }
}

AlgorithmCost reduce_cost(int algorithm, const Shape& shape) {
  const auto& [m, p, q, L, tree] = shape;
  switch (algorithm) {
    case 1:
      return {"linear", steps(q, m, true)};
    case 2:
      return {"chain", steps(q, m, true)};
    case 3:
      return {"pipeline", steps(q, m, true)};
    case 4:
      return {"binary", steps(tree, m, true)};
    case 5:
      return {"binomial", steps(L, m, true)};
    case 6:
      return {"in_order_binary", steps(tree, m, true)};
    default:
      return {"rabenseifner", {2 * L, 2 * q / p * m, q / p * m}};
  }
}

AlgorithmCost allreduce_cost(int algorithm, const Shape& shape) {
  const auto& [m, p, q, L, tree] = shape;
  switch (algorithm) {
    case 1:
      return {"basic_linear", {2 * q, 2 * q * m, q * m}};
    case 2:
      return {"nonoverlapping", {2 * L, 2 * L * m, L * m}};
    case 3: {
      const double rounds = floor_log2(p) + (power_of_two(p) ? 0 : 2);
      return {"recursive_doubling", steps(rounds, m, true)};
    }
    case 4:
      return {"ring", {2 * q, 2 * q / p * m, q / p * m}};
    case 5:
      return {"segmented_ring", {2 * q, 2 * q / p * m, q / p * m}};
    default:
      return {"rabenseifner", {2 * L, 2 * q / p * m, q / p * m}};
  }
}

AlgorithmCost alltoall_cost(int algorithm, const Shape& shape) {
  const auto& [m, p, q, L, tree] = shape;
  switch (algorithm) {
    case 1:
      return {"linear", {q, q * m, 0}};
    case 2:
      return {"pairwise", steps(q, m)};
    case 3:
      return {"modified_bruck", {L, p * m / 2 * L, 0}};
    case 4:
      return {"linear_sync", {q, q * m, 0}};
    default:
      return {"two_proc", steps(1, m)};
  }
}

AlgorithmCost gather_cost(int algorithm, const Shape& shape) {
  const auto& [m, p, q, L, tree] = shape;
  switch (algorithm) {
    case 1:
      return {"basic_linear", steps(q, m)};
    case 2:
      return {"binomial", {L, q * m, 0}};
    default:
      return {"linear_sync", {2 * q, q * m, 0}};
  }
}

AlgorithmCost scatter_cost(int algorithm, const Shape& shape) {
  const auto& [m, p, q, L, tree] = shape;
  switch (algorithm) {
    case 1:
      return {"basic_linear", steps(q, m)};
    case 2:
      return {"binomial", {L, q * m, 0}};
    default:
      return {"linear_nb", steps(q, m)};
  }
}

}  // namespace

AlgorithmCost open_mpi_cost(Routine routine, double m, int p) {
  const Shape shape(m, p);
  const double q = shape.q, L = shape.L;
  const int algorithm = open_mpi_algorithm(routine, m, p);
  switch (routine) {
    case Routine::send_recv:
      return {"eager/rendezvous", steps(1, m)};
    case Routine::barrier:
      if (algorithm == 1) return {"linear", {2 * q, 0, 0}};
      return {algorithm == 3 ? "recursive_doubling" : algorithm == 4 ? "bruck" : "tree", {L, 0, 0}};
    case Routine::bcast:
      return bcast_cost(algorithm, shape);
    case Routine::reduce:
      return reduce_cost(algorithm, shape);
    case Routine::allreduce:
      return allreduce_cost(algorithm, shape);
    case Routine::alltoall:
      return alltoall_cost(algorithm, shape);
    case Routine::alltoallv:
      return {algorithm == 2 ? "pairwise" : "basic_linear", {q, m, 0}};
    case Routine::allgather:
    case Routine::allgatherv: {
      // The two tables number the same algorithms differently.
      const bool v = routine == Routine::allgatherv;
      const int a =
          v ? std::array<int, 6>{0, 1, 2, 4, 5, 6}[static_cast<std::size_t>(algorithm)] : algorithm;
      switch (a) {
        case 1:
          if (v) return {"default", {q + L, q * m + L * p * m, 0}};
          return {"linear", {2 * q, q * m + q * p * m, 0}};
        case 2:
          return {"bruck", {L, q * m, 0}};
        case 3:
          return {"recursive_doubling", {L, q * m, 0}};
        case 4:
          return {"ring", steps(q, m)};
        case 5:
          if (p % 2 == 1) return {"ring", steps(q, m)};  // neighbor exchange needs even p
          return {"neighbor", {p / 2.0, q * m, 0}};
        default:
          return {"two_proc", steps(1, m)};
      }
    }
    case Routine::gather:
      return gather_cost(algorithm, shape);
    case Routine::scatter:
      return scatter_cost(algorithm, shape);
  }
  return {"none", {}};
}

}  // namespace flexmpi::collectives
