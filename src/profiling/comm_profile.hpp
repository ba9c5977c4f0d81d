// Communication profile (thesis 4.2.2): for every wrapped MPI operation and
// communicator size, the number of calls, the bytes sent and received by this
// process and the time spent inside MPI. The prediction model (thesis 5.3.2)
// reads it per sampling interval; the monitor reads the running MPI time to
// separate communication from computation.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

#include "profiling/comm_shape.hpp"
#include "util/clock.hpp"

namespace flexmpi {

/// Every profiled MPI operation, generated from mpi_functions.def.
enum class MpiOp : std::uint8_t {
#define FLEXMPI_WRAP(name, ...) name,
#include "profiling/mpi_functions.def"
#undef FLEXMPI_WRAP
};

inline constexpr std::size_t kMpiOpCount = 0
#define FLEXMPI_WRAP(name, ...) +1
#include "profiling/mpi_functions.def"
#undef FLEXMPI_WRAP
    ;

/// "MPI_Allreduce" for MpiOp::Allreduce.
std::string_view mpi_op_name(MpiOp op);

struct OpStats {
  std::uint64_t calls = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  double seconds = 0.0;

  OpStats& operator+=(const OpStats& other);
  OpStats& operator-=(const OpStats& other);
};

/// One row of the profile: an operation on communicators of one size.
struct OpRecord {
  MpiOp op;
  int comm_size;  ///< 0 for completion calls, which have no communicator
  OpStats stats;
};

class CommProfile {
 public:
  /// The payload one call moved, from this process's point of view.
  struct Bytes {
    std::uint64_t sent = 0;
    std::uint64_t received = 0;
  };

  /// thread_safe: the application initialised MPI with MPI_THREAD_MULTIPLE.
  explicit CommProfile(bool thread_safe = false)
      : thread_safe_(thread_safe), shapes_(&forget_freed, this) {}
  CommProfile(const CommProfile&) = delete;
  CommProfile& operator=(const CommProfile&) = delete;

  /// Adds one call. Hot path: no allocation after the first call of a kind.
  void record(MpiOp op, int comm_size, std::uint64_t sent, std::uint64_t received,
              double seconds) noexcept;
  /// Adds one call on `comm` (MPI_COMM_NULL for completion calls), keyed by
  /// its group's size; count(shape) gives the bytes of a call that succeeded
  /// (a failed one is recorded with no bytes and communicator size 0).
  /// The wrappers' path: the communicator's shape comes from a cache.
  template <class Count>
  void record_call(MpiOp op, MPI_Comm comm, bool succeeded, Count&& count,
                   double seconds) noexcept {
    std::unique_lock lock(mutex_, std::defer_lock);  // guard(), inline on the hot path
    if (thread_safe_) lock.lock();
    if (!succeeded) {  // the communicator may be invalid: do not ask MPI about it
      add(op, 0, {1, 0, 0, seconds});
      return;
    }
    const CommShape& shape = shapes_.shape(comm);
    const Bytes moved = count(shape);
    add(op, shape.size, {1, moved.sent, moved.received, seconds});
  }

  /// The clock the wrappers time MPI calls with (ticks; see IntervalTimer).
  [[nodiscard]] const IntervalTimer& timer() const noexcept { return timer_; }

  /// Time spent in MPI since start-up (cumulative), read by the monitor.
  [[nodiscard]] double mpi_seconds() const noexcept {
    return thread_safe_ ? totals().seconds : totals_.seconds;  // once per monitored iteration
  }
  /// Sum over all operations since start-up.
  [[nodiscard]] OpStats totals() const noexcept;
  /// All rows since start-up, in operation order.
  [[nodiscard]] std::vector<OpRecord> records() const;

 private:
  void add(MpiOp op, int comm_size, const OpStats& call) noexcept;
  /// Locked only when other threads may record (MPI_THREAD_MULTIPLE).
  [[nodiscard]] std::unique_lock<std::mutex> guard() const;
  /// MPI freed a communicator the shape cache knows (CommShapeCache::FreeCallback).
  static void forget_freed(MPI_Comm comm, void* profile) noexcept;

  bool thread_safe_;
  IntervalTimer timer_;
  mutable std::mutex mutex_;
  OpStats totals_;
  std::array<std::vector<OpRecord>, kMpiOpCount> table_;
  CommShapeCache shapes_;
};

/// Rows of `now` minus the matching rows of `before` (rows with no calls dropped):
/// what happened between two snapshots, e.g. during one sampling interval.
std::vector<OpRecord> profile_difference(const std::vector<OpRecord>& now,
                                         const std::vector<OpRecord>& before);

}  // namespace flexmpi
