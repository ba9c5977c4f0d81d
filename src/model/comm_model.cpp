// Cost functions of thesis Table 5.2 (MPICH) and of Open MPI 4.1's coll/tuned
// fixed decisions. See comm_model.hpp for the message-size conventions.
//
// Notation: p processes, m the block or buffer of the header's table,
// L = ceil(log2 p) rounds of a binomial tree / recursive doubling.
//
// MPICH, thesis Table 5.2 (n as in the table: the buffer for bcast, reduce and
// allreduce; p x m for scatter, gather, allgather(v) and alltoall):
//   Send/Recv   alpha + n beta
//   Bcast       binomial L (alpha + n beta)                  n < 12 KiB or p < 8
//               van de Geijn (L + p - 1) alpha + 2 (p-1)/p n beta    otherwise
//   Scatter     binomial L alpha + (p-1)/p n beta
//   Gather      binomial L alpha + (p-1)/p n beta
//   Allgather   recursive doubling L alpha + (p-1)/p n beta  n < 512 KiB
//               ring (p-1) alpha + (p-1)/p n beta            otherwise
//   Allgatherv  as Allgather on the total
//   Reduce      binomial L (alpha + n beta + n gamma)        n <= 2 KiB
//               Rabenseifner 2 L alpha + 2 (p-1)/p n beta + (p-1)/p n gamma
//   Allreduce   recursive doubling L alpha + n L beta + n L gamma   n <= 2 KiB
//               Rabenseifner (as Reduce)                     otherwise
//   Alltoall    Bruck L alpha + n/2 L beta                   block <= 256 B
//               pairwise exchange (p-1) alpha + n beta       otherwise
//   Alltoallv   isend/irecv (p-1) alpha + n beta, n the bytes a process sends
//   Barrier     dissemination L alpha
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
#include "model/comm_model.hpp"

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

namespace flexmpi {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Errc::invalid_argument, message);
}

int ceil_log2(int p) {
  int rounds = 0;
  for (long long reach = 1; reach < p; reach *= 2) ++rounds;
  return rounds;
}

int floor_log2(int p) {
  int rounds = 0;
  while ((1LL << (rounds + 1)) <= p) ++rounds;
  return rounds;
}

bool power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

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

