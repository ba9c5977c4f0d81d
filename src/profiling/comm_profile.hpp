// Communication profile (thesis 4.2.2): for every wrapped MPI operation and
// communicator size, the number of calls, the bytes sent and received by this
// process and the time spent inside MPI. The prediction model (thesis 5.3.2)
// reads it per sampling interval; the monitor reads the running MPI time to
// separate communication from computation.
//
// The process's MPI time is the wall time during which at least one of its
// threads was inside a wrapped call (the union of the calls' intervals), so
// that two threads blocked in MPI at once count once and the MPI time never
// exceeds the wall time; the per-operation rows sum each call's own time.
// The per-call path adds integer timer ticks only: no floating point (it
// would raise the caller's "inexact" flag), no lock outside
// MPI_THREAD_MULTIPLE; ticks become seconds when read.
#pragma once

#include <mpi.h>

#include <algorithm>
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
  double seconds = 0.0;  ///< the calls' own times, summed

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

  /// A wrapped call begins on this thread: the timer's ticks, for call_ends.
  [[nodiscard]] std::uint64_t call_starts() noexcept {
    const std::uint64_t now = timer_.now();
    std::unique_lock lock(mutex_, std::defer_lock);  // guard(), inline on the hot path
    if (thread_safe_) lock.lock();
    enter(now);
    return now;
  }
  /// The call that call_starts() returned `start` for ended: adds it on
  /// `comm` (MPI_COMM_NULL for completion calls), keyed by its group's size;
  /// count(shape) gives the bytes of a call that succeeded (a failed one is
  /// recorded with no bytes and communicator size 0). The communicator's
  /// shape comes from a cache.
  template <class Count>
  void call_ends(MpiOp op, MPI_Comm comm, bool succeeded, Count&& count,
                 std::uint64_t start) noexcept {
    const std::uint64_t now = timer_.now();
    std::unique_lock lock(mutex_, std::defer_lock);
    if (thread_safe_) lock.lock();
    leave(now);
    if (!succeeded) {  // the communicator may be invalid: do not ask MPI about it
      add(op, 0, {1, 0, 0, now - start});
      return;
    }
    const CommShape& shape = shapes_.shape(comm);
    const Bytes moved = count(shape);
    add(op, shape.size, {1, moved.sent, moved.received, now - start});
  }
  /// Adds one call that took `ticks` of the timer to its row (not to the
  /// MPI time, which only call_starts and call_ends make).
  void record(MpiOp op, int comm_size, std::uint64_t sent, std::uint64_t received,
              std::uint64_t ticks) noexcept;

  /// The clock the wrappers time MPI calls with (ticks; see IntervalTimer).
  [[nodiscard]] const IntervalTimer& timer() const noexcept { return timer_; }

  /// Wall time since start-up during which at least one thread was inside a
  /// wrapped call, up to now; read by the monitor (a few times an iteration).
  [[nodiscard]] double mpi_seconds() const noexcept {
    std::unique_lock lock(mutex_, std::defer_lock);  // guard(), inline: read every iteration
    if (thread_safe_) lock.lock();
    std::uint64_t ticks = mpi_ticks_;
    if (threads_inside_ > 0) {
      const std::uint64_t now = timer_.now();
      if (now > mpi_since_) ticks += now - mpi_since_;
    }
    return timer_.seconds(ticks);
  }
  /// Sum over all operations since start-up (seconds: the calls' summed times).
  [[nodiscard]] OpStats totals() const noexcept;
  /// All rows since start-up, in operation order.
  [[nodiscard]] std::vector<OpRecord> records() const;

 private:
  // A row's counts, with its time in timer ticks.
  struct Tally {
    std::uint64_t calls = 0;
    std::uint64_t bytes_sent = 0;
    std::uint64_t bytes_received = 0;
    std::uint64_t ticks = 0;
    Tally& operator+=(const Tally& other) noexcept {
      calls += other.calls;
      bytes_sent += other.bytes_sent;
      bytes_received += other.bytes_received;
      ticks += other.ticks;
      return *this;
    }
  };
  struct Row {
    int comm_size;
    Tally tally;
  };
  // The first thread to enter opens a stretch of MPI time, the last to leave
  // closes it; a stretch starts no earlier than the previous one ended, so
  // stretches never overlap even when timer reads and locks race.
  void enter(std::uint64_t now) noexcept {
    if (threads_inside_++ == 0) mpi_since_ = std::max(now, mpi_until_);
  }
  void leave(std::uint64_t now) noexcept {
    if (--threads_inside_ > 0) return;
    mpi_until_ = std::max(now, mpi_since_);
    mpi_ticks_ += mpi_until_ - mpi_since_;
  }
  // The call's row grows; a row's first call (out of line) adds the row.
  void add(MpiOp op, int comm_size, const Tally& call) noexcept {
    std::vector<Row>& rows = table_[static_cast<std::size_t>(op)];
    for (Row& row : rows) {
      if (row.comm_size == comm_size) {
        row.tally += call;
        return;
      }
    }
    add_row(rows, comm_size, call);
  }
  static void add_row(std::vector<Row>& rows, int comm_size, const Tally& call) noexcept;
  [[nodiscard]] OpStats stats(const Tally& tally) const noexcept;
  /// Locked only when other threads may record (MPI_THREAD_MULTIPLE).
  [[nodiscard]] std::unique_lock<std::mutex> guard() const;
  /// MPI freed a communicator the shape cache knows (CommShapeCache::FreeCallback).
  static void forget_freed(MPI_Comm comm, void* profile) noexcept;

  bool thread_safe_;
  IntervalTimer timer_;
  mutable std::mutex mutex_;
  int threads_inside_ = 0;       // wrapped calls under way (nested ones too)
  std::uint64_t mpi_since_ = 0;  // ticks: where the open stretch of MPI time began
  std::uint64_t mpi_until_ = 0;  // ticks: where the last stretch ended
  std::uint64_t mpi_ticks_ = 0;  // of the closed stretches
  std::array<std::vector<Row>, kMpiOpCount> table_;
  CommShapeCache shapes_;
};

/// Rows of `now` minus the matching rows of `before` (rows with no calls dropped):
/// what happened between two snapshots, e.g. during one sampling interval.
std::vector<OpRecord> profile_difference(const std::vector<OpRecord>& now,
                                         const std::vector<OpRecord>& before);

}  // namespace flexmpi
