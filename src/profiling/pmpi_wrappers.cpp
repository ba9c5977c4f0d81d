// PMPI wrappers (thesis 4.2.2, Fig. 4.5): every function of
// mpi_functions.def is expanded here into an MPI_X that times PMPI_X and
// records it in the runtime's CommProfile. One body serves them all.
#include <mpi.h>

#include <cstdint>

#include "core/runtime.hpp"
#include "profiling/comm_profile.hpp"

namespace flexmpi {
namespace {

std::uint64_t bytes(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS) return 0;
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

int group_size(MPI_Comm comm) {
  int size = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS) return 0;
  return size;
}

bool is_root(int root, MPI_Comm comm) {
  int rank = -1;
  PMPI_Comm_rank(comm, &rank);
  return rank == root;
}

std::uint64_t group_bytes(int count, MPI_Datatype type, MPI_Comm comm) {
  return bytes(count, type) * static_cast<std::uint64_t>(group_size(comm));
}

std::uint64_t sum_bytes(const int counts[], MPI_Datatype type, MPI_Comm comm) {
  std::uint64_t total = 0;
  for (int i = 0, n = group_size(comm); i < n; ++i) total += bytes(counts[i], type);
  return total;
}

std::uint64_t received(const MPI_Status* status, MPI_Datatype type) {
  int count = 0;
  if (PMPI_Get_count(status, type, &count) != MPI_SUCCESS || count == MPI_UNDEFINED) return 0;
  return bytes(count, type);
}

MPI_Status* status_or(MPI_Status* status, MPI_Status* local) {
  return status == MPI_STATUS_IGNORE ? local : status;
}

// The one wrapper body: time the PMPI call, then count what it moved.
template <class Call, class Sent, class Received>
int profiled(MpiOp op, MPI_Comm comm, Call&& call, Sent&& sent, Received&& received_bytes) {
  Runtime* runtime = Runtime::instance();
  if (runtime == nullptr) return call();
  CommProfile& profile = runtime->comm_profile();
  const std::uint64_t start = profile.timer().now();
  const int code = call();
  const double elapsed = profile.timer().seconds(profile.timer().now() - start);
  if (code == MPI_SUCCESS) {
    profile.record(op, group_size(comm), sent(), received_bytes(), elapsed);
  } else {
    profile.record(op, group_size(comm), 0, 0, elapsed);
  }
  return code;
}

}  // namespace
}  // namespace flexmpi

using namespace flexmpi;  // the expressions in mpi_functions.def name the helpers above

#define FLEXMPI_WRAP(name, comm_expr, sent_expr, received_expr, parameters, arguments) \
  extern "C" int MPI_##name parameters {                                               \
    [[maybe_unused]] MPI_Status local_status;                                          \
    return profiled(                                                                   \
        MpiOp::name, comm_expr, [&] { return PMPI_##name arguments; },                 \
        [&]() -> std::uint64_t { return sent_expr; },                                  \
        [&]() -> std::uint64_t { return received_expr; });                             \
  }
#include "profiling/mpi_functions.def"
#undef FLEXMPI_WRAP
