#include "profiling/comm_profile.hpp"

#include <algorithm>

namespace flexmpi {

std::string_view mpi_op_name(MpiOp op) {
  static constexpr std::array<std::string_view, kMpiOpCount> names = {
#define FLEXMPI_WRAP(name, ...) "MPI_" #name,
#include "profiling/mpi_functions.def"
#undef FLEXMPI_WRAP
  };
  return names.at(static_cast<std::size_t>(op));
}

OpStats& OpStats::operator+=(const OpStats& other) {
  calls += other.calls;
  bytes_sent += other.bytes_sent;
  bytes_received += other.bytes_received;
  seconds += other.seconds;
  return *this;
}

OpStats& OpStats::operator-=(const OpStats& other) {
  calls -= other.calls;
  bytes_sent -= other.bytes_sent;
  bytes_received -= other.bytes_received;
  seconds -= other.seconds;
  return *this;
}

std::unique_lock<std::mutex> CommProfile::guard() const {
  std::unique_lock lock(mutex_, std::defer_lock);
  if (thread_safe_) lock.lock();
  return lock;
}

void CommProfile::record(MpiOp op, int comm_size, std::uint64_t sent, std::uint64_t received,
                         std::uint64_t ticks) noexcept {
  const auto lock = guard();
  add(op, comm_size, {1, sent, received, ticks});
}

void CommProfile::forget_freed(MPI_Comm comm, void* profile) noexcept {
  auto* self = static_cast<CommProfile*>(profile);
  const auto lock = self->guard();
  self->shapes_.forget(comm);
}

OpStats CommProfile::stats(const Tally& tally) const noexcept {
  return {tally.calls, tally.bytes_sent, tally.bytes_received, timer_.seconds(tally.ticks)};
}

OpStats CommProfile::totals() const noexcept {
  const auto lock = guard();
  Tally sum;
  for (const auto& rows : table_) {
    for (const Row& row : rows) sum += row.tally;
  }
  return stats(sum);
}

void CommProfile::add_row(std::vector<Row>& rows, int comm_size, const Tally& call) noexcept {
  try {
    rows.push_back({comm_size, call});
  } catch (...) {
    // Out of memory while profiling: the call is lost from the rows, not the MPI time.
  }
}

std::vector<OpRecord> CommProfile::records() const {
  const auto lock = guard();
  std::vector<OpRecord> all;
  for (std::size_t op = 0; op < kMpiOpCount; ++op) {
    for (const Row& row : table_[op]) {
      all.push_back({static_cast<MpiOp>(op), row.comm_size, stats(row.tally)});
    }
  }
  return all;
}

std::vector<OpRecord> profile_difference(const std::vector<OpRecord>& now,
                                         const std::vector<OpRecord>& before) {
  std::vector<OpRecord> difference;
  for (OpRecord row : now) {
    const auto earlier = std::find_if(before.begin(), before.end(), [&](const OpRecord& b) {
      return b.op == row.op && b.comm_size == row.comm_size;
    });
    if (earlier != before.end()) row.stats -= earlier->stats;
    if (row.stats.calls > 0) difference.push_back(row);
  }
  return difference;
}

}  // namespace flexmpi
