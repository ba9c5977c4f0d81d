// Process creation/termination (eq. 5.6-5.7) and redistribution costs
// (eq. 5.8-5.10 and the transfer-plan pricing).
#include "model/reconfiguration_cost.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

MachineProfile profile() {
  MachineProfile p = MachineProfile::defaults();
  p.intra_node = {1e-6, 1e-9, {}};
  p.inter_node = {1e-5, 1e-8, {}};
  p.gamma = 0;
  p.spawn = {{1, 0.2}, {4, 0.3}};
  p.remove = {{1, 0.001}};
  p.redistribution_latency = 1e-4;
  p.redistribution_seconds_per_byte = 2e-9;
  return p;
}

TEST(ReconfigurationCost, SpawnEq56) {
  const MachineProfile p = profile();
  EXPECT_DOUBLE_EQ(spawn_cost(p, 0), 0.0);
  EXPECT_DOUBLE_EQ(spawn_cost(p, 1), 0.2);
  EXPECT_DOUBLE_EQ(spawn_cost(p, 2), 2 * (0.2 + 0.1 / 3));  // interpolated per process
  EXPECT_DOUBLE_EQ(spawn_cost(p, 4), 4 * 0.3);
  EXPECT_DOUBLE_EQ(spawn_cost(p, 8), 8 * 0.3);  // constant beyond the last point
  EXPECT_THROW(spawn_cost(p, -1), Error);
}

TEST(ReconfigurationCost, RemoveEq57) {
  const MachineProfile p = profile();
  EXPECT_DOUBLE_EQ(remove_cost(p, 3), 0.003);
  EXPECT_DOUBLE_EQ(remove_cost(p, 0), 0.0);
  EXPECT_THROW(remove_cost(p, -2), Error);
  MachineProfile empty = p;
  empty.remove.clear();
  EXPECT_THROW(remove_cost(empty, 1), Error);
}

TEST(ReconfigurationCost, RowBytes) {
  EXPECT_DOUBLE_EQ(row_bytes({StructureKind::vector, Scheme::distributed, 100, 0, 8}), 8);
  EXPECT_DOUBLE_EQ(row_bytes({StructureKind::dense, Scheme::distributed, 100, 0, 8}), 800);
  // 10 nonzeros per row: 10 x (8 + 4) + one row pointer.
  EXPECT_DOUBLE_EQ(row_bytes({StructureKind::sparse, Scheme::distributed, 100, 1000, 8, 4}), 124);
}

const Decomposition kFrom = {{50, 0}, {50, 50}};
const Decomposition kTo = {{75, 0}, {25, 75}};  // rank 1 sends rows 50..74 to rank 0

TEST(ReconfigurationCost, PlannedMovesOnlyRowsThatChangeOwner) {
  const MachineProfile p = profile();
  const std::vector<StructureShape> vector = {
      {StructureKind::vector, Scheme::distributed, 100, 0, 8}};
  const RedistributionEstimate e = redistribution_cost_planned(vector, kFrom, kTo, p);
  EXPECT_DOUBLE_EQ(e.moved_bytes, 25 * 8);
  EXPECT_DOUBLE_EQ(e.busiest_bytes, 25 * 8);
  EXPECT_EQ(e.busiest_messages, 1u);
  EXPECT_DOUBLE_EQ(e.seconds, 1e-4 + 1e-6 + 200 * 2e-9);
  // Across nodes: the inter-node alpha.
  EXPECT_DOUBLE_EQ(redistribution_cost_planned(vector, kFrom, kTo, p, true).seconds,
                   1e-4 + 1e-5 + 200 * 2e-9);
  // Nothing changes owner: nothing to pay.
  EXPECT_DOUBLE_EQ(redistribution_cost_planned(vector, kFrom, kFrom, p).seconds, 0.0);

  const std::vector<StructureShape> all = {
      {StructureKind::dense, Scheme::distributed, 100, 0, 8},
      {StructureKind::sparse, Scheme::replicated, 100, 1000, 8, 4},
  };
  const RedistributionEstimate both = redistribution_cost_planned(all, kFrom, kTo, p);
  EXPECT_DOUBLE_EQ(both.moved_bytes, 25 * (800 + 124));
  EXPECT_EQ(both.busiest_messages, 4u);  // one for the dense matrix, three for the CSR arrays
  EXPECT_DOUBLE_EQ(both.seconds, 1e-4 + 4e-6 + 25 * 924 * 2e-9);
}

TEST(ReconfigurationCost, ThesisBaselineEq58To510) {
  const Hockney h{1e-6, 1e-9, 0};
  const MpiLibrary M = MpiLibrary::mpich;
  // Distributed vector: Alltoallv of the 200 bytes that move, (p-1) alpha + n beta.
  const std::vector<StructureShape> vector = {
      {StructureKind::vector, Scheme::distributed, 100, 0, 8}};
  EXPECT_DOUBLE_EQ(redistribution_cost_thesis(vector, kFrom, kTo, M, h), 1e-6 + 200e-9);
  EXPECT_DOUBLE_EQ(redistribution_cost_thesis(vector, kFrom, kTo, M, h, 2.0),
                   2 * (1e-6 + 200e-9));  // times lambda
  // Replicated vector: Allgatherv, recursive doubling, L alpha + (p-1)/p n beta.
  const std::vector<StructureShape> replicated = {
      {StructureKind::vector, Scheme::replicated, 100, 0, 8}};
  EXPECT_DOUBLE_EQ(redistribution_cost_thesis(replicated, kFrom, kTo, M, h), 1e-6 + 100e-9);
  // Sparse distributed (eq. 5.10): row pointers, then indices and values, all Alltoallv.
  const std::vector<StructureShape> sparse = {
      {StructureKind::sparse, Scheme::distributed, 100, 1000, 8, 4}};
  EXPECT_DOUBLE_EQ(redistribution_cost_thesis(sparse, kFrom, kTo, M, h),
                   3e-6 + (100 + 1000 + 2000) * 1e-9);
}

TEST(ReconfigurationCost, BadInputIsRefused) {
  const MachineProfile p = profile();
  const std::vector<StructureShape> vector = {
      {StructureKind::vector, Scheme::distributed, 100, 0, 8}};
  EXPECT_THROW(redistribution_cost_planned(vector, {}, {}, p), Error);  // zero processes
  EXPECT_THROW(redistribution_cost_planned(vector, kFrom, {{100, 0}}, p), Error);
  EXPECT_THROW(redistribution_cost_planned(vector, kFrom, {{80, 0}, {30, 80}}, p), Error);
  const std::vector<StructureShape> wrong_size = {
      {StructureKind::vector, Scheme::distributed, 99, 0, 8}};
  EXPECT_THROW(redistribution_cost_planned(wrong_size, kFrom, kTo, p), Error);
  const std::vector<StructureShape> no_bytes = {
      {StructureKind::vector, Scheme::distributed, 100, 0, 0}};
  EXPECT_THROW(redistribution_cost_planned(no_bytes, kFrom, kTo, p), Error);
  const std::vector<StructureShape> negative_nnz = {
      {StructureKind::sparse, Scheme::distributed, 100, -5, 8}};
  EXPECT_THROW(
      redistribution_cost_thesis(negative_nnz, kFrom, kTo, MpiLibrary::mpich, p.network(false)),
      Error);
  EXPECT_THROW(redistribution_cost_thesis(vector, {{50, 0}, {-1, 50}}, kTo, MpiLibrary::mpich,
                                          p.network(false)),
               Error);
}

}  // namespace
}  // namespace flexmpi
