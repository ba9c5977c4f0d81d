// The AMP policy's constraint (FLEXMPI_CONSTRAINT, thesis 5.4.3): what a
// change of the process configuration minimises. A value of
// Config::strategy_settings; the planner decides by it (amp_planner.hpp).
#pragma once

#include <string_view>

namespace flexmpi {

/// The AMP constraint (FLEXMPI_CONSTRAINT): what the change minimises.
enum class AmpConstraint { efficiency, cost, energy };
[[nodiscard]] std::string_view to_string(AmpConstraint constraint);
/// FLEXMPI_CONSTRAINT's value as the planner's constraint; Error(bad_config) otherwise.
[[nodiscard]] AmpConstraint parse_amp_constraint(std::string_view text);

}  // namespace flexmpi
