// What the PMPI wrappers must know of a communicator to count a call's
// bytes: the size of its group, this process's rank in it and, for an
// intercommunicator, the size of the remote group (the group a collective's
// counts arrays and roots refer to there, MPI-4.1 sections 6.2.2 and 6.4).
//
// Asking MPI on every call (PMPI_Comm_size, _rank, _test_inter) cost the
// wrapped call 20-40 ns; the answers are cached per handle instead. A freed
// handle can come back for another communicator, so every cached
// communicator carries an attribute whose delete callback (run by MPI when
// the communicator is freed or disconnected, however the program frees it)
// forgets it.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <vector>

namespace flexmpi {

struct CommShape {
  int size = 0;         ///< MPI_Comm_size: the local group
  int rank = -1;        ///< MPI_Comm_rank
  int remote_size = 0;  ///< MPI_Comm_remote_size on an intercommunicator, else 0
  bool inter = false;   ///< an intercommunicator
  /// The group a collective's per-process counts and its root refer to: the
  /// remote group on an intercommunicator, else the local one.
  [[nodiscard]] int peers() const noexcept { return inter ? remote_size : size; }
};

class CommShapeCache {
 public:
  /// on_free(comm, context) runs when MPI frees a communicator this cache
  /// watches (from the attribute's delete callback): the owner locks what
  /// it must and calls forget(comm).
  using FreeCallback = void (*)(MPI_Comm comm, void* context);
  CommShapeCache(FreeCallback on_free, void* context) noexcept
      : on_free_(on_free), context_(context) {}
  CommShapeCache(const CommShapeCache&) = delete;
  CommShapeCache& operator=(const CommShapeCache&) = delete;
  /// Removes the attribute from every watched communicator and frees the key.
  ~CommShapeCache();

  /// The shape of a valid communicator (MPI_COMM_NULL: an empty shape). Hot
  /// path: a hit compares a few handles; a miss asks MPI once.
  const CommShape& shape(MPI_Comm comm) noexcept {
    if (entries_[last_].comm == comm) return entries_[last_].shape;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].comm == comm) {
        last_ = i;
        return entries_[i].shape;
      }
    }
    return miss(comm);
  }
  /// MPI freed `comm`: its handle may name another communicator from now on.
  void forget(MPI_Comm comm) noexcept;
  /// Called by the attribute's delete callback: hands `comm` to the owner's on_free.
  void notify_freed(MPI_Comm comm) noexcept;

 private:
  struct Entry {
    MPI_Comm comm = MPI_COMM_NULL;
    CommShape shape;
  };
  const CommShape& miss(MPI_Comm comm) noexcept;
  /// Puts the forgetting attribute on `comm` once; false if MPI refused.
  bool watch(MPI_Comm comm) noexcept;

  FreeCallback on_free_;
  void* context_;
  // Entry 0 answers MPI_COMM_NULL (an empty shape) and is never replaced.
  std::array<Entry, 8> entries_{};
  std::size_t last_ = 0;
  std::size_t next_victim_ = 1;
  int keyval_ = MPI_KEYVAL_INVALID;
  bool keyval_failed_ = false;
  std::vector<MPI_Comm> watched_;  // communicators carrying the attribute
  CommShape uncached_;             // the answer for a communicator that cannot be watched
};

}  // namespace flexmpi
