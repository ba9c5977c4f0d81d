#include "base/setting.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace flexmpi {

void StrategySettings::set(std::string_view variable, std::string_view text, std::any value) {
  values_.insert_or_assign(std::string(variable), Entry{std::string(text), std::move(value)});
}

std::string StrategySettings::text(std::string_view variable) const {
  const auto found = values_.find(variable);
  return found == values_.end() ? std::string() : found->second.text;
}

long long parse_whole_number(std::string_view text, long long minimum) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < minimum ||
      value > 1'000'000'000) {
    throw SettingRejected{};
  }
  return value;
}

double parse_finite_number(std::string_view text) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    throw SettingRejected{};
  }
  return value;
}

double parse_fraction(std::string_view text) {
  const double value = parse_finite_number(text);
  if (value <= 0.0 || value >= 1.0) throw SettingRejected{};
  return value;
}

std::string parse_choice(std::string_view text, std::initializer_list<std::string_view> choices) {
  if (std::find(choices.begin(), choices.end(), text) == choices.end()) throw SettingRejected{};
  return std::string(text);
}

}  // namespace flexmpi
