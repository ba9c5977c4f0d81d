// The C++ API's halo exchange calls (include/flexmpi/flexmpi.hpp).
#include <algorithm>
#include <string>

#include "core/api_support.hpp"
#include "core/runtime.hpp"
#include "flexmpi/flexmpi.hpp"
#include "profiling/comm_profile.hpp"

namespace flexmpi {

namespace {

// The registered vector or dense structure one of whose buffer addresses
// (either of a pair) is `address`, if it has ghost rows.
const detail::Structure& structure_with_ghost_rows(const DataRegistry& data, const void* address,
                                                   const char* call) {
  const auto structures = data.structures();
  const auto found = std::find_if(structures.begin(), structures.end(), [&](const auto& s) {
    return !s.sparse() && (s.data == address || s.partner == address);
  });
  if (found == structures.end()) {
    throw Error(Errc::invalid_argument,
                std::string(call) +
                    ": this address is not registered (expected the address of the pointer "
                    "given to XMPI_Register_rows or XMPI_Register_pair)");
  }
  if (found->ghost_rows == 0) {
    throw Error(Errc::invalid_argument,
                std::string(call) +
                    ": the structure has no ghost rows: register it with ghost_rows > 0 "
                    "(XMPI_Register_rows)");
  }
  return *found;
}

// The halo exchange of the structure registered at `address`, rebuilt if the
// blocks or the process set changed since its last use.
HaloExchange& prepared_halo(Runtime& runtime, const void* address, const char* call) {
  DecompositionState& state = runtime.state();
  const detail::Structure& structure = structure_with_ghost_rows(state.data(), address, call);
  if (state.blocks().empty()) {
    throw Error(Errc::bad_state, std::string(call) +
                                     ": there is no decomposition yet (XMPI_Get_wsize or "
                                     "XMPI_Get_decomposition make one)");
  }
  const HaloExchanges::Layout layout{structure.ghost_rows, structure.row_bytes(),
                                     runtime.library_comm(), runtime.rank(),
                                     runtime.context().generation()};
  return state.halos().prepare(address, state.blocks(), layout);
}

// The halo messages are the application's communication: the monitor and the
// profile count them as they would a hand-written exchange's (MPI time, not
// computation, so that a process waiting for a slower neighbour does not look
// slow itself; the plan's bytes). A blocking exchange is one MPI_Sendrecv row,
// a started one an MPI_Isend row and its finish an MPI_Waitall row.
template <class Body>
void as_mpi_call(Runtime& runtime, MpiOp op, const HaloExchange& exchange, Body&& body) {
  runtime.before_mpi_call();
  CommProfile& profile = runtime.comm_profile();
  const std::uint64_t start = profile.call_starts();
  const auto bytes = [&](const CommShape&) {
    CommProfile::Bytes moved;
    if (op == MpiOp::Waitall) return moved;
    const HaloPlan& plan = exchange.plan();
    for (const HaloMessage& m : plan.sends)
      moved.sent += static_cast<std::uint64_t>(m.rows) * exchange.row_bytes();
    for (const HaloMessage& m : plan.receives)
      moved.received += static_cast<std::uint64_t>(m.rows) * exchange.row_bytes();
    return moved;
  };
  const MPI_Comm comm = op == MpiOp::Waitall ? MPI_COMM_NULL : exchange.comm();
  try {
    body();
  } catch (...) {
    profile.call_ends(op, comm, false, bytes, start);
    runtime.after_mpi_call();
    throw;
  }
  profile.call_ends(op, comm, true, bytes, start);
  runtime.after_mpi_call();
}

}  // namespace

void halo_start(const void* address) {
  Runtime& runtime = member_runtime();
  HaloExchange& exchange = prepared_halo(runtime, address, "XMPI_Halo_start");
  as_mpi_call(runtime, MpiOp::Isend, exchange,
              [&] { exchange.start(*static_cast<void* const*>(address)); });
}

void halo_finish(const void* address) {
  Runtime& runtime = member_runtime();
  HaloExchange* exchange = runtime.state().halos().find(address);
  if (exchange == nullptr || !exchange->started()) {
    throw Error(Errc::bad_state,
                "XMPI_Halo_finish: no halo exchange of this address is started (XMPI_Halo_start)");
  }
  as_mpi_call(runtime, MpiOp::Waitall, *exchange, [&] { exchange->finish(); });
}

void halo_exchange(const void* address) {
  Runtime& runtime = member_runtime();
  HaloExchange& exchange = prepared_halo(runtime, address, "XMPI_Halo_exchange");
  as_mpi_call(runtime, MpiOp::Sendrecv, exchange, [&] {
    exchange.start(*static_cast<void* const*>(address));
    exchange.finish();
  });
}

}  // namespace flexmpi
