#include "core/adaptation_controller.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "balancing/partitioner.hpp"
#include "base/context.hpp"
#include "base/mpi_check.hpp"
#include "config/config.hpp"
#include "flexmpi/error.hpp"
#include "monitoring/monitor.hpp"
#include "redistribution/decomposition_state.hpp"
#include "util/agreement.hpp"
#include "util/clock.hpp"
#include "util/collective_watchdog.hpp"

namespace flexmpi {

AdaptationController::AdaptationController(const Config& config, Context& context,
                                           DecompositionState& state, Monitor& monitor,
                                           std::string metric_name)
    : config_(config),
      context_(context),
      state_(state),
      monitor_(monitor),
      metric_name_(std::move(metric_name)),
      policy_(make_policy(config.policy, config)),
      redistribution_cost_(config.machine_profile.redistribution_latency,
                           config.machine_profile.redistribution_seconds_per_byte) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  check_mpi(PMPI_Get_library_version(version, &length), "MPI_Get_library_version");
  library_ = detect_mpi_library(std::string_view(version, static_cast<std::size_t>(length)));
  if (context_.rank() == 0 && !config_.trace.empty()) {
    trace_ = std::make_unique<TraceWriter>(config_.trace);
    forecaster_ = std::make_unique<IntervalForecaster>(config_.machine_profile, library_,
                                                       config_.work_profile);
  }
}

CommunicationReplay AdaptationController::shared_communication() const {
  // Rank 0's operations on every process: each process's own profile differs
  // a little, and the policies must price every candidate alike.
  nlohmann::json ops = nlohmann::json::array();
  if (context_.rank() == 0) {
    for (const CommOpCount& op : profile_operations(monitor_.last_interval_operations())) {
      ops.push_back({op.routine, op.comm_size, op.calls, op.bytes_sent, op.bytes_received});
    }
  }
  CommunicationReplay replay;
  for (const nlohmann::json& op : broadcast_json(ops, 0, context_.library_comm())) {
    replay.ops.push_back({op[0].get<Routine>(), op[1].get<int>(), op[2].get<std::uint64_t>(),
                          op[3].get<double>(), op[4].get<double>()});
  }
  replay.processes = context_.size();
  replay.iterations = std::max(1, last_interval_->processes.front().iterations);
  replay.library = library_;
  replay.link = config_.machine_profile.link(false);
  replay.fits = config_.machine_profile.fits_for(library_);
  return replay;
}

void AdaptationController::begin_iteration(std::span<const std::string> events,
                                           bool closed_by_evaluate) {
  context_.note_api_call();
  // An interval nobody evaluated: the next one is predicted on the same
  // blocks (evaluate() predicts after its decision), and it is traced as it was.
  // Both happen before the iteration opens: inside it, rank 0's prediction and
  // trace writing (~2 ms) were measured as its computation, and rank 0 looked
  // 10 % slower than it is in every traced static run.
  if (!interval_traced_) {
    forecast_next(state_.blocks(), nullptr);
    trace_interval({});
  }
  monitor_.begin(events);
  iteration_from_si_init_ = closed_by_evaluate;
}

void AdaptationController::end_iteration(std::span<long long> counts) {
  monitor_.end(counts);
  if (monitor_.interval_complete()) close_interval();
}

