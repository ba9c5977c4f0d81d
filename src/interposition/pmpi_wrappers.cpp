// PMPI wrappers (thesis 4.2.2, Fig. 4.5): every function of
// mpi_functions.def is expanded here into an MPI_X that times PMPI_X and
// records it in the runtime's CommProfile. One body serves them all.
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

#include "interposition/profiled_call.hpp"
#include "profiling/comm_profile.hpp"

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

MPI_Status* status_or(MPI_Status* status, MPI_Status* local) {
  return status == MPI_STATUS_IGNORE ? local : status;
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

}  // namespace
}  // namespace flexmpi

using namespace flexmpi;  // the expressions in mpi_functions.def name the helpers above

#define FLEXMPI_WRAP(name, comm_expr, bytes_expr, parameters, arguments)               \
  extern "C" int MPI_##name parameters {                                               \
    [[maybe_unused]] MPI_Status local_status;                                          \
    return profiled(                                                                   \
        MpiOp::name, comm_expr, [&] { return PMPI_##name arguments; },                 \
        [&]([[maybe_unused]] const CommShape& shape) -> Bytes { return bytes_expr; }); \
  }
#include "profiling/mpi_functions.def"
#undef FLEXMPI_WRAP
