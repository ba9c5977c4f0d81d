#include "policies/lb/lb_policy.hpp"

namespace flexmpi {

PolicyDescriptor lb_policy() {
  return {"lb",
          "dynamic load balancing (thesis 5.2, Alg. 5)",
          {},
          false,
          nullptr,
          [](const Config& config) -> std::unique_ptr<Policy> {
            return std::make_unique<LbPolicy>(config);
          },
          true};
}

}  // namespace flexmpi
