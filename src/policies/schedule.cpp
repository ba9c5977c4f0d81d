#include "policies/schedule.hpp"

#include <algorithm>
#include <sstream>

#include "flexmpi/error.hpp"
#include "util/text_file.hpp"

namespace flexmpi {

std::vector<ScheduledAction> parse_schedule(const std::string& text, const std::string& source) {
  std::vector<ScheduledAction> actions;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string iteration, action, count, node_class, extra;
    if (!(words >> iteration)) continue;  // blank or comment
    words >> action >> count >> node_class >> extra;
    const std::string where =
        source + " line " + std::to_string(number) + " ('" + printable(line) + "')";
    auto fail = [&](const std::string& what) {
      throw Error(Errc::bad_config,
                  where + ": " + what + "; expected <iteration> spawn|remove <count> [<procType>]");
    };
    ScheduledAction parsed;
    std::size_t used = 0;
    try {
      parsed.iteration = std::stoll(iteration, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != iteration.size() || parsed.iteration < 0) fail("iteration is not a number >= 0");
    if (action != "spawn" && action != "remove") fail("action '" + action + "' is unknown");
    parsed.spawn = action == "spawn";
    try {
      parsed.count = std::stoi(count, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != count.size() || parsed.count < 1) fail("count is not a number >= 1");
    if (!extra.empty()) fail("'" + extra + "' is one word too many");
    parsed.node_class = node_class;
    actions.push_back(parsed);
  }
  std::stable_sort(actions.begin(), actions.end(),
                   [](const auto& a, const auto& b) { return a.iteration < b.iteration; });
  return actions;
}

std::vector<ScheduledAction> read_schedule(const std::string& path) {
  return parse_schedule(read_text_file(path, "schedule", Errc::bad_config), path);
}

}  // namespace flexmpi
