// The accepted range of a number read from a settings file or an API
// argument, and the one way every reader checks it: a value outside its
// range (or not finite: 1e308 sums to infinity, and NaN compares false)
// is refused with the range spelled out, e.g. "expected an integer from 1
// to 1048576, got 1e+12".
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace flexmpi {

struct NumberRange {
  double least = 0.0;
  double most = 0.0;
  bool least_excluded = false;  ///< (least, most] instead of [least, most]
  bool integer = false;         ///< whole numbers only

  [[nodiscard]] bool contains(double value) const {
    return std::isfinite(value) && (least_excluded ? value > least : value >= least) &&
           value <= most && (!integer || value == std::floor(value));
  }

  /// "an integer from 1 to 1048576", "a number > 0 and <= 1e+12".
  [[nodiscard]] std::string text() const {
    const std::string kind = integer ? "an integer" : "a number";
    if (least_excluded) return fmt::format("{} > {} and <= {}", kind, least, most);
    return fmt::format("{} from {} to {}", kind, least, most);
  }

  /// "expected <text()>, got <shown>": the end of every refusal.
  [[nodiscard]] std::string expected(std::string_view shown) const {
    return "expected " + text() + ", got " + std::string(shown);
  }

  /// expected() of a word of a file, shown between `quote`s. Appended, not
  /// "'" + word: GCC 12 warns falsely on that at -O3 (-Wrestrict, bug 105329).
  [[nodiscard]] std::string expected_word(std::string_view word, char quote) const {
    std::string shown(1, quote);
    shown += word;
    shown += quote;
    return expected(shown);
  }
};

/// The whole of `word` as a number (decimal or exponent form, no sign '+',
/// no surrounding spaces), or nullopt. Infinity and NaN are numbers here:
/// NumberRange::contains refuses them, naming the range.
inline std::optional<double> parse_number(std::string_view word) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (word.empty() || end != word.data() + word.size()) return std::nullopt;
  // Beyond double's range: from_chars leaves `value` unset, strtod gives
  // +-HUGE_VAL ("1e400") or a value next to 0 ("1e-400").
  if (error == std::errc::result_out_of_range)
    return std::strtod(std::string(word).c_str(), nullptr);
  if (error != std::errc()) return std::nullopt;
  return value;
}

}  // namespace flexmpi
