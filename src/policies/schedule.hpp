// A predefined process schedule (FLEXMPI_SCHEDULE; thesis 5.4.1: "the type
// of reconfiguring action, the number of processes to spawn or terminate,
// the type of processors that allocate these processes, and the number of
// iteration in which the reconfiguring action must be carried out").
// File format (FLEXMPI_SCHEDULE, docs/reference/formats.md), one action per line, '#'
// starts a comment:
//
//   <iteration> spawn|remove <count> [<procType>]
//
// Without a procType the scheduler places (or picks) the processes anywhere.
#pragma once

#include <string>
#include <vector>

#include "base/scheduled_action.hpp"

namespace flexmpi {

/// The actions of `text` in iteration order; Error(bad_config) naming the
/// line and what was expected otherwise. `source` names the file in messages.
[[nodiscard]] std::vector<ScheduledAction> parse_schedule(const std::string& text,
                                                          const std::string& source);
/// parse_schedule of a file; Error(bad_config) if it cannot be read.
[[nodiscard]] std::vector<ScheduledAction> read_schedule(const std::string& path);

}  // namespace flexmpi
