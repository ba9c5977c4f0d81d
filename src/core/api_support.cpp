#include "core/api_support.hpp"

#include <string>

#include "process/process_manager.hpp"

namespace flexmpi {

namespace {

// Rows may not move under a started halo exchange: its messages read and write them.
DecompositionState& state_without_started_halo() {
  DecompositionState& state = Runtime::get().state();
  if (state.halos().any_started()) {
    throw Error(Errc::bad_state,
                "a halo exchange is started: finish it (XMPI_Halo_finish) before a call that may "
                "move rows");
  }
  return state;
}

}  // namespace

Runtime& member_runtime() {
  Runtime& runtime = Runtime::get();
  runtime.processes().require_not_removed();
  return runtime;
}

Partition to_partition(const RowBlock& block) {
  return {static_cast<int>(block.count), static_cast<int>(block.displ)};
}

void require_own(const Runtime& runtime, int rank, int nprocs) {
  if (rank != runtime.rank()) {
    throw Error(Errc::invalid_argument, "rank=" + std::to_string(rank) +
                                            ": expected the calling process's rank " +
                                            std::to_string(runtime.rank()));
  }
  if (nprocs != runtime.size()) {
    throw Error(Errc::invalid_argument, "nprocs=" + std::to_string(nprocs) +
                                            ": expected the number of processes " +
                                            std::to_string(runtime.size()));
  }
}

BlockChangeWatch::BlockChangeWatch()
    : state_(state_without_started_halo()), before_(state_.blocks()) {}

}  // namespace flexmpi
