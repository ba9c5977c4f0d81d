#include "policies/schedule.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "flexmpi/error.hpp"
#include "util/split.hpp"
#include "util/text_file.hpp"

namespace flexmpi {
namespace {

// The whole of `word` as an integer of type Number, or false.
template <typename Number>
bool parse_whole(std::string_view word, Number& value) {
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  return !word.empty() && error == std::errc() && end == word.data() + word.size();
}

}  // namespace

// One pass over the text, views into it, no stream per line and the
// message of a line built only when the line is refused: a 50 MB schedule
// parses in about a second (docs/results.md).
std::vector<ScheduledAction> parse_schedule(const std::string& text, const std::string& source) {
  std::vector<ScheduledAction> actions;
  const std::string_view all(text);
  int number = 0;
  for (std::size_t start = 0; start < all.size();) {
    const std::size_t newline = std::min(all.find('\n', start), all.size());
    const std::string_view full = all.substr(start, newline - start);
    start = newline + 1;
    ++number;
    const std::string_view line = full.substr(0, full.find('#'));
    const std::vector<std::string_view> words = split_words(line);
    if (words.empty()) continue;  // blank or comment
    auto fail = [&](const std::string& what) {
      throw Error(Errc::bad_config, source + " line " + std::to_string(number) + " ('" +
                                        printable(line) + "'): " + what +
                                        "; expected <iteration> spawn|remove <count> [<procType>]");
    };
    const auto word = [&](std::size_t i) {
      return i < words.size() ? words[i] : std::string_view();
    };
    ScheduledAction parsed;
    if (!parse_whole(words[0], parsed.iteration) || parsed.iteration < 0) {
      fail("iteration '" + printable(words[0]) + "' is not a number >= 0");
    }
    if (word(1) != "spawn" && word(1) != "remove") {
      fail("action '" + printable(word(1)) + "' is unknown");
    }
    parsed.spawn = word(1) == "spawn";
    if (!parse_whole(word(2), parsed.count) || parsed.count < 1) {
      fail("count '" + printable(word(2)) + "' is not a number from 1 to 2147483647");
    }
    if (words.size() > 4) fail("'" + printable(words[4]) + "' is one word too many");
    parsed.node_class = word(3);
    actions.push_back(std::move(parsed));
  }
  // Usually written in order: sorting is then a check.
  const auto earlier = [](const auto& a, const auto& b) { return a.iteration < b.iteration; };
  if (!std::is_sorted(actions.begin(), actions.end(), earlier)) {
    std::stable_sort(actions.begin(), actions.end(), earlier);
  }
  return actions;
}

std::vector<ScheduledAction> read_schedule(const std::string& path) {
  return parse_schedule(read_text_file(path, "schedule", Errc::bad_config), path);
}

}  // namespace flexmpi