// Hockney terms of the common shapes.
CostTerms steps(double count, double m, bool reduce = false) {
  return {count, count * m, reduce ? count * m : 0.0};
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

// ---- MPICH: thesis Table 5.2 ------------------------------------------------
AlgorithmCost mpich_cost(Routine routine, double m, int p) {
  const double q = p - 1;
  const double L = ceil_log2(p);
  switch (routine) {
    case Routine::send_recv:
      return {"eager/rendezvous", steps(1, m)};
    case Routine::barrier:
      return {"dissemination", {L, 0, 0}};
    case Routine::bcast:  // n = m
      if (m < 12 * 1024 || p < 8) return {"binomial", steps(L, m)};
      return {"van_de_geijn", {L + q, 2 * q / p * m, 0}};
    case Routine::scatter:
    case Routine::gather: {
      const double n = p * m;
      return {"binomial", {L, q / p * n, 0}};
    }
    case Routine::allgather:
    case Routine::allgatherv: {
      const double n = p * m;
      if (n < 512 * 1024) return {"recursive_doubling", {L, q / p * n, 0}};
      return {"ring", {q, q / p * n, 0}};
    }
    case Routine::reduce:
      if (m <= 2048) return {"binomial", steps(L, m, true)};
      return {"rabenseifner", {2 * L, 2 * q / p * m, q / p * m}};
    case Routine::allreduce:
      if (m <= 2048) return {"recursive_doubling", {L, m * L, m * L}};
      return {"rabenseifner", {2 * L, 2 * q / p * m, q / p * m}};
    case Routine::alltoall: {
      const double n = p * m;
      if (m <= 256) return {"bruck", {L, n / 2 * L, 0}};
      return {"pairwise_exchange", {q, n, 0}};
    }
    case Routine::alltoallv:
      return {"isend_irecv", {q, m, 0}};
  }
  return {"none", {}};
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

MpiLibrary detect_mpi_library(std::string_view version_text) {
  const std::string text = lower(version_text);
  if (text.find("open mpi") != std::string::npos) return MpiLibrary::open_mpi;
  for (const char* mpich_family : {"mpich", "intel(r) mpi", "mvapich"}) {
    if (text.find(mpich_family) != std::string::npos) return MpiLibrary::mpich;
  }
  return MpiLibrary::unknown;
}

std::string_view library_name(MpiLibrary library) {
  switch (library) {
    case MpiLibrary::mpich:
      return "mpich";
    case MpiLibrary::open_mpi:
      return "openmpi";
    case MpiLibrary::unknown:
      break;
  }
  return "unknown";
}

std::string_view routine_name(Routine routine) {
  static constexpr std::array<std::string_view, kRoutineCount> names = {
      "MPI_Send",      "MPI_Barrier",   "MPI_Bcast",      "MPI_Scatter",
      "MPI_Gather",    "MPI_Allgather", "MPI_Allgatherv", "MPI_Reduce",
      "MPI_Allreduce", "MPI_Alltoall",  "MPI_Alltoallv"};
  return names[static_cast<std::size_t>(routine)];
}

Routine routine_from_name(std::string_view name) {
  std::string key = lower(name);
  if (key.rfind("mpi_", 0) == 0) key = key.substr(4);
  static const std::array<std::pair<std::string_view, Routine>, 16> table = {{
      {"send", Routine::send_recv},
      {"recv", Routine::send_recv},
      {"send_recv", Routine::send_recv},
      {"barrier", Routine::barrier},
      {"bcast", Routine::bcast},
      {"scatter", Routine::scatter},
      {"scatterv", Routine::scatter},
      {"gather", Routine::gather},
      {"gatherv", Routine::gather},
      {"allgather", Routine::allgather},
      {"allgatherv", Routine::allgatherv},
      {"reduce", Routine::reduce},
      {"allreduce", Routine::allreduce},
      {"alltoall", Routine::alltoall},
      {"alltoallv", Routine::alltoallv},
      {"sendrecv", Routine::send_recv},
  }};
  for (const auto& [spelling, routine] : table) {
    if (key == spelling) return routine;
  }
  invalid("unknown MPI routine '" + std::string(name) +
          "': expected one of MPI_Send, MPI_Recv, MPI_Barrier, MPI_Bcast, MPI_Scatter, "
          "MPI_Gather, MPI_Allgather, MPI_Allgatherv, MPI_Reduce, MPI_Allreduce, MPI_Alltoall, "
          "MPI_Alltoallv");
}

AlgorithmCost collective_cost(MpiLibrary library, Routine routine, double bytes, int processes) {
  if (!(bytes >= 0.0) || !std::isfinite(bytes)) {
    invalid("message size of " + std::string(routine_name(routine)) +
            ": expected bytes >= 0, got " + std::to_string(bytes));
  }
  if (processes < 1) {
    invalid("communicator size of " + std::string(routine_name(routine)) +
            ": expected processes >= 1, got " + std::to_string(processes));
  }
  if (processes == 1 && routine != Routine::send_recv) return {"none (one process)", {}};
  return library == MpiLibrary::open_mpi ? open_mpi_cost(routine, bytes, processes)
                                         : mpich_cost(routine, bytes, processes);
}

PiecewiseLink::PiecewiseLink(const Hockney& h)
    : PiecewiseLink(std::vector<LinkBand>{{kInf, h.alpha, h.beta}}, h.gamma) {}

PiecewiseLink::PiecewiseLink(std::vector<LinkBand> bands, double gamma)
    : bands_(std::move(bands)), gamma_(gamma) {
  if (bands_.empty()) invalid("link bands: expected at least one band");
  if (!(gamma_ >= 0.0) || !std::isfinite(gamma_)) {
    invalid("link gamma: expected seconds per byte >= 0, got " + std::to_string(gamma_));
  }
  for (std::size_t i = 0; i < bands_.size(); ++i) {
    const LinkBand& band = bands_[i];
    const bool last = i + 1 == bands_.size();
    if (!(band.alpha >= 0.0) || !(band.beta >= 0.0) || !std::isfinite(band.alpha) ||
        !std::isfinite(band.beta) || (!last && !(band.up_to > 0.0))) {
      invalid("link band " + std::to_string(i) + ": expected alpha, beta >= 0 and up_to > 0");
    }
    if (!last && i > 0 && !(band.up_to > bands_[i - 1].up_to)) {
      invalid("link band " + std::to_string(i) + ": expected up_to above the previous band's");
    }
  }
}

Hockney PiecewiseLink::at(double bytes) const {
  for (std::size_t i = 0; i + 1 < bands_.size(); ++i) {
    if (bytes <= bands_[i].up_to) return {bands_[i].alpha, bands_[i].beta, gamma_};
  }
  return {bands_.back().alpha, bands_.back().beta, gamma_};
}

double step_bytes(const CostTerms& terms, double fallback) {
  return terms.latency > 0.0 ? terms.bandwidth / terms.latency : fallback;
}

double CollectiveFit::scale(double bytes) const {
  if (points.empty()) return 1.0;
  if (bytes <= points.front().bytes) return points.front().scale;
  if (bytes >= points.back().bytes) return points.back().scale;
  const auto upper = std::upper_bound(points.begin(), points.end(), bytes,
                                      [](double b, const ScalePoint& p) { return b < p.bytes; });
  const ScalePoint& hi = *upper;
  const ScalePoint& lo = *(upper - 1);
  const double x = std::log2(bytes / lo.bytes) / std::log2(hi.bytes / lo.bytes);
  return lo.scale + x * (hi.scale - lo.scale);
}

double CollectiveFit::scale(double bytes, MpiLibrary library, Routine routine) const {
  if (points.size() < 2 || bytes <= points.front().bytes || bytes >= points.back().bytes) {
    return scale(bytes);
  }
  const auto hi = std::upper_bound(points.begin(), points.end(), bytes,
                                   [](double b, const ScalePoint& p) { return b < p.bytes; });
  const auto lo = hi - 1;
  const auto algorithm = [&](double b) {
    return collective_cost(library, routine, b, processes).algorithm;
  };
  const std::string_view here = algorithm(bytes);
  const bool same_lo = algorithm(lo->bytes) == here, same_hi = algorithm(hi->bytes) == here;
  if (same_lo != same_hi) return same_lo ? lo->scale : hi->scale;
  return scale(bytes);
}

const CollectiveFit* find_fit(const CollectiveFits& fits, Routine routine, int processes) {
  const auto it = fits.find(routine);
  if (it == fits.end()) return nullptr;
  const CollectiveFit* best = nullptr;
  for (const CollectiveFit& fit : it->second) {
    const int distance = std::abs(fit.processes - processes);
    if (best == nullptr || distance <= std::abs(best->processes - processes)) best = &fit;
  }
  return best;
}

double call_seconds(MpiLibrary library, Routine routine, double bytes, int processes,
                    const PiecewiseLink& link, const CollectiveFits& fits) {
  const CostTerms terms = collective_cost(library, routine, bytes, processes).terms;
  const double seconds = terms.seconds(link.at(step_bytes(terms, bytes)));
  const CollectiveFit* fit = find_fit(fits, routine, processes);
  return fit == nullptr ? seconds : seconds * fit->scale(bytes, library, routine);
}

bool routine_of(MpiOp op, Routine* routine) {
  switch (op) {
    case MpiOp::Send:
    case MpiOp::Ssend:
    case MpiOp::Rsend:
    case MpiOp::Bsend:
    case MpiOp::Recv:
    case MpiOp::Sendrecv:
    case MpiOp::Sendrecv_replace:
    case MpiOp::Isend:
    case MpiOp::Issend:
    case MpiOp::Ibsend:
    case MpiOp::Irsend:
    case MpiOp::Irecv:
      *routine = Routine::send_recv;
      return true;
    case MpiOp::Barrier:
    case MpiOp::Ibarrier:
      *routine = Routine::barrier;
      return true;
    case MpiOp::Bcast:
    case MpiOp::Ibcast:
      *routine = Routine::bcast;
      return true;
    case MpiOp::Reduce:
    case MpiOp::Ireduce:
      *routine = Routine::reduce;
      return true;
    case MpiOp::Allreduce:
    case MpiOp::Iallreduce:
      *routine = Routine::allreduce;
      return true;
    case MpiOp::Gather:
    case MpiOp::Gatherv:
      *routine = Routine::gather;
      return true;
    case MpiOp::Allgather:
      *routine = Routine::allgather;
      return true;
    case MpiOp::Allgatherv:
      *routine = Routine::allgatherv;
      return true;
    case MpiOp::Scatter:
    case MpiOp::Scatterv:
      *routine = Routine::scatter;
      return true;
    case MpiOp::Alltoall:
      *routine = Routine::alltoall;
      return true;
    case MpiOp::Alltoallv:
      *routine = Routine::alltoallv;
      return true;
    default:  // Probe, Wait*, Test*: priced with the call that posted the request;
              // Scan and Exscan: no cost model of their own
      return false;
  }
}

std::vector<CommOpCount> profile_operations(std::span<const OpRecord> records) {
  std::vector<CommOpCount> ops;
  for (const OpRecord& record : records) {
    Routine routine{};
    if (record.stats.calls == 0 || !routine_of(record.op, &routine)) continue;
    ops.push_back({routine, std::max(record.comm_size, 1), record.stats.calls,
                   static_cast<double>(record.stats.bytes_sent),
                   static_cast<double>(record.stats.bytes_received)});
  }
  return ops;
}

double bytes_per_call(const CommOpCount& op) {
  if (op.calls == 0) return 0.0;
  const double calls = static_cast<double>(op.calls);
  const double p = std::max(op.comm_size, 1);
  switch (op.routine) {
    case Routine::send_recv:  // a send records what it sent, a receive what it got
    case Routine::alltoallv:
      return std::max(op.bytes_sent, op.bytes_received) / calls;
    case Routine::barrier:
      return 0.0;
    case Routine::bcast:  // the root records sent bytes, the others received
      return (op.bytes_sent + op.bytes_received) / calls;
    case Routine::reduce:
    case Routine::allreduce:
    case Routine::gather:  // every process sends its block
    case Routine::allgather:
      return op.bytes_sent / calls;
    case Routine::scatter:  // every process receives its block
      return op.bytes_received / calls;
    case Routine::allgatherv:  // everyone receives the whole: the average block
      return op.bytes_received / calls / p;
    case Routine::alltoall:  // sendcount x p per call
      return op.bytes_sent / calls / p;
  }
  return 0.0;
}

double predict_communication(std::span<const CommOpCount> ops, MpiLibrary library,
                             const PiecewiseLink& link, const CollectiveFits& fits) {
  return replay_communication(ops, 0, 0, library, link, fits);
}

double replay_communication(std::span<const CommOpCount> ops, int measured, int candidate,
                            MpiLibrary library, const PiecewiseLink& link,
                            const CollectiveFits& fits) {
  double seconds = 0.0;
  for (const CommOpCount& op : ops) {
    if (op.comm_size < 1) {
      invalid("communication profile: " + std::string(routine_name(op.routine)) +
              " on a communicator of " + std::to_string(op.comm_size) +
              " processes: expected >= 1");
    }
    if (op.bytes_sent < 0 || op.bytes_received < 0) {
      invalid("communication profile: " + std::string(routine_name(op.routine)) +
              ": expected bytes >= 0");
    }
    const int processes = op.comm_size == measured ? candidate : op.comm_size;
    if (op.calls == 0 || processes == 1) continue;  // a lone process sends nothing
    seconds += static_cast<double>(op.calls) *
               call_seconds(library, op.routine, bytes_per_call(op), processes, link, fits);
  }
  return seconds;
}

void LambdaCorrection::observe(double predicted, double measured) {
  if (!(predicted >= 0.0) || !(measured >= 0.0) || !std::isfinite(predicted) ||
      !std::isfinite(measured)) {
    invalid("lambda correction (eq. 5.4): expected predicted and measured seconds >= 0, got " +
            std::to_string(predicted) + " and " + std::to_string(measured));
  }
  if (!(predicted > 0.0) || !(measured > 0.0)) return;
  ratios_.push_back(measured / predicted);
  if (ratios_.size() > window_) ratios_.erase(ratios_.begin());
}

LambdaCorrection::LambdaCorrection(std::size_t window) : window_(window) {
  if (window == 0) invalid("lambda correction: expected a window of at least 1 interval");
}

double LambdaCorrection::lambda() const {
  if (ratios_.empty()) return 1.0;
  std::vector<double> sorted = ratios_;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t middle = sorted.size() / 2;
  return sorted.size() % 2 == 1 ? sorted[middle] : 0.5 * (sorted[middle - 1] + sorted[middle]);
}

}  // namespace flexmpi