void AdaptationController::close_interval() {
  ProcessInterval local = monitor_.take_interval();
  local.rank = context_.rank();
  local.host_id = context_.host_id();
  local.node_cores = context_.node_cores();
  std::array<double, ProcessInterval::kFieldCount> packed{};
  local.pack(packed);
  const int size = context_.size();
  std::vector<double> all(static_cast<std::size_t>(size) * ProcessInterval::kFieldCount);
  // Ranks that monitor different numbers of iterations reach this exchange
  // at different times, or never: named instead of blocking every rank.
  await_every_rank(context_.library_comm(),
                   {CollectiveCall::interval_end, monitor_.iterations_monitored()});
  check_mpi(PMPI_Allgather(packed.data(), ProcessInterval::kFieldCount, MPI_DOUBLE, all.data(),
                           ProcessInterval::kFieldCount, MPI_DOUBLE, context_.library_comm()),
            "MPI_Allgather (interval exchange)");
  IntervalReport report;
  report.index = intervals_closed_++;
  report.first_iteration = monitor_.iterations_monitored() - local.iterations;
  report.metric_name = metric_name_;
  for (int p = 0; p < size; ++p) {
    report.processes.push_back(
        ProcessInterval::unpack(std::span<const double, ProcessInterval::kFieldCount>(
            all.data() + static_cast<std::size_t>(p) * ProcessInterval::kFieldCount,
            ProcessInterval::kFieldCount)));
  }
  report.mark_oversubscribed_nodes();
  report.make_times_comparable(config_.dedicated_threshold);
  if (forecaster_) prediction_record_ = forecaster_->settle(report, measured_change());
  context_.log().debug("interval {}: imbalance {:.3f}", report.index,
                       report.imbalance(config_.dedicated_threshold));
  last_interval_ = std::move(report);
  interval_traced_ = false;
}

MeasuredChange AdaptationController::measured_change() const {
  MeasuredChange change;
  for (const nlohmann::json& event : reconfigurations_) {
    const std::string action = event.value("action", "");
    if (action == "spawn" || action == "remove")
      change.reconfiguration += event.value("seconds", 0.0);
    change.redistribution += event.value("redistribution_seconds", 0.0);
  }
  return change;
}

void AdaptationController::trace_interval(const nlohmann::json& extra) {
  if (interval_traced_ || !last_interval_) return;
  interval_traced_ = true;
  if (!trace_) return;
  nlohmann::json record =
      interval_record(*last_interval_, config_.dedicated_threshold, config_.imbalance_threshold);
  if (extra.is_object()) record.update(extra);
  record["unix_time"] = unix_seconds();
  if (!reconfigurations_.empty()) {
    record["reconfigurations"] = std::exchange(reconfigurations_, nlohmann::json::array());
  }
  record.update(std::exchange(prediction_record_, nlohmann::json::object()));
  trace_->write(record);
}

void AdaptationController::trace_record(const nlohmann::json& record) {
  if (trace_) trace_->write(record);
}

bool AdaptationController::finish_trace() {
  trace_interval({});
  return trace_ == nullptr || trace_->close();
}

namespace {

// Row weights feed the partitioners' sums: one NaN or infinity there made
// every block NaN. Checked once an interval, not at every call.
void check_row_weights(std::span<const double> weight) {
  for (std::size_t row = 0; row < weight.size(); ++row) {
    if (!(weight[row] >= 0.0) || !std::isfinite(weight[row])) {
      throw Error(Errc::invalid_argument,
                  fmt::format("weight[{}]={}: expected a finite number >= 0", row, weight[row]));
    }
  }
}

}  // namespace

void AdaptationController::check_evaluation(std::span<const double> weight) {
  if (state_.blocks().empty()) {
    throw Error(Errc::bad_state,
                "no decomposition to balance: call XMPI_Get_wsize (or register data) first");
  }
  const bool weighted = state_.model() == WorkloadModel::weight;
  if (weighted && weight.size() != static_cast<std::size_t>(state_.global_rows())) {
    throw Error(Errc::invalid_argument,
                "weight: FLEXMPI_LB_MODEL=weight needs a weight for each of the " +
                    std::to_string(state_.global_rows()) + " rows");
  }
  if (weighted && state_.latest_row_work().empty()) {
    // The first weights: the work of the first interval is theirs, not the
    // row count registration set (a rank of heavy rows looked 9 times slower).
    check_row_weights(weight);
    state_.remember_row_weights(weight);
    state_.update_work(weight);
  }
  if (monitor_.iteration_open() && !iteration_from_si_init_) {
    throw Error(Errc::bad_state,
                "XMPI_Eval_lbalance belongs after XMPI_Monitor_iter_end: the iteration opened "
                "by XMPI_Monitor_iter_begin is still open");
  }
}

