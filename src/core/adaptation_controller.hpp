// The adaptation loop (thesis Fig. 3.1, 5.4): one pass per sampling interval,
//
//   monitor (iterations) -> interval exchange -> policy (model, partitioner)
//   -> redistribution / process change -> trace.
//
// The controller owns the loop's state between intervals: the last interval
// report, the policy, the price of a redistribution, the trace. The process
// manager reaches it only through ReconfigurationHooks.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/row_block.hpp"
#include "model/interval_forecaster.hpp"
#include "model/rebalance_model.hpp"
#include "monitoring/interval.hpp"
#include "policies/policy.hpp"
#include "process/process_manager.hpp"
#include "process/reconfiguration_hooks.hpp"
#include "trace/trace_writer.hpp"

namespace flexmpi {

struct Config;
class Context;
class DecompositionState;
class Monitor;

class AdaptationController final : public ReconfigurationHooks {
 public:
  AdaptationController(const Config& config, Context& context, DecompositionState& state,
                       Monitor& monitor, std::string metric_name);

  /// Opens a monitored iteration (thesis Fig. 4.2). closed_by_evaluate: opened
  /// by XMPI_Monitor_si_init, whose iteration XMPI_Eval_lbalance ends; one
  /// opened by XMPI_Monitor_iter_begin must be ended by XMPI_Monitor_iter_end.
  void begin_iteration(std::span<const std::string> events, bool closed_by_evaluate);
  /// Closes it (thesis Fig. 4.3); at the end of a sampling interval this is
  /// collective: the per-process records are exchanged.
  void end_iteration(std::span<long long> counts);
  /// The process manager that carries out the policies' process changes.
  void attach(ProcessManager& processes) { processes_ = &processes; }

  /// XMPI_Eval_lbalance / XMPI_Eval_reconfig (thesis Fig. 5.9): closes the
  /// iteration opened by XMPI_Monitor_si_init and, once per closed interval,
  /// asks the policy and carries out its decision: new blocks, or processes
  /// spawned (as `how` says; they resume at iteration + 1) or removed.
  /// `how` null (XMPI_Eval_lbalance): the processes may not change, and the
  /// policy only balances (IntervalInput::may_change_processes).
  /// Returns this process's block ({0, 0} if it was removed).
  RowBlock evaluate(int iteration, int max_iterations, std::span<const double> weight,
                    const SpawnRequest* how);
  /// MPI_Finalize: writes the record of an interval nobody evaluated and
  /// closes the trace; false if a line of it was lost (reported already).
  bool finish_trace();

  /// Writes a record of its own into the trace (rank 0, with FLEXMPI_TRACE).
  void trace_record(const nlohmann::json& record);

  /// The last completed sampling interval, if any.
  [[nodiscard]] const std::optional<IntervalReport>& last_interval() const {
    return last_interval_;
  }

  // ReconfigurationHooks
  [[nodiscard]] bool iteration_open() const override;
  [[nodiscard]] long long iterations_monitored() const override;
  [[nodiscard]] std::vector<double> fresh_speeds() const override;
  void record_reconfiguration(nlohmann::json event) override;
  void restart_after_reconfiguration() override;
  [[nodiscard]] nlohmann::json export_state() const override;
  void import_state(const nlohmann::json& state) override;

 private:
  /// Exchanges the per-process records of the finished interval (collective).
  void close_interval();
  /// XMPI_Eval_*'s checks of this process's call (a decomposition, the
  /// weights, no open iteration), before anything collective; the first
  /// weights become the rows' work.
  void check_evaluation(std::span<const double> weight);
  /// The trace fields of the last redistribution's measured cost, which the
  /// prediction model's price per byte learns from.
  nlohmann::json measured_redistribution();
  void trace_interval(const nlohmann::json& extra);
  /// Rank 0: predicts the next interval for the blocks the loop leaves, or
  /// for the processes and blocks a policy's `change` leads to.
  void forecast_next(const Decomposition& measured_on, const ProcessChange* change);
  /// Rank 0's PMPI profile of the interval, on every process (collective),
  /// with the machine profile's prices: the policies' communication term.
  [[nodiscard]] CommunicationReplay shared_communication() const;
  /// Rank 0: what the spawns and removals traced since the last record cost.
  [[nodiscard]] MeasuredChange measured_change() const;
  /// Moves the data to the policy's blocks and records what it cost.
  nlohmann::json carry_out(const Decomposition& target, std::span<const double> weight);
  /// Throws on every process if the policy's process change differs between
  /// processes (collective), instead of letting them wait for each other, or
  /// if the policy changes processes where it may not.
  void require_same_change(const PolicyDecision& decision, bool may_change_processes) const;
  /// Spawns or removes the processes of a policy's change, then rebalances.
  RowBlock change_processes(const ProcessChange& change, int iteration, const SpawnRequest& how);

  const Config& config_;
  Context& context_;
  DecompositionState& state_;
  Monitor& monitor_;
  std::string metric_name_;
  std::unique_ptr<Policy> policy_;
  MpiLibrary library_ = MpiLibrary::unknown;  // the linked MPI, for the cost models
  ProcessManager* processes_ = nullptr;
  std::unique_ptr<TraceWriter> trace_;  // rank 0, if FLEXMPI_TRACE
  // Rank 0, with the trace: each interval predicted before it runs (thesis
  // 6.3), and the record that sets the last prediction beside the measurement.
  std::unique_ptr<IntervalForecaster> forecaster_;
  nlohmann::json prediction_record_ = nlohmann::json::object();
  std::optional<IntervalReport> last_interval_;
  bool interval_traced_ = true;
  bool iteration_from_si_init_ = false;
  int intervals_closed_ = 0;
  int reconfiguration_mark_ = 0;  // intervals closed before the last reconfiguration
  // Spawns and removals since the last traced interval (rank 0): they go
  // into the record of the first interval of the new process set.
  nlohmann::json reconfigurations_ = nlohmann::json::array();
  // The prediction model's price of a redistribution (from the machine
  // profile until this run has measured one), and the bytes the last
  // one was predicted to move (priced when its measured time arrives with
  // the next interval report).
  RedistributionCost redistribution_cost_;
  double pending_redistribution_bytes_ = 0.0;
};

}  // namespace flexmpi
