#include "policies/amp/amp_constraint.hpp"

#include <string>

#include "flexmpi/error.hpp"

namespace flexmpi {

std::string_view to_string(AmpConstraint constraint) {
  switch (constraint) {
    case AmpConstraint::efficiency:
      return "efficiency";
    case AmpConstraint::cost:
      return "cost";
    case AmpConstraint::energy:
      return "energy";
  }
  return "unknown";
}

AmpConstraint parse_amp_constraint(std::string_view text) {
  for (const AmpConstraint c :
       {AmpConstraint::efficiency, AmpConstraint::cost, AmpConstraint::energy}) {
    if (to_string(c) == text) return c;
  }
  throw Error(Errc::bad_config, "FLEXMPI_CONSTRAINT='" + std::string(text) +
                                    "' is invalid: expected one of efficiency, cost, energy");
}

}  // namespace flexmpi
