#include "redistribution/decomposition_state.hpp"

#include <array>
#include <numeric>
#include <string>

#include "base/context.hpp"
#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {

DecompositionState::DecompositionState(const Context& context, WorkloadModel model)
    : context_(context), model_(model) {}

RowBlock DecompositionState::own_block() const {
  return blocks_.empty() ? RowBlock{} : blocks_[static_cast<std::size_t>(context_.rank())];
}

RowBlock DecompositionState::block_of(int rank, int nprocs, std::int64_t rows) {
  if (rows == global_rows_ && nprocs == static_cast<int>(blocks_.size())) {
    return blocks_[static_cast<std::size_t>(rank)];
  }
  const bool first = nprocs == context_.size() && global_rows_ < 0;
  Decomposition blocks =
      first && rows == planned_rows_ ? planned_blocks_ : block_decomposition(rows, nprocs);
  const RowBlock block = blocks[static_cast<std::size_t>(rank)];
  if (first) {
    // The first decomposition of the whole application is the one the
    // registered structures share (thesis 4.5.2).
    assign(rows, std::move(blocks), /*own_block_changes=*/true);
  }
  return block;
}

std::vector<double> DecompositionState::global_row_work(std::span<const double> weight) {
  if (model_ == WorkloadModel::weight) return {weight.begin(), weight.end()};
  if (model_ == WorkloadModel::count) return {};
  // Every process contributes the nonzero count of each of its rows.
  const std::vector<double> local = data_.local_row_nonzeros();
  std::vector<int> counts, displs;
  for (const RowBlock& block : blocks_) {
    counts.push_back(static_cast<int>(block.count));
    displs.push_back(static_cast<int>(block.displ));
  }
  std::vector<double> rows(static_cast<std::size_t>(global_rows_));
  check_mpi(PMPI_Allgatherv(local.data(), static_cast<int>(local.size()), MPI_DOUBLE, rows.data(),
                            counts.data(), displs.data(), MPI_DOUBLE, context_.library_comm()),
            "MPI_Allgatherv (row nonzeros)");
  row_work_ = rows;
  return rows;
}

void DecompositionState::remember_row_weights(std::span<const double> weight) {
  if (model_ == WorkloadModel::weight) row_work_.assign(weight.begin(), weight.end());
}

void DecompositionState::update_work(std::span<const double> weight) {
  if (blocks_.empty()) return;
  const RowBlock mine = own_block();
  // Without weights given, the latest seen: after a spawn, counted in rows,
  // the weighted processes' speeds came out up to 9 times apart.
  if (weight.empty() && row_work_.size() == static_cast<std::size_t>(global_rows_)) {
    weight = row_work_;
  }
  if (model_ == WorkloadModel::nnz) {
    const std::vector<double> rows = data_.local_row_nonzeros();
    work_units_ = std::accumulate(rows.begin(), rows.end(), 0.0);
  } else if (model_ == WorkloadModel::weight && !weight.empty()) {
    work_units_ =
        std::accumulate(weight.begin() + mine.displ, weight.begin() + mine.displ + mine.count, 0.0);
  } else {
    work_units_ = static_cast<double>(mine.count);
  }
}

RedistributionStats DecompositionState::move_to(const Decomposition& target) {
  const RedistributionStats stats = data_.redistribute(blocks_, target, context_.library_comm());
  blocks_ = target;
  return stats;
}

void DecompositionState::share_replicated() {
  data_.share_replicated(blocks_, context_.library_comm());
}

RedistributionStats DecompositionState::redistribute_blocks(const RowBlock& old_block,
                                                            const RowBlock& new_block) {
  // Every process knows only its own blocks: gather both decompositions.
  const int size = context_.size();
  const std::array<std::int64_t, 4> mine = {old_block.count, old_block.displ, new_block.count,
                                            new_block.displ};
  std::vector<std::int64_t> all(4 * static_cast<std::size_t>(size));
  check_mpi(PMPI_Allgather(mine.data(), 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T,
                           context_.library_comm()),
            "MPI_Allgather (partitions)");
  Decomposition from, to;
  for (int p = 0; p < size; ++p) {
    from.push_back({all[4 * p], all[4 * p + 1]});
    to.push_back({all[4 * p + 2], all[4 * p + 3]});
  }
  // The registry validates both decompositions against every structure and
  // agrees on errors collectively before anything moves.
  const RedistributionStats stats = data_.redistribute(from, to, context_.library_comm());
  if (from == blocks_ || blocks_.empty()) {
    std::int64_t rows = 0;
    for (const RowBlock& block : to) rows += block.count;
    global_rows_ = rows;
    blocks_ = to;
  }
  update_work({});
  return stats;
}

void DecompositionState::assign(std::int64_t rows, Decomposition blocks, bool own_block_changes) {
  global_rows_ = rows;
  blocks_ = std::move(blocks);
  if (own_block_changes && !blocks_.empty()) data_.set_local_block(own_block());
}

void DecompositionState::plan_first(std::int64_t rows, Decomposition blocks) {
  planned_rows_ = rows;
  planned_blocks_ = std::move(blocks);
}

void DecompositionState::clear() {
  global_rows_ = -1;
  blocks_.clear();
  halos_.clear();
  data_.clear();
  work_units_ = 0.0;
}

}  // namespace flexmpi
