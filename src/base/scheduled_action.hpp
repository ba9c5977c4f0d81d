// One action of a predefined process schedule (thesis 5.4.1): the
// configuration holds the parsed schedule (policies/schedule reads the file).
#pragma once

#include <string>

namespace flexmpi {

/// One line of a schedule.
struct ScheduledAction {
  long long iteration = 0;  ///< carried out at the first sampling interval ending at or after it
  bool spawn = true;        ///< spawn, else remove
  int count = 0;            ///< processes
  std::string node_class;   ///< procType of the hostfile; empty: any
  friend bool operator==(const ScheduledAction&, const ScheduledAction&) = default;
};

}  // namespace flexmpi