nlohmann::json AdaptationController::measured_redistribution() {
  // What the last redistribution really cost (the slowest process), for the
  // prediction model's price per byte.
  nlohmann::json extra = nlohmann::json::object();
  const double measured = last_interval_->redistribution_seconds();
  if (measured > 0.0) {
    extra["measured_redistribution_seconds"] = measured;
    redistribution_cost_.observe(pending_redistribution_bytes_, measured);
    pending_redistribution_bytes_ = 0.0;
  }
  return extra;
}

RowBlock AdaptationController::evaluate(int iteration, int max_iterations,
                                        std::span<const double> weight, const SpawnRequest* how) {
  context_.note_api_call();
  check_evaluation(weight);
  if (monitor_.iteration_open()) end_iteration({});
  // Evaluate an interval once, right after it closed (by this call or by
  // XMPI_Monitor_iter_end just before it).
  if (interval_traced_) return state_.own_block();
  check_row_weights(weight);  // before the collective: only the caller's call fails
  // From here on an evaluation is collective: a rank that does not come is
  // named (and the job ended) instead of every other rank waiting forever.
  await_same_iteration(
      context_.library_comm(),
      {how == nullptr ? CollectiveCall::eval_lbalance : CollectiveCall::eval_reconfig, iteration},
      "it", "the iteration just completed");
  // A spawn or removal this interval splits the rows by these weights. Once
  // an interval, not every call: a copy of EpiGraph's 200,000 weights per
  // iteration, stretched 22-53 times by the sleep-mode emulation of slow PEs,
  // made its static run 1.7 times slower.
  state_.remember_row_weights(weight);
  nlohmann::json extra = measured_redistribution();
  IntervalInput input{*last_interval_, iteration, max_iterations,
                      weight,          state_,    redistribution_cost_};
  input.reconfiguration_seconds = last_interval_->reconfiguration_seconds();
  input.may_change_processes = how != nullptr;
  ResourceView resources;
  CommunicationReplay communication;
  if (policy_->uses_resources() && processes_ != nullptr) {
    resources = processes_->resource_view(iteration);
    extra["resources"] = resources;
    input.resources = &resources;
    communication = shared_communication();
    input.communication = &communication;
  }
  PolicyDecision decision = policy_->on_interval(input);
  require_same_change(decision, input.may_change_processes);
  extra.update(decision.record);
  if (!decision.warning.empty() && context_.rank() == 0) {
    context_.log().warn("policy '{}': {}", policy_->name(), decision.warning);
  }
  const Decomposition measured_on = state_.blocks();
  if (decision.target) extra.update(carry_out(*decision.target, weight));
  forecast_next(measured_on, decision.change ? &*decision.change : nullptr);
  trace_interval(extra);  // a process change goes into the next interval's record
  if (decision.change) return change_processes(*decision.change, iteration, *how);
  return state_.own_block();
}

void AdaptationController::require_same_change(const PolicyDecision& decision,
                                               bool may_change_processes) const {
  if (decision.change && !may_change_processes) {
    throw Error(Errc::internal, "policy '" + std::string(policy_->name()) +
                                    "' changed processes from XMPI_Eval_lbalance");
  }
  // Every process runs the policy on the same report; should their decisions
  // still differ (a policy reading a value only one process has), the ones
  // that spawn would wait forever for the others. One allreduce per interval
  // turns that into the same error everywhere.
  std::int64_t change = 0;
  if (decision.change) {
    change = (static_cast<std::int64_t>(decision.change->spawn) << 32) |
             (static_cast<std::int64_t>(decision.change->remove) << 1) |
             static_cast<std::int64_t>(decision.change->reclaim);
  }
  if (!same_on_every_process(change, context_.library_comm())) {
    throw Error(Errc::internal, "policy '" + std::string(policy_->name()) +
                                    "' decided different process changes on different processes");
  }
}

