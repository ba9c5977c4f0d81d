// The decomposition the registered data follow (thesis 4.5.2): the global
// row count, every process's block, the registered structures, and this
// process's work under the workload model. Held by the runtime; the
// adaptation loop and the process manager change it, through this interface.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/row_block.hpp"
#include "base/workload_model.hpp"
#include "redistribution/data_registry.hpp"
#include "redistribution/halo_exchange.hpp"
#include "redistribution/record_registry.hpp"

namespace flexmpi {

class Context;

class DecompositionState {
 public:
  DecompositionState(const Context& context, WorkloadModel model);

  [[nodiscard]] WorkloadModel model() const { return model_; }
  /// Rows of the decomposition; -1 before there is one.
  [[nodiscard]] std::int64_t global_rows() const { return global_rows_; }
  /// Every process's block (empty before any XMPI_Get_wsize/registration).
  [[nodiscard]] const Decomposition& blocks() const { return blocks_; }
  /// Whether the last API call that may change the blocks changed any
  /// (XMPI_Get_blocks_changed); that call sets it.
  [[nodiscard]] bool blocks_changed() const { return blocks_changed_; }
  void set_blocks_changed(bool changed) { blocks_changed_ = changed; }
  /// This process's block ({} without a decomposition).
  [[nodiscard]] RowBlock own_block() const;

  /// The block `rank` owns in the decomposition of `rows` rows over `nprocs`
  /// processes: the current decomposition if it is that one, else the block
  /// partition (which becomes the current one when it is the application's).
  RowBlock block_of(int rank, int nprocs, std::int64_t rows);

  /// Registered data (thesis 4.5): the structures that follow the decomposition.
  DataRegistry& data() { return data_; }
  [[nodiscard]] const DataRegistry& data() const { return data_; }
  /// The application's records (XMPI_Register_record): state that is not
  /// rows, handed to new processes with the rows and checkpointed with them.
  RecordRegistry& records() { return records_; }
  [[nodiscard]] const RecordRegistry& records() const { return records_; }

  /// The halo exchanges of registered structures with ghost rows, each
  /// rebuilt at its next use after the blocks change.
  HaloExchanges& halos() { return halos_; }

  /// Work units of this process's partition (work metric).
  [[nodiscard]] double work() const { return work_units_; }
  void set_work(double work_units) { work_units_ = work_units; }
  /// Recomputes this process's work under the workload model (rows,
  /// nonzeros of the registered data, or the weights of its rows: `weight`,
  /// else the latest remembered, else its rows).
  void update_work(std::span<const double> weight = {});
  /// Every row's work in the model's units (collective for nnz); empty for count.
  /// The nonzeros are remembered (latest_row_work); the weights are by
  /// remember_row_weights, once an interval.
  std::vector<double> global_row_work(std::span<const double> weight);
  /// The weight model's per-row work of the interval just measured (XMPI_LB_WEIGHT),
  /// remembered (latest_row_work).
  void remember_row_weights(std::span<const double> weight);
  /// The per-row work last seen under the nnz or weight model (empty: none):
  /// what a spawn or removal splits the rows by (split_rows).
  [[nodiscard]] const std::vector<double>& latest_row_work() const { return row_work_; }

  /// Moves every registered structure to `target` and makes it the
  /// decomposition (collective over the library communicator).
  RedistributionStats move_to(const Decomposition& target);
  /// After a spawn: every process, the new ones too, holds all rows of each
  /// replicated structure (DataRegistry::share_replicated). Collective.
  void share_replicated();
  /// XMPI_Redistribute_data: every process gives only its own old and new
  /// block; they are gathered, the data move, and if `from` was the current
  /// decomposition (or there was none) `to` becomes it (collective).
  RedistributionStats redistribute_blocks(const RowBlock& old_block, const RowBlock& new_block);

  /// A restart's first decomposition (checkpoint/): block_of gives it, in
  /// place of the block partition, when the application's rows are `rows`.
  void plan_first(std::int64_t rows, Decomposition blocks);
  /// A reconfiguration decided the decomposition (`rows` < 0: none); the
  /// registry's local block follows it when `own_block_changes`.
  void assign(std::int64_t rows, Decomposition blocks, bool own_block_changes = false);
  /// A removed process holds nothing any more.
  void clear();

 private:
  const Context& context_;
  WorkloadModel model_;
  std::int64_t global_rows_ = -1;
  Decomposition blocks_;
  bool blocks_changed_ = false;
  DataRegistry data_;
  HaloExchanges halos_;
  RecordRegistry records_;
  double work_units_ = 0.0;
  std::vector<double> row_work_;
  std::int64_t planned_rows_ = -1;  // plan_first
  Decomposition planned_blocks_;    // per row, the latest global_row_work / weights
};

}  // namespace flexmpi
