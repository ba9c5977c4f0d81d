// The halo plan (which rows come from which process, which go where) against
// a row-by-row brute force, and the named cases: neighbours shorter than the
// ghost rows, the first and last blocks, empty blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <random>
#include <tuple>

#include "../support/random_decomposition.hpp"
#include "flexmpi/error.hpp"
#include "redistribution/halo_exchange.hpp"

namespace flexmpi {
namespace {

using test::owner;
using test::random_decomposition;

// Appends one row to `messages`, extending the last message if it continues it.
void add_row(std::vector<HaloMessage>& messages, int peer, std::int64_t buffer_row, int tag) {
  if (!messages.empty() && messages.back().peer == peer && messages.back().tag == tag &&
      messages.back().first_row + messages.back().rows == buffer_row) {
    ++messages.back().rows;
  } else {
    messages.push_back({peer, buffer_row, 1, tag});
  }
}

// The ghost rows of `block` as (global row, tag) pairs, in buffer order.
std::vector<std::pair<std::int64_t, int>> ghost_rows_of(const RowBlock& block, std::int64_t h) {
  std::vector<std::pair<std::int64_t, int>> rows;
  for (std::int64_t k = h; k > 0; --k) rows.emplace_back(block.displ - k, kHaloBeforeTag);
  for (std::int64_t k = 0; k < h; ++k)
    rows.emplace_back(block.displ + block.count + k, kHaloAfterTag);
  return rows;
}

void sort_messages(std::vector<HaloMessage>& messages) {
  std::sort(messages.begin(), messages.end(), [](const HaloMessage& a, const HaloMessage& b) {
    return std::tie(a.peer, a.tag, a.first_row) < std::tie(b.peer, b.tag, b.first_row);
  });
}

HaloPlan brute_force(const Decomposition& blocks, int rank, std::int64_t h) {
  HaloPlan plan;
  const RowBlock& mine = blocks[static_cast<std::size_t>(rank)];
  if (mine.count == 0) return plan;
  for (const auto& [row, tag] : ghost_rows_of(mine, h)) {
    const int from = owner(blocks, row);
    if (from >= 0) add_row(plan.receives, from, row - mine.displ + h, tag);
  }
  for (std::size_t p = 0; p < blocks.size(); ++p) {
    if (static_cast<int>(p) == rank || blocks[p].count == 0) continue;
    for (const auto& [row, tag] : ghost_rows_of(blocks[p], h)) {
      if (owner(blocks, row) == rank)
        add_row(plan.sends, static_cast<int>(p), row - mine.displ + h, tag);
    }
  }
  sort_messages(plan.receives);
  sort_messages(plan.sends);
  return plan;
}

TEST(HaloPlan, MatchesBruteForceOnRandomDecompositionsInAnyRankOrder) {
  std::mt19937_64 random(20150601);
  for (int trial = 0; trial < 600; ++trial) {
    const int nprocs = 1 + trial % 7;
    const std::int64_t rows = static_cast<std::int64_t>(random() % 30);
    const std::int64_t h = static_cast<std::int64_t>(random() % 5);
    Decomposition blocks = random_decomposition(rows, nprocs, random);
    if (trial % 2 == 1) std::shuffle(blocks.begin(), blocks.end(), random);
    std::int64_t sent = 0, received = 0;
    for (int rank = 0; rank < nprocs; ++rank) {
      HaloPlan plan = plan_halo(blocks, rank, h);
      sort_messages(plan.receives);
      sort_messages(plan.sends);
      const HaloPlan expected = brute_force(blocks, rank, h);
      EXPECT_EQ(plan.receives, expected.receives) << "trial " << trial << " rank " << rank;
      EXPECT_EQ(plan.sends, expected.sends) << "trial " << trial << " rank " << rank;
      for (const HaloMessage& m : plan.receives) received += m.rows;
      for (const HaloMessage& m : plan.sends) sent += m.rows;
    }
    EXPECT_EQ(sent, received) << "trial " << trial;
  }
}

TEST(HaloPlan, GhostRowsComeFromSeveralShortNeighbours) {
  // Rank 0 owns rows 0..4; ranks 1 and 2 one row each; 3 ghost rows after
  // rank 0's block are rows 5, 6, 7 of ranks 1, 2 and 3 (buffer rows 8..10).
  const Decomposition blocks = {{5, 0}, {1, 5}, {1, 6}, {5, 7}};
  const HaloPlan plan = plan_halo(blocks, 0, 3);
  const std::vector<HaloMessage> receives = {
      {1, 8, 1, kHaloAfterTag}, {2, 9, 1, kHaloAfterTag}, {3, 10, 1, kHaloAfterTag}};
  EXPECT_EQ(plan.receives, receives);
  // Rank 0's rows 2..4 fill rank 1's ghost rows before (all of them: rows
  // 2..4, buffer rows 2..4 of rank 0), rows 3..4 rank 2's, row 4 rank 3's.
  const std::vector<HaloMessage> sends = {
      {1, 5, 3, kHaloBeforeTag}, {2, 6, 2, kHaloBeforeTag}, {3, 7, 1, kHaloBeforeTag}};
  EXPECT_EQ(plan.sends, sends);
  // Rank 1 (one row, 3 ghost rows a side): rows 2..4 from rank 0, rows 6..8
  // from ranks 2 and 3; its one row goes to everyone.
  const HaloPlan middle = plan_halo(blocks, 1, 3);
  const std::vector<HaloMessage> middle_receives = {
      {0, 0, 3, kHaloBeforeTag}, {2, 4, 1, kHaloAfterTag}, {3, 5, 2, kHaloAfterTag}};
  EXPECT_EQ(middle.receives, middle_receives);
  const std::vector<HaloMessage> middle_sends = {
      {0, 3, 1, kHaloAfterTag}, {2, 3, 1, kHaloBeforeTag}, {3, 3, 1, kHaloBeforeTag}};
  EXPECT_EQ(middle.sends, middle_sends);
}

TEST(HaloPlan, FirstAndLastBlocksHaveNoOutsideNeighbour) {
  const Decomposition blocks = {{4, 0}, {4, 4}};
  const HaloPlan first = plan_halo(blocks, 0, 2);
  const std::vector<HaloMessage> first_receives = {{1, 6, 2, kHaloAfterTag}};
  EXPECT_EQ(first.receives, first_receives);
  const HaloPlan last = plan_halo(blocks, 1, 2);
  const std::vector<HaloMessage> last_receives = {{0, 0, 2, kHaloBeforeTag}};
  EXPECT_EQ(last.receives, last_receives);
  EXPECT_TRUE(plan_halo(Decomposition{{8, 0}}, 0, 2).receives.empty());
}

TEST(HaloPlan, EmptyBlocksNeitherSendNorReceive) {
  // Rank 1 is empty: ranks 0 and 2 are each other's neighbours.
  const Decomposition blocks = {{3, 0}, {0, 3}, {3, 3}};
  EXPECT_TRUE(plan_halo(blocks, 1, 1).receives.empty());
  EXPECT_TRUE(plan_halo(blocks, 1, 1).sends.empty());
  const std::vector<HaloMessage> expected = {{2, 4, 1, kHaloAfterTag}};
  EXPECT_EQ(plan_halo(blocks, 0, 1).receives, expected);
  EXPECT_TRUE(plan_halo(blocks, 0, 0).receives.empty());
}

TEST(HaloPlan, RefusesBadArguments) {
  const Decomposition blocks = {{3, 0}, {3, 3}};
  EXPECT_THROW(plan_halo(blocks, 0, -1), Error);
  EXPECT_THROW(plan_halo(blocks, 2, 1), Error);
  EXPECT_THROW(plan_halo(blocks, -1, 1), Error);
}

TEST(HaloExchange, RefusesMessagesBeyondIntMaxBytesAndUnpairedCalls) {
  const Decomposition blocks = {{3, 0}, {3, 3}};
  try {
    HaloExchange exchange(plan_halo(blocks, 0, 2), std::size_t{INT_MAX}, MPI_COMM_SELF);
    ADD_FAILURE() << "a message of 2 rows of INT_MAX bytes was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
  }
  HaloExchange nothing(plan_halo(Decomposition{{3, 0}}, 0, 2), 8, MPI_COMM_SELF);
  try {
    nothing.finish();
    ADD_FAILURE() << "finish without start was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_state);
  }
  double rows[7] = {};
  nothing.start(rows);
  EXPECT_THROW(nothing.start(rows), Error);
  nothing.finish();
}

TEST(HaloExchanges, RebuildsWhenTheBlocksOrTheRowsChange) {
  HaloExchanges halos;
  int key = 0;
  const HaloExchanges::Layout layout{1, 8, MPI_COMM_SELF, 0};
  const Decomposition one = {{4, 0}};
  HaloExchange* built = &halos.prepare(&key, one, layout);
  EXPECT_EQ(&halos.prepare(&key, one, layout), built);
  EXPECT_EQ(halos.find(&key), built);
  HaloExchanges::Layout wider = layout;
  wider.row_bytes = 16;
  EXPECT_EQ(halos.prepare(&key, one, wider).row_bytes(), 16u);
  const Decomposition moved = {{5, 0}};
  double rows[7] = {};
  HaloExchange& current = halos.prepare(&key, moved, wider);
  current.start(rows);
  EXPECT_TRUE(halos.any_started());
  EXPECT_THROW(halos.prepare(&key, one, wider), Error);
  current.finish();
  halos.forget(&key);
  EXPECT_EQ(halos.find(&key), nullptr);
}

}  // namespace
}  // namespace flexmpi
