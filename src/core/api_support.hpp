// What the C++ API's calls (include/flexmpi/flexmpi.hpp) share: the runtime
// of a process that is still a member, this process's arguments checked, and
// the record of whether a call changed the blocks. Private to core/api_*.cpp.
#pragma once

#include "core/runtime.hpp"
#include "flexmpi/flexmpi.hpp"

namespace flexmpi {

// The runtime, for a call that a removed process may not make: it is no
// longer part of the application and may only ask its status, its totals and
// whether its blocks changed (ProcessManager::require_not_removed).
Runtime& member_runtime();

Partition to_partition(const RowBlock& block);

// rank and nprocs as the high-level API passes them must be this process's.
void require_own(const Runtime& runtime, int rank, int nprocs);

// Around a call that may change the blocks: records whether it changed any
// (blocks_changed), whether it returns or throws. Rows may not move under a
// started halo exchange: its messages read and write them.
class BlockChangeWatch {
 public:
  BlockChangeWatch();
  BlockChangeWatch(const BlockChangeWatch&) = delete;
  BlockChangeWatch& operator=(const BlockChangeWatch&) = delete;
  ~BlockChangeWatch() { state_.set_blocks_changed(state_.blocks() != before_); }

 private:
  DecompositionState& state_;
  const Decomposition before_;
};

}  // namespace flexmpi
