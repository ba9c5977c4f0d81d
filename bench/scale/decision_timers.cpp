#include "decision_timers.hpp"

#include <fmt/format.h>
#include <malloc.h>

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <utility>

#include "balancing/imbalance_detector.hpp"
#include "balancing/load_balancer.hpp"
#include "config/config.hpp"
#include "model/interval_forecaster.hpp"
#include "policies/amp/amp_policy.hpp"
#include "policies/hpmp/hpmp_policy.hpp"

namespace flexmpi::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Iterations left to the run: a move or a spawn has plenty to pay off in.
constexpr long long kRemainingIterations = 100000;
// Bytes a row of the registered data carries (three double vectors).
constexpr double kBytesPerRow = 24.0;
// Intervals a forecaster has settled before the one timed.
constexpr int kForecasterHistory = 4;
constexpr std::array<AmpConstraint, 3> kAmpConstraints = {
    AmpConstraint::efficiency, AmpConstraint::cost, AmpConstraint::energy};

std::size_t heap_in_use() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;  // small chunks and mmap'ed ones
}

// Runs `repetitions` decisions: make_state() untimed, then decide(state)
// timed, which returns what it decided. The heap the last state holds after
// its decision, over what was in use before it was made, is the kept bytes.
template <class MakeState, class Decide>
Measurement repeat(std::string component, int repetitions, MakeState make_state, Decide decide) {
  Measurement m{std::move(component), "", {}, 0};
  for (int r = 0; r < repetitions; ++r) {
    const std::size_t before = heap_in_use();
    auto state = make_state();
    const Clock::time_point start = Clock::now();
    m.outcome = decide(*state);
    const std::chrono::duration<double, std::milli> took = Clock::now() - start;
    m.milliseconds.push_back(took.count());
    const std::size_t after = heap_in_use();
    m.kept_bytes = after > before ? after - before : 0;
  }
  return m;
}

Measurement interval_exchange(const SyntheticJob& job, int repetitions) {
  // What close_interval does with the Allgather's buffer on every rank.
  const IntervalReport source = job.report(1, job.equal_blocks());
  auto make = [&] {
    auto packed = std::make_unique<std::vector<double>>();
    std::array<double, ProcessInterval::kFieldCount> one{};
    for (const ProcessInterval& p : source.processes) {
      p.pack(one);
      packed->insert(packed->end(), one.begin(), one.end());
    }
    return packed;
  };
  auto decide = [&](const std::vector<double>& all) {
    IntervalReport report;
    const std::size_t n = all.size() / ProcessInterval::kFieldCount;
    for (std::size_t p = 0; p < n; ++p) {
      report.processes.push_back(
          ProcessInterval::unpack(std::span<const double, ProcessInterval::kFieldCount>(
              all.data() + p * ProcessInterval::kFieldCount, ProcessInterval::kFieldCount)));
    }
    report.mark_oversubscribed_nodes();
    return fmt::format("{} records", report.processes.size());
  };
  return repeat("interval exchange (unpack, mark nodes)", repetitions, make, decide);
}

Measurement imbalance_detector(const SyntheticJob& job, int repetitions) {
  const IntervalReport report = job.report(1, job.equal_blocks());
  const Config config;
  auto make = [&] {
    return std::make_unique<ImbalanceDetector>(config.imbalance_threshold,
                                               config.dedicated_threshold, config.k);
  };
  auto decide = [&](ImbalanceDetector& detector) {
    // As LoadBalancer::judge hands it the report.
    std::vector<double> computation, wall, cpu;
    for (const ProcessInterval& p : report.processes) {
      computation.push_back(p.effective_computation(config.dedicated_threshold));
      wall.push_back(p.wall);
      cpu.push_back(p.cpu);
    }
    const BalanceVerdict verdict = detector.evaluate(computation, wall, cpu);
    return fmt::format("imbalance {:.2f}, {}", verdict.imbalance,
                       verdict.rebalance ? "rebalance" : "none");
  };
  return repeat("imbalance detector (Alg. 5)", repetitions, make, decide);
}