RowBlock AdaptationController::change_processes(const ProcessChange& change, int iteration,
                                                const SpawnRequest& how) {
  if (processes_ == nullptr) throw Error(Errc::internal, "no process manager attached");
  const std::vector<std::string>& classes = change.node_classes;
  try {
    if (change.reclaim) {
      processes_->remove_reclaimed();
      return state_.own_block();
    }
    if (change.remove > 0) {
      processes_->remove(change.remove, classes);
      return state_.own_block();
    }
    SpawnRequest request = how;
    request.nprocs = change.spawn;
    request.node_classes = classes;
    processes_->spawn(request);
    return processes_->send_data(iteration + 1);
  } catch (const Error& e) {
    // Every process got the same error and nothing changed (spawns and
    // removals are atomic): the run goes on with the processes it has.
    if (context_.rank() == 0) {
      context_.log().warn("policy '{}': process change not carried out: {}", policy_->name(),
                          e.what());
    }
    return state_.own_block();
  }
}

namespace {

// Rows per process; without a decomposition (monitoring only) every process
// counts one row: the next interval keeps the blocks, so only their sameness matters.
std::vector<std::int64_t> row_counts(const Decomposition& blocks, std::size_t processes) {
  std::vector<std::int64_t> rows(blocks.empty() ? processes : 0, 1);
  for (const RowBlock& block : blocks) rows.push_back(block.count);
  return rows;
}

// `blocks` over `processes` processes: the ones past its end hold nothing.
Decomposition padded(Decomposition blocks, std::size_t processes, std::int64_t rows) {
  blocks.resize(std::max(blocks.size(), processes), RowBlock{0, rows});
  return blocks;
}

}  // namespace

void AdaptationController::forecast_next(const Decomposition& measured_on,
                                         const ProcessChange* change) {
  if (!forecaster_) return;
  const std::size_t size = last_interval_->processes.size();
  Candidate next;
  if (change == nullptr) {
    next.rows = row_counts(state_.blocks(), size);
    if (measured_on != state_.blocks()) {
      next.busiest_bytes =
          busiest_process_bytes(measured_on, state_.blocks(), state_.data().bytes_per_row());
    }
  } else {
    // The configuration the process manager will reach (thesis Table 6.8):
    // the last processes removed, the spawned ones as fast as the mean, the
    // rows in proportion to the speeds (ProcessManager::estimated_speeds)
    // under the workload model.
    const int after = static_cast<int>(size) + change->spawn - change->remove;
    std::vector<double> speeds = forecaster_->speeds();
    if (change->reclaim || measured_on.empty() || speeds.size() != size || after < 1) {
      forecaster_->forget();
      return;
    }
    double mean = 0.0;
    for (const double s : speeds) mean += s / static_cast<double>(speeds.size());
    speeds.resize(static_cast<std::size_t>(after), mean);
    const std::int64_t rows = state_.global_rows();
    const Decomposition target =
        blocks_from_counts(split_rows(state_.global_rows(), state_.latest_row_work(), speeds));
    const std::size_t widest = std::max(size, target.size());
    next.busiest_bytes =
        busiest_process_bytes(padded(measured_on, widest, rows), padded(target, widest, rows),
                              state_.data().bytes_per_row());
    next.rows = row_counts(target, target.size());
    next.speeds = std::move(speeds);
    next.spawned = change->spawn;
    next.removed = change->remove;
  }
  forecaster_->forecast(*last_interval_, row_counts(measured_on, size), std::move(next),
                        profile_operations(monitor_.last_interval_operations()));
}

nlohmann::json AdaptationController::carry_out(const Decomposition& target,
                                               std::span<const double> weight) {
  const Decomposition before = state_.blocks();
  const double start = wall_seconds();
  const RedistributionStats stats = state_.move_to(target);
  state_.update_work(weight);
  const double seconds = wall_seconds() - start;
  monitor_.record_redistribution(seconds);
  pending_redistribution_bytes_ =
      busiest_process_bytes(before, target, state_.data().bytes_per_row());
  if (context_.rank() == 0) {
    nlohmann::json counts = nlohmann::json::array();
    for (const RowBlock& block : target) counts.push_back(block.count);
    context_.log().info("interval {}: imbalance {:.2f}, rebalanced to {}", last_interval_->index,
                        last_interval_->imbalance(config_.dedicated_threshold), counts.dump());
  }
  return {{"redistribution",
           {{"bytes_sent", stats.bytes_sent},
            {"bytes_received", stats.bytes_received},
            {"seconds", seconds}}}};
}

