#include <algorithm>

#include "flexmpi/error.hpp"
#include "policies/amp/amp_policy.hpp"
#include "policies/hpmp/hpmp_policy.hpp"
#include "policies/lb/lb_policy.hpp"
#include "policies/policy.hpp"
#include "policies/smp/smp_policy.hpp"

namespace flexmpi {
namespace {

// FLEXMPI_POLICY=none: monitoring (and the trace) only, never a change.
class NonePolicy final : public Policy {
 public:
  [[nodiscard]] std::string_view name() const override { return "none"; }
  PolicyDecision on_interval(const IntervalInput&) override { return {}; }
};

}  // namespace

std::span<const PolicyDescriptor> policies() {
  static const PolicyDescriptor all[] = {
      {"none", "monitor only: measure, trace, never change the data or the processes",
       [](const Config&) -> std::unique_ptr<Policy> { return std::make_unique<NonePolicy>(); }},
      {"lb", "dynamic load balancing (thesis 5.2, Alg. 5)",
       [](const Config& config) -> std::unique_ptr<Policy> {
         return std::make_unique<LbPolicy>(config);
       }},
      {"smp",
       "strict malleability (thesis 5.4.1): the predefined schedule of FLEXMPI_SCHEDULE, load "
       "balancing in between",
       [](const Config& config) -> std::unique_ptr<Policy> {
         return std::make_unique<SmpPolicy>(config);
       }},
      {"hpmp",
       "high performance malleability (thesis 5.4.2, Alg. 7): spawns on the idle PEs granted "
       "when the prediction says the rest of the run gets faster, load balancing in between",
       [](const Config& config) -> std::unique_ptr<Policy> {
         return std::make_unique<HpmpPolicy>(config);
       }},
      {"amp",
       "adaptive malleability (thesis 5.4.3, Alg. 8): spawns or removes processes so that the "
       "run meets FLEXMPI_GOAL (or FLEXMPI_GOAL_SPEEDUP) at the least FLEXMPI_CONSTRAINT, load "
       "balancing in between",
       [](const Config& config) -> std::unique_ptr<Policy> {
         return std::make_unique<AmpPolicy>(config);
       }},
  };
  return all;
}

std::string policy_names() {
  std::string names;
  for (const PolicyDescriptor& p : policies()) {
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  return names;
}

std::unique_ptr<Policy> make_policy(std::string_view name, const Config& config) {
  const auto all = policies();
  const auto found = std::find_if(all.begin(), all.end(),
                                  [&](const PolicyDescriptor& d) { return d.name == name; });
  if (found == all.end()) {
    throw Error(Errc::bad_config, "policy '" + std::string(name) +
                                      "' does not exist (available: " + policy_names() + ")");
  }
  return found->create(config);
}

}  // namespace flexmpi