LoadBalancer::Situation situation_on(const SyntheticJob& job, const Decomposition& blocks) {
  LoadBalancer::Situation situation;
  situation.current = blocks;
  situation.global_size = job.global_rows();
  situation.remaining_iterations = kRemainingIterations;
  situation.bytes_per_row = kBytesPerRow;
  return situation;
}

// The balancer's decision on the last interval of a full window (lb_window)
// on `blocks`; `move`: the window is unbalanced and its last interval is the
// confirmation a move needs (lb_confirm = lb_window), so rcp partitions and
// the model prices the move.
Measurement load_balancer(const SyntheticJob& job, int repetitions, bool move) {
  Config config;
  if (move) config.lb_confirm = config.lb_window;
  const Decomposition& blocks = move ? job.equal_blocks() : job.balanced_blocks();
  const LoadBalancer::Situation situation = situation_on(job, blocks);
  std::vector<IntervalReport> window;
  for (int i = 1; i <= config.lb_window; ++i) window.push_back(job.report(i, blocks));
  const RedistributionCost cost;
  auto make = [&] {
    auto balancer = std::make_unique<LoadBalancer>(config);
    for (std::size_t i = 0; i + 1 < window.size(); ++i) {
      (void)balancer->evaluate(window[i], situation, cost);
    }
    return balancer;
  };
  auto decide = [&](LoadBalancer& balancer) {
    const BalanceDecision decision = balancer.evaluate(window.back(), situation, cost);
    return decision.changed ? std::string("moved")
                            : decision.to_json()["decision"].get<std::string>();
  };
  return repeat(
      move ? "load balancer, unbalanced window (rcp move)" : "load balancer, balanced window",
      repetitions, make, decide);
}

Measurement partitioner(const SyntheticJob& job, int repetitions,
                        const PartitionerDescriptor& descriptor) {
  // Two measurements per process before the one timed: an FPM model then
  // has two points (on the balanced and on the equal blocks).
  const PartitionInput balanced =
      job.partition_input(job.report(1, job.balanced_blocks()), job.balanced_blocks());
  const PartitionInput unbalanced =
      job.partition_input(job.report(2, job.equal_blocks()), job.equal_blocks());
  auto make = [&] {
    std::unique_ptr<Partitioner> made = descriptor.create(Config{});
    (void)made->partition(balanced);
    (void)made->partition(unbalanced);
    return made;
  };
  auto decide = [&](Partitioner& p) {
    const PartitionResult result = p.partition(unbalanced);
    if (!result.fallback.empty()) return result.fallback.substr(0, 60);
    return std::string(result.blocks == unbalanced.current ? "kept" : "partitioned");
  };
  return repeat(fmt::format("partitioner {}", descriptor.name), repetitions, make, decide);
}

Measurement interval_forecaster(const SyntheticJob& job, int repetitions) {
  const Decomposition& blocks = job.balanced_blocks();
  std::vector<std::int64_t> rows;
  for (const RowBlock& block : blocks) rows.push_back(block.count);
  std::vector<IntervalReport> reports;
  for (int i = 0; i <= kForecasterHistory; ++i) reports.push_back(job.report(i, blocks));
  const std::vector<CommOpCount> ops = job.operations();
  auto settle_and_forecast = [&](IntervalForecaster& forecaster, const IntervalReport& report) {
    const bool predicted = !forecaster.settle(report).empty();
    Candidate next;
    next.rows = rows;
    forecaster.forecast(report, rows, std::move(next), ops);
    return predicted;
  };
  auto make = [&] {
    auto forecaster =
        std::make_unique<IntervalForecaster>(MachineProfile::defaults(), MpiLibrary::open_mpi);
    for (int i = 0; i < kForecasterHistory; ++i) settle_and_forecast(*forecaster, reports[i]);
    return forecaster;
  };
  auto decide = [&](IntervalForecaster& forecaster) {
    return std::string(settle_and_forecast(forecaster, reports.back()) ? "predicted"
                                                                       : "nothing predicted");
  };
  return repeat("interval forecaster (settle + forecast)", repetitions, make, decide);
}

