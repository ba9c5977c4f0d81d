// PMPI wrappers (thesis 4.2.2, Fig. 4.5): every function of
// mpi_functions.def becomes an MPI_X that times PMPI_X and records it in the
// runtime's CommProfile, and (with FLEXMPI_FORTRAN_WRAPPERS) the Fortran
// entries of fortran_binding.hpp, which count the same bytes. Both are
// generated into the build tree by generate_wrappers.py and included below;
// this file holds the byte rules the table's expressions call.
//
// The byte helpers follow the standard's rules of significance: on an
// intercommunicator the root passes MPI_ROOT, its group's other processes
// MPI_PROC_NULL and the other group the root's rank, and counts arrays have
// the remote group's size; with MPI_IN_PLACE the send arguments are ignored;
// a non-root's receive arguments (a root's send arguments) may be anything,
// NULL arrays included. A helper reads an argument only where it is
// significant, so a call MPI accepts is never broken by flexmpi.
#include <mpi.h>

#include <cstdint>
#include <unordered_map>

#include "interposition/profiled_call.hpp"
#include "profiling/comm_profile.hpp"
#ifdef FLEXMPI_FORTRAN_WRAPPERS
#include "interposition/fortran_binding.hpp"
#endif

namespace flexmpi {
namespace {

using Bytes = CommProfile::Bytes;

std::uint64_t bytes(int count, MPI_Datatype type) {
  MPI_Count size = 0;
  if (count <= 0 || PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0) return 0;
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

// counts[0 .. processes) of `type`.
std::uint64_t sum_bytes(const int counts[], int processes, MPI_Datatype type) {
  std::uint64_t elements = 0;
  for (int i = 0; i < processes; ++i) {
    if (counts[i] > 0) elements += static_cast<std::uint64_t>(counts[i]);
  }
  MPI_Count size = 0;
  if (elements == 0 || PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0) return 0;
  return elements * static_cast<std::uint64_t>(size);
}

// Σ counts[i] elements of types[i], i in [0, processes): C datatype arrays
// and fortran::TypeArray alike.
template <class Types>
std::uint64_t sum_typed_bytes(const int counts[], const Types& types, int processes) {
  std::uint64_t total = 0;
  for (int i = 0; i < processes; ++i) total += bytes(counts[i], types[i]);
  return total;
}

std::uint64_t times(int processes, std::uint64_t each) {
  return static_cast<std::uint64_t>(processes > 0 ? processes : 0) * each;
}

bool in_place(const void* buffer) { return buffer == MPI_IN_PLACE; }

Bytes no_bytes() { return {}; }

// Sendrecv: what the send part hands over, what the receive part got.
Bytes exchange_bytes(Bytes send, std::uint64_t received) { return {send.sent, received}; }

Bytes send_bytes(int dest, int count, MPI_Datatype type) {
  return {dest == MPI_PROC_NULL ? 0 : bytes(count, type), 0};
}

// The size of the message a completed receive got (0 from MPI_PROC_NULL).
std::uint64_t status_bytes(const MPI_Status* status, MPI_Datatype type) {
  int count = 0;
  if (PMPI_Get_count(status, type, &count) != MPI_SUCCESS || count == MPI_UNDEFINED) return 0;
  return bytes(count, type);
}

Bytes receive_bytes(const MPI_Status* status, MPI_Datatype type) {
  return {0, status_bytes(status, type)};
}

Bytes posted_receive_bytes(int source, int count, MPI_Datatype type) {
  return {0, source == MPI_PROC_NULL ? 0 : bytes(count, type)};
}

Bytes both_ways(int count, MPI_Datatype type) {
  const std::uint64_t payload = bytes(count, type);
  return {payload, payload};
}

// A process's part in a rooted collective.
enum class Role { root, member, none };

Role role(const CommShape& shape, int root) {
  if (!shape.inter) return root == shape.rank ? Role::root : Role::member;
  if (root == MPI_ROOT) return Role::root;
  return root == MPI_PROC_NULL ? Role::none : Role::member;
}

// One to all: the root hands the buffer over once, the others receive it.
Bytes bcast_bytes(const CommShape& shape, int root, int count, MPI_Datatype type) {
  switch (role(shape, root)) {
    case Role::root:
      return {bytes(count, type), 0};
    case Role::member:
      return {0, bytes(count, type)};
    case Role::none:
      break;
  }
  return {};
}

// All to one: every contributor hands its buffer over (the root of an
// intracommunicator too, in place or not), the root receives the result.
Bytes reduce_bytes(const CommShape& shape, int root, int count, MPI_Datatype type) {
  switch (role(shape, root)) {
    case Role::root:
      return {shape.inter ? 0 : bytes(count, type), bytes(count, type)};
    case Role::member:
      return {bytes(count, type), 0};
    case Role::none:
      break;
  }
  return {};
}

// In place, the root's own block counts as sent, as if it had been.
Bytes gather_bytes(const CommShape& shape, int root, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype) {
  switch (role(shape, root)) {
    case Role::root: {
      const std::uint64_t own = shape.inter         ? 0
                                : in_place(sendbuf) ? bytes(recvcount, recvtype)
                                                    : bytes(sendcount, sendtype);
      return {own, times(shape.peers(), bytes(recvcount, recvtype))};
    }
    case Role::member:
      return {bytes(sendcount, sendtype), 0};
    case Role::none:
      break;
  }
  return {};
}

Bytes gatherv_bytes(const CommShape& shape, int root, const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype) {
  switch (role(shape, root)) {
    case Role::root: {
      const std::uint64_t own = shape.inter         ? 0
                                : in_place(sendbuf) ? bytes(recvcounts[shape.rank], recvtype)
                                                    : bytes(sendcount, sendtype);
      return {own, sum_bytes(recvcounts, shape.peers(), recvtype)};
    }
    case Role::member:
      return {bytes(sendcount, sendtype), 0};
    case Role::none:
      break;
  }
  return {};
}

// In place, the root's own block counts as received, as if it had been.
Bytes scatter_bytes(const CommShape& shape, int root, int sendcount, MPI_Datatype sendtype,
                    const void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  switch (role(shape, root)) {
    case Role::root: {
      const std::uint64_t own = shape.inter         ? 0
                                : in_place(recvbuf) ? bytes(sendcount, sendtype)
                                                    : bytes(recvcount, recvtype);
      return {times(shape.peers(), bytes(sendcount, sendtype)), own};
    }
    case Role::member:
      return {0, bytes(recvcount, recvtype)};
    case Role::none:
      break;
  }
  return {};
}

Bytes scatterv_bytes(const CommShape& shape, int root, const int sendcounts[],
                     MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                     MPI_Datatype recvtype) {
  switch (role(shape, root)) {
    case Role::root: {
      const std::uint64_t own = shape.inter         ? 0
                                : in_place(recvbuf) ? bytes(sendcounts[shape.rank], sendtype)
                                                    : bytes(recvcount, recvtype);
      return {sum_bytes(sendcounts, shape.peers(), sendtype), own};
    }
    case Role::member:
      return {0, bytes(recvcount, recvtype)};
    case Role::none:
      break;
  }
  return {};
}

// MPI_IN_PLACE (intracommunicators only): this process's block of the
// receive buffer is what it contributes.
Bytes allgather_bytes(const CommShape& shape, const void* sendbuf, int sendcount,
                      MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype) {
  const std::uint64_t each = bytes(recvcount, recvtype);
  return {in_place(sendbuf) ? each : bytes(sendcount, sendtype), times(shape.peers(), each)};
}

Bytes allgatherv_bytes(const CommShape& shape, const void* sendbuf, int sendcount,
                       MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype) {
  const std::uint64_t own =
      in_place(sendbuf) ? bytes(recvcounts[shape.rank], recvtype) : bytes(sendcount, sendtype);
  return {own, sum_bytes(recvcounts, shape.peers(), recvtype)};
}

Bytes alltoall_bytes(const CommShape& shape, const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype) {
  const std::uint64_t received = times(shape.peers(), bytes(recvcount, recvtype));
  return {in_place(sendbuf) ? received : times(shape.peers(), bytes(sendcount, sendtype)),
          received};
}

Bytes alltoallv_bytes(const CommShape& shape, const void* sendbuf, const int sendcounts[],
                      MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype) {
  const std::uint64_t received = sum_bytes(recvcounts, shape.peers(), recvtype);
  return {in_place(sendbuf) ? received : sum_bytes(sendcounts, shape.peers(), sendtype), received};
}

// Reduce_scatter: every contributor hands over the whole vector and gets its
// block. Intercommunicator: the vector's length is Σ of the other group's
// counts, which this process does not see; its own group's stand for them.
Bytes reduce_scatter_bytes(const CommShape& shape, const int recvcounts[], MPI_Datatype type) {
  return {sum_bytes(recvcounts, shape.size, type),
          shape.inter ? 0 : bytes(recvcounts[shape.rank], type)};
}

Bytes reduce_scatter_block_bytes(const CommShape& shape, int recvcount, MPI_Datatype type) {
  return {times(shape.peers(), bytes(recvcount, type)), bytes(recvcount, type)};
}

template <class Types>
Bytes alltoallw_bytes(const CommShape& shape, const void* sendbuf, const int sendcounts[],
                      const Types& sendtypes, const int recvcounts[], const Types& recvtypes) {
  const std::uint64_t received = sum_typed_bytes(recvcounts, recvtypes, shape.peers());
  return {in_place(sendbuf) ? received : sum_typed_bytes(sendcounts, sendtypes, shape.peers()),
          received};
}

// A process's neighbours in its communicator's virtual topology (MPI-4.1
// §8.6): sources it receives from, destinations it sends to. A Cartesian
// topology has two of each per dimension, MPI_PROC_NULL at a non-periodic
// border included (those slots count as real ones).
struct Neighbours {
  int sources = 0;
  int destinations = 0;
};

Neighbours neighbours(MPI_Comm comm) {
  int topology = MPI_UNDEFINED;
  Neighbours found;
  if (PMPI_Topo_test(comm, &topology) != MPI_SUCCESS) return found;
  if (topology == MPI_CART) {
    int dimensions = 0;
    PMPI_Cartdim_get(comm, &dimensions);
    found = {2 * dimensions, 2 * dimensions};
  } else if (topology == MPI_GRAPH) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Graph_neighbors_count(comm, rank, &found.sources);
    found.destinations = found.sources;
  } else if (topology == MPI_DIST_GRAPH) {
    int weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &found.sources, &found.destinations, &weighted);
  }
  return found;
}

Bytes neighbor_allgather_bytes(MPI_Comm comm, int sendcount, MPI_Datatype sendtype, int recvcount,
                               MPI_Datatype recvtype) {
  const Neighbours peers = neighbours(comm);
  return {times(peers.destinations, bytes(sendcount, sendtype)),
          times(peers.sources, bytes(recvcount, recvtype))};
}

Bytes neighbor_allgatherv_bytes(MPI_Comm comm, int sendcount, MPI_Datatype sendtype,
                                const int recvcounts[], MPI_Datatype recvtype) {
  const Neighbours peers = neighbours(comm);
  return {times(peers.destinations, bytes(sendcount, sendtype)),
          sum_bytes(recvcounts, peers.sources, recvtype)};
}

Bytes neighbor_alltoall_bytes(MPI_Comm comm, int sendcount, MPI_Datatype sendtype, int recvcount,
                              MPI_Datatype recvtype) {
  return neighbor_allgather_bytes(comm, sendcount, sendtype, recvcount, recvtype);
}

Bytes neighbor_alltoallv_bytes(MPI_Comm comm, const int sendcounts[], MPI_Datatype sendtype,
                               const int recvcounts[], MPI_Datatype recvtype) {
  const Neighbours peers = neighbours(comm);
  return {sum_bytes(sendcounts, peers.destinations, sendtype),
          sum_bytes(recvcounts, peers.sources, recvtype)};
}

template <class Types>
Bytes neighbor_alltoallw_bytes(MPI_Comm comm, const int sendcounts[], const Types& sendtypes,
                               const int recvcounts[], const Types& recvtypes) {
  const Neighbours peers = neighbours(comm);
  return {sum_typed_bytes(sendcounts, sendtypes, peers.destinations),
          sum_typed_bytes(recvcounts, recvtypes, peers.sources)};
}

// One-sided: the origin's buffers. What it puts (accumulates) counts as
// sent, what it gets back as received; MPI_NO_OP sends nothing.
Bytes put_bytes(int target, int count, MPI_Datatype type) {
  return {target == MPI_PROC_NULL ? 0 : bytes(count, type), 0};
}

Bytes get_bytes(int target, int count, MPI_Datatype type) {
  return {0, target == MPI_PROC_NULL ? 0 : bytes(count, type)};
}

Bytes get_accumulate_bytes(int target, MPI_Op op, int origin_count, MPI_Datatype origin_type,
                           int result_count, MPI_Datatype result_type) {
  if (target == MPI_PROC_NULL) return {};
  return {op == MPI_NO_OP ? 0 : bytes(origin_count, origin_type), bytes(result_count, result_type)};
}

// File I/O: written bytes count as sent, read bytes as received.
Bytes written_bytes(const MPI_Status* status, MPI_Datatype type) {
  return {status_bytes(status, type), 0};
}

Bytes posted_read_bytes(int count, MPI_Datatype type) { return {0, bytes(count, type)}; }

Bytes posted_write_bytes(int count, MPI_Datatype type) { return {bytes(count, type), 0}; }

// MPI_Imrecv: the size posted, 0 for the message of an MPI_PROC_NULL probe.
Bytes posted_message_bytes(MPI_Message message, int count, MPI_Datatype type) {
  return {0, message == MPI_MESSAGE_NO_PROC ? 0 : bytes(count, type)};
}

// Persistent requests: the bytes each start moves, by request. Read and
// written under the profile's lock (CommProfile::call_ends); an entry is
// replaced when MPI hands the handle out again for another persistent request.
std::unordered_map<MPI_Request, Bytes>& persistent_requests() {
  static std::unordered_map<MPI_Request, Bytes> requests;
  return requests;
}

Bytes persistent_bytes(MPI_Request request, Bytes each_start) {
  persistent_requests()[request] = each_start;
  return {};
}

// C request arrays and fortran::RequestArray alike.
template <class Requests>
Bytes started_bytes(int count, const Requests& requests) {
  Bytes total;
  for (int i = 0; i < count; ++i) {
    const auto found = persistent_requests().find(requests[i]);
    if (found == persistent_requests().end()) continue;
    total.sent += found->second.sent;
    total.received += found->second.received;
  }
  return total;
}

}  // namespace
}  // namespace flexmpi

using namespace flexmpi;  // the expressions in mpi_functions.def name the helpers above

#include "pmpi_c_wrappers.inc"
#ifdef FLEXMPI_FORTRAN_WRAPPERS
#include "pmpi_fortran_wrappers.inc"
#endif
