#include "redistribution/halo_exchange.hpp"

#include <algorithm>
#include <climits>
#include <iterator>
#include <string>
#include <utility>

#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {

namespace {

// The rows of [first, end) that `block` owns, as a message of buffer rows of
// a buffer whose block starts at global row `displ` after `ghost_rows` rows.
void add_overlap(std::vector<HaloMessage>& messages, int peer, const RowBlock& block,
                 std::int64_t first, std::int64_t end, std::int64_t displ, std::int64_t ghost_rows,
                 int tag) {
  const std::int64_t lo = std::max(first, block.displ);
  const std::int64_t hi = std::min(end, block.displ + block.count);
  if (lo < hi) messages.push_back({peer, lo - displ + ghost_rows, hi - lo, tag});
}

}  // namespace

HaloPlan plan_halo(std::span<const RowBlock> blocks, int rank, std::int64_t ghost_rows) {
  if (ghost_rows < 0) {
    throw Error(Errc::invalid_argument,
                "ghost rows=" + std::to_string(ghost_rows) + ": expected >= 0");
  }
  if (rank < 0 || static_cast<std::size_t>(rank) >= blocks.size()) {
    throw Error(Errc::invalid_argument, "rank " + std::to_string(rank) + " has no block among " +
                                            std::to_string(blocks.size()));
  }
  HaloPlan plan;
  const RowBlock& mine = blocks[static_cast<std::size_t>(rank)];
  if (mine.count == 0 || ghost_rows == 0) return plan;
  const std::int64_t end = mine.displ + mine.count;
  for (std::size_t p = 0; p < blocks.size(); ++p) {
    const RowBlock& theirs = blocks[p];
    const int peer = static_cast<int>(p);
    if (peer == rank || theirs.count == 0) continue;
    // Their rows in my ghost rows; my rows in theirs.
    add_overlap(plan.receives, peer, theirs, mine.displ - ghost_rows, mine.displ, mine.displ,
                ghost_rows, kHaloBeforeTag);
    add_overlap(plan.receives, peer, theirs, end, end + ghost_rows, mine.displ, ghost_rows,
                kHaloAfterTag);
    const std::int64_t their_end = theirs.displ + theirs.count;
    add_overlap(plan.sends, peer, mine, theirs.displ - ghost_rows, theirs.displ, mine.displ,
                ghost_rows, kHaloBeforeTag);
    add_overlap(plan.sends, peer, mine, their_end, their_end + ghost_rows, mine.displ, ghost_rows,
                kHaloAfterTag);
  }
  return plan;
}

HaloExchange::HaloExchange(HaloPlan plan, std::size_t row_bytes, MPI_Comm comm)
    : plan_(std::move(plan)), row_bytes_(row_bytes), comm_(comm) {
  for (const auto* messages : {&plan_.receives, &plan_.sends}) {
    for (const HaloMessage& message : *messages) {
      // Rows are at most INT_MAX (counted in int), so this product does not overflow.
      const auto bytes = static_cast<std::uint64_t>(message.rows) * row_bytes_;
      if (bytes > INT_MAX) {
        throw Error(Errc::invalid_argument, "a halo message of " + std::to_string(message.rows) +
                                                " rows of " + std::to_string(row_bytes_) +
                                                " bytes exceeds INT_MAX bytes");
      }
    }
  }
  requests_.assign(plan_.receives.size() + plan_.sends.size(), MPI_REQUEST_NULL);
}

HaloExchange::~HaloExchange() {
  if (started_)
    PMPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
}

void HaloExchange::start(void* buffer) {
  if (started_) {
    throw Error(Errc::bad_state,
                "the halo exchange was started and not finished: finish it before starting "
                "another");
  }
  auto* rows = static_cast<char*>(buffer);
  MPI_Request* request = requests_.data();
  for (const HaloMessage& message : plan_.receives) {
    check_mpi(PMPI_Irecv(rows + message.first_row * row_bytes_,
                         static_cast<int>(message.rows * row_bytes_), MPI_BYTE, message.peer,
                         message.tag, comm_, request++),
              "MPI_Irecv (halo)");
  }
  for (const HaloMessage& message : plan_.sends) {
    check_mpi(PMPI_Isend(rows + message.first_row * row_bytes_,
                         static_cast<int>(message.rows * row_bytes_), MPI_BYTE, message.peer,
                         message.tag, comm_, request++),
              "MPI_Isend (halo)");
  }
  started_ = true;
}

void HaloExchange::finish() {
  if (!started_) {
    throw Error(Errc::bad_state, "no halo exchange was started: start one before finishing it");
  }
  started_ = false;
  check_mpi(PMPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall (halo)");
}

HaloExchange& HaloExchanges::prepare(const void* address, std::span<const RowBlock> blocks,
                                     const Layout& layout) {
  auto entry = std::find_if(entries_.begin(), entries_.end(),
                            [&](const Entry& e) { return e.address == address; });
  if (entry == entries_.end()) {
    entries_.push_back({address, {}, {}, nullptr});
    entry = std::prev(entries_.end());
  }
  const bool current =
      entry->exchange != nullptr && entry->layout == layout &&
      std::equal(blocks.begin(), blocks.end(), entry->blocks.begin(), entry->blocks.end());
  if (current) return *entry->exchange;
  if (entry->exchange != nullptr && entry->exchange->started()) {
    throw Error(Errc::bad_state,
                "the blocks or the rows changed while a halo exchange was started: finish it "
                "before any call that may move rows");
  }
  entry->exchange = std::make_unique<HaloExchange>(
      plan_halo(blocks, layout.rank, layout.ghost_rows), layout.row_bytes, layout.comm);
  entry->blocks.assign(blocks.begin(), blocks.end());
  entry->layout = layout;
  return *entry->exchange;
}

HaloExchange* HaloExchanges::find(const void* address) {
  for (Entry& entry : entries_) {
    if (entry.address == address) return entry.exchange.get();
  }
  return nullptr;
}

bool HaloExchanges::any_started() const {
  return std::any_of(entries_.begin(), entries_.end(), [](const Entry& entry) {
    return entry.exchange != nullptr && entry.exchange->started();
  });
}

void HaloExchanges::forget(const void* address) {
  std::erase_if(entries_, [&](const Entry& entry) { return entry.address == address; });
}

}  // namespace flexmpi