bool AdaptationController::iteration_open() const { return monitor_.iteration_open(); }

long long AdaptationController::iterations_monitored() const {
  return monitor_.iterations_monitored();
}

std::vector<double> AdaptationController::fresh_speeds() const {
  const std::size_t size = static_cast<std::size_t>(context_.size());
  if (!last_interval_ || last_interval_->index < reconfiguration_mark_ ||
      last_interval_->processes.size() != size) {
    return {};
  }
  // The policy's median over the intervals on the current blocks (one
  // interval alone can be a disturbed one), else the latest interval.
  std::vector<double> speeds = policy_->measured_speeds();
  if (speeds.size() == size) return speeds;
  speeds.clear();
  for (const ProcessInterval& p : last_interval_->processes) {
    speeds.push_back(p.speed(config_.dedicated_threshold));
  }
  return speeds;
}

void AdaptationController::record_reconfiguration(nlohmann::json event) {
  // Every process measures its own; the next interval's report carries the
  // longest to all of them (a decision must not depend on rank 0's clock alone).
  // The data handed over with the change counts as part of it.
  monitor_.record_reconfiguration(event.value("seconds", 0.0) +
                                  event.value("redistribution_seconds", 0.0));
  if (context_.rank() != 0) return;
  event["iteration"] = monitor_.iterations_monitored();
  event["unix_time"] = unix_seconds();  // its end
  reconfigurations_.push_back(std::move(event));
}

nlohmann::json AdaptationController::export_state() const {
  return {{"policy", policy_->export_state()},
          {"latency_seconds", redistribution_cost_.latency_seconds()},
          {"seconds_per_byte", redistribution_cost_.seconds_per_byte()},
          {"price_observations", redistribution_cost_.observations()},
          {"pending_redistribution_bytes", pending_redistribution_bytes_},
          {"intervals_closed", intervals_closed_},
          {"reconfiguration_mark", reconfiguration_mark_}};
}

void AdaptationController::import_state(const nlohmann::json& state) {
  // Every process must decide alike: a new one takes its parents' price of
  // a redistribution (with its default it judged moves differently, moved
  // data alone and the others waited forever) and its policy's state.
  policy_->import_state(state.at("policy"));
  redistribution_cost_.restore(state.at("latency_seconds").get<double>(),
                               state.at("seconds_per_byte").get<double>(),
                               state.at("price_observations").get<int>());
  pending_redistribution_bytes_ = state.at("pending_redistribution_bytes").get<double>();
  // The interval index too: a work profile is read by it (the forecaster,
  // profiled_steps), and a newcomer counting from 0 read another
  // interval than its parents; a goal-driven policy then decided differently on it.
  intervals_closed_ = state.at("intervals_closed").get<int>();
  reconfiguration_mark_ = state.at("reconfiguration_mark").get<int>();
}

void AdaptationController::restart_after_reconfiguration() {
  // The interval closed at the change holds no iteration, only the change's
  // cost so far: it goes into the next interval's report.
  const ProcessInterval change = monitor_.take_interval();
  monitor_.record_reconfiguration(change.reconfiguration_seconds);
  monitor_.record_redistribution(change.redistribution_seconds);
  interval_traced_ = true;
  policy_->on_reconfiguration();
  reconfiguration_mark_ = intervals_closed_;
  // A change the policy decided was predicted (forecast_next); one the
  // application made itself (XMPI_Spawn, XMPI_Remove) leaves a prediction
  // for the old process count, which the forecaster does not settle.
}

}  // namespace flexmpi