// What hpmp_plan and amp_plan read, held together so that OfferSituation's
// references stay valid.
struct PlannerInputs {
  IntervalReport report;
  RedistributionCost price;
  MachineProfile profile = MachineProfile::defaults();
  CommunicationReplay replay;
};

std::string describe(const MalleabilityDecision& decision) {
  int change = 0;
  for (const int d : decision.delta) change += d;
  return fmt::format("{:+d} processes, {} candidates{}", change, decision.considered.size(),
                     decision.meets_goal ? "" : ", goal missed");
}

Measurement planner(const SyntheticJob& job, int repetitions, std::optional<AmpConstraint> amp) {
  const Config config;
  PlannerInputs in{job.report(1, job.balanced_blocks()), {}, MachineProfile::defaults(), {}};
  in.replay = job.replay(in.profile);
  const OfferSituation situation{in.report,
                                 job.resources(),
                                 job.node_classes(),
                                 in.price,
                                 in.profile,
                                 0,
                                 kRemainingIterations,
                                 static_cast<double>(job.global_rows()) * kBytesPerRow,
                                 config.dedicated_threshold,
                                 &in.replay};
  // AMP's goal: the remaining run 10 % faster than predicted with no change.
  const std::optional<ClassOffers> offers = build_class_offers(situation);
  const double now = offers ? CandidatePredictor(situation, *offers).current().seconds : 1.0;
  auto make = [] { return std::make_unique<int>(0); };  // stateless: everything is an input
  auto decide = [&](int&) {
    if (!amp) {
      const std::optional<HpmpPlan> plan = hpmp_plan(situation);
      return plan ? describe(plan->decision) : std::string("nothing to plan");
    }
    const std::optional<AmpPlan> plan =
        amp_plan(situation, 0.9 * now, 0.0,
                 config.strategy_settings.value_or("FLEXMPI_GOAL_TOLERANCE", 0.01), *amp);
    return plan ? describe(plan->decision) : std::string("nothing to plan");
  };
  const std::string name =
      amp ? fmt::format("amp planner ({})", to_string(*amp)) : std::string("hpmp planner");
  return repeat(name, repetitions, make, decide);
}

}  // namespace

std::vector<std::string> decision_components() {
  std::vector<std::string> names = {"interval exchange (unpack, mark nodes)",
                                    "imbalance detector (Alg. 5)", "load balancer, balanced window",
                                    "load balancer, unbalanced window (rcp move)"};
  for (const PartitionerDescriptor& d : partitioners()) {
    names.push_back(fmt::format("partitioner {}", d.name));
  }
  names.emplace_back("interval forecaster (settle + forecast)");
  names.emplace_back("hpmp planner");
  for (const AmpConstraint c : kAmpConstraints) {
    names.push_back(fmt::format("amp planner ({})", to_string(c)));
  }
  return names;
}

Measurement measure_decision(const SyntheticJob& job, std::size_t component, int repetitions) {
  switch (component) {  // in the order of decision_components()
    case 0:
      return interval_exchange(job, repetitions);
    case 1:
      return imbalance_detector(job, repetitions);
    case 2:
    case 3:
      return load_balancer(job, repetitions, component == 3);
    default:
      break;
  }
  const std::vector<PartitionerDescriptor>& all = partitioners();
  const std::size_t first_partitioner = 4;
  if (component < first_partitioner + all.size()) {
    return partitioner(job, repetitions, all[component - first_partitioner]);
  }
  const std::size_t after = component - first_partitioner - all.size();
  if (after == 0) return interval_forecaster(job, repetitions);
  if (after == 1) return planner(job, repetitions, std::nullopt);
  return planner(job, repetitions, kAmpConstraints.at(after - 2));
}

}  // namespace flexmpi::bench
