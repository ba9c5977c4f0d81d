// Steps shared by the policies that follow the resource manager (smp, hpmp;
// thesis 5.4, Alg. 6 and 7): what to do when PEs are reclaimed.
#pragma once

#include <optional>

#include "policies/lb_policy.hpp"
#include "policies/policy.hpp"

namespace flexmpi {

/// The first step of every resource-aware policy at the end of an interval:
///  - a reclaim that cannot be honoured (ResourceView::unmet_reclaim): the
///    load is balanced by `balancing` and the reason traced;
///  - processes on reclaimed PEs (ResourceView::reclaimed > 0): they are
///    removed (ProcessChange{remove, reclaim = true}).
/// nullopt when nothing was reclaimed (or there is no view).
[[nodiscard]] std::optional<PolicyDecision> reclaim_action(const IntervalInput& input,
                                                           LbPolicy& balancing);

}  // namespace flexmpi
