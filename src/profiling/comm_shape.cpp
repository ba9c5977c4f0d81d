#include "profiling/comm_shape.hpp"

#include <algorithm>

namespace flexmpi {
namespace {

// MPI's delete callback: `extra` is the cache that put the attribute there.
int forget_freed_comm(MPI_Comm comm, int /*keyval*/, void* /*value*/, void* extra) {
  auto* cache = static_cast<CommShapeCache*>(extra);
  cache->notify_freed(comm);
  return MPI_SUCCESS;
}

}  // namespace

CommShapeCache::~CommShapeCache() {
  int finalized = 1;
  if (keyval_ == MPI_KEYVAL_INVALID || PMPI_Finalized(&finalized) != MPI_SUCCESS || finalized) {
    return;
  }
  // Deleting runs the callback, which erases the entry: work on a copy.
  const std::vector<MPI_Comm> watched = watched_;
  for (MPI_Comm comm : watched) PMPI_Comm_delete_attr(comm, keyval_);
  PMPI_Comm_free_keyval(&keyval_);
}

void CommShapeCache::notify_freed(MPI_Comm comm) noexcept { on_free_(comm, context_); }

void CommShapeCache::forget(MPI_Comm comm) noexcept {
  for (Entry& entry : entries_) {
    if (entry.comm == comm) entry = Entry{};
  }
  watched_.erase(std::remove(watched_.begin(), watched_.end(), comm), watched_.end());
}

bool CommShapeCache::watch(MPI_Comm comm) noexcept {
  if (keyval_ == MPI_KEYVAL_INVALID && !keyval_failed_) {
    keyval_failed_ = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget_freed_comm, &keyval_,
                                             this) != MPI_SUCCESS;
  }
  if (keyval_ == MPI_KEYVAL_INVALID) return false;
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, keyval_, &value, &found) != MPI_SUCCESS) return false;
  if (found) return true;  // cached before, evicted since
  // Set only when absent: replacing a value would run the callback here.
  if (PMPI_Comm_set_attr(comm, keyval_, nullptr) != MPI_SUCCESS) return false;
  try {
    watched_.push_back(comm);
  } catch (...) {
    PMPI_Comm_delete_attr(comm, keyval_);
    return false;
  }
  return true;
}

const CommShape& CommShapeCache::miss(MPI_Comm comm) noexcept {
  CommShape shape;
  if (comm != MPI_COMM_NULL) {
    int inter = 0;
    PMPI_Comm_size(comm, &shape.size);
    PMPI_Comm_rank(comm, &shape.rank);
    PMPI_Comm_test_inter(comm, &inter);
    shape.inter = inter != 0;
    if (shape.inter) PMPI_Comm_remote_size(comm, &shape.remote_size);
  }
  if (comm == MPI_COMM_NULL || !watch(comm)) {
    uncached_ = shape;
    return uncached_;
  }
  // Entry 0 stays MPI_COMM_NULL's, so that completion calls always hit.
  const std::size_t slot = next_victim_;
  next_victim_ = next_victim_ + 1 < entries_.size() ? next_victim_ + 1 : 1;
  entries_[slot] = {comm, shape};
  last_ = slot;
  return entries_[slot].shape;
}

}  // namespace flexmpi
