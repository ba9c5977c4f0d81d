// The transfer plan (thesis Alg. 4, calculatePartitions) against a
// row-by-row brute force, on random decompositions with empty blocks.
#include "redistribution/transfer_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>

#include "../support/random_decomposition.hpp"

namespace flexmpi {
namespace {

using test::owner;
using test::random_decomposition;

// Rows of `rank` that go to (or come from) another process, grouped in runs.
std::vector<Transfer> brute_force(const Decomposition& mine, const Decomposition& theirs,
                                  std::int64_t rows, int rank) {
  std::vector<Transfer> result;
  for (std::int64_t row = 0; row < rows; ++row) {
    if (owner(mine, row) != rank) continue;
    const int peer = owner(theirs, row);
    if (peer == rank) continue;
    if (!result.empty() && result.back().peer == peer &&
        result.back().first + result.back().rows == row) {
      ++result.back().rows;
    } else {
      result.push_back({peer, row, 1});
    }
  }
  return result;
}

// A valid tiling listed in another rank order ("rank 1 owns the
// first rows") was refused with "rows 0..49 belong to no process"; every
// other trial shuffles which rank owns which block.
TEST(TransferPlan, MatchesBruteForceOnRandomDecompositionsInAnyRankOrder) {
  std::mt19937_64 random(20150601);
  for (int trial = 0; trial < 800; ++trial) {
    const int nprocs = 1 + trial % 9;
    const std::int64_t rows =
        trial % 5 == 0 ? trial % 4 : 1 + static_cast<std::int64_t>(random() % 60);
    Decomposition from = random_decomposition(rows, nprocs, random);
    Decomposition to = random_decomposition(rows, nprocs, random);
    if (trial % 2 == 1) {
      std::shuffle(from.begin(), from.end(), random);
      std::shuffle(to.begin(), to.end(), random);
    }
    ASSERT_EQ(check_decomposition(from, rows, nprocs, "from"), "") << "trial " << trial;
    ASSERT_EQ(check_decomposition(to, rows, nprocs, "to"), "") << "trial " << trial;
    std::int64_t sent = 0, received = 0;
    for (int rank = 0; rank < nprocs; ++rank) {
      const TransferPlan plan = plan_transfers(from, to, rank);
      EXPECT_EQ(plan.sends, brute_force(from, to, rows, rank)) << "trial " << trial;
      EXPECT_EQ(plan.receives, brute_force(to, from, rows, rank)) << "trial " << trial;
      // Kept + sent = old block, kept + received = new block.
      std::int64_t out = plan.kept.count, in = plan.kept.count;
      for (const Transfer& t : plan.sends) out += t.rows;
      for (const Transfer& t : plan.receives) in += t.rows;
      EXPECT_EQ(out, from[rank].count);
      EXPECT_EQ(in, to[rank].count);
      sent += out - plan.kept.count;
      received += in - plan.kept.count;
    }
    EXPECT_EQ(sent, received);
  }
}

TEST(TransferPlan, BadTilingsSayWhichRowsAreWrong) {
  // 100 rows; "" is a valid tiling: rank order is free (rank 0 may own the second half).
  const std::pair<Decomposition, std::string> cases[] = {
      {{{50, 50}, {50, 0}}, ""},
      {{{0, 100}, {60, 40}, {40, 0}}, ""},
      {{{40, 50}, {50, 0}},
       "to: the blocks cover 90 rows, the structures have 100 (rows 90..99 belong to no process)"},
      {{{40, 60}, {50, 0}},
       "to: rows 50..59 belong to no process (a gap before the block of rank 0 {count 40, displ "
       "60})"},
      {{{50, 40}, {50, 0}},
       "to: the block of rank 0 {count 50, displ 40} overlaps the block of rank 1 {count 50, "
       "displ 0} (rows 40..49 are in both)"},
      {{{60, 50}, {50, 0}},
       "to: the block of rank 0 {count 60, displ 50} ends beyond the 100 rows of the structures"},
      {{{50, -50}, {50, 0}}, "to: the block of rank 0 {count 50, displ -50} starts before row 0"},
  };
  for (const auto& [blocks, expected] : cases) {
    EXPECT_EQ(check_decomposition(blocks, 100, static_cast<int>(blocks.size()), "to"), expected);
  }
}

TEST(TransferPlan, IdenticalDecompositionsMoveNothing) {
  const Decomposition blocks = {{3, 0}, {0, 3}, {5, 3}};
  for (int rank = 0; rank < 3; ++rank) {
    const TransferPlan plan = plan_transfers(blocks, blocks, rank);
    EXPECT_TRUE(plan.sends.empty());
    EXPECT_TRUE(plan.receives.empty());
    EXPECT_EQ(plan.kept.count, blocks[rank].count);
  }
}

TEST(TransferPlan, ChecksDecompositions) {
  EXPECT_EQ(check_decomposition(Decomposition{{4, 0}, {6, 4}}, 10, 2, "to"), "");
  EXPECT_EQ(check_decomposition(Decomposition{}, 0, 0, "to"), "");
  const auto error = [](const Decomposition& blocks, std::int64_t rows, int nprocs) {
    return check_decomposition(blocks, rows, nprocs, "to");
  };
  EXPECT_NE(error({{4, 0}, {6, 4}}, 10, 3).find("2 blocks for 3 processes"), std::string::npos);
  EXPECT_NE(error({{-1, 0}, {11, 0}}, 10, 2).find("negative count"), std::string::npos);
  EXPECT_NE(error({{4, 0}, {6, 3}}, 10, 2).find("overlaps"), std::string::npos);
  EXPECT_NE(error({{4, 0}, {5, 5}}, 10, 2).find("gap"), std::string::npos);
  EXPECT_NE(error({{4, 1}, {5, 5}}, 10, 2).find("gap"), std::string::npos);
  EXPECT_NE(error({{4, 0}, {7, 4}}, 10, 2).find("beyond the 10 rows"), std::string::npos);
  EXPECT_NE(error({{4, 0}, {5, 4}}, 10, 2).find("cover 9 rows"), std::string::npos);
  EXPECT_NE(error({{4, 0}, {5, 4}}, 10, 2).find("to"), std::string::npos);
  // Huge counts must not overflow the running total.
  EXPECT_NE(error({{INT64_MAX, 0}, {INT64_MAX, 0}}, 10, 2).find("beyond"), std::string::npos);
}

TEST(TransferPlan, MessageCount) {
  EXPECT_EQ(message_count(0, 7), 0u);
  EXPECT_EQ(message_count(7, 7), 1u);
  EXPECT_EQ(message_count(8, 7), 2u);
  EXPECT_EQ(message_count(3ull << 31, 2147483647ull), 4u);
}

}  // namespace
}  // namespace flexmpi
