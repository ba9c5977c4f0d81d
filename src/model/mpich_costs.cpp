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
#include "model/collective_algorithms.hpp"

namespace flexmpi::collectives {

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

}  // namespace flexmpi::collectives
