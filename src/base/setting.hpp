// One FLEXMPI_* setting as it is declared: by the runtime's loader
// (core/settings) for the settings every run has, and by a strategy in its
// own folder (a partitioner, a policy, a resource manager) for the settings
// only it reads. The loader, flexrun's options, its help and
// docs/reference/settings.md are all made from these declarations.
#pragma once

#include <any>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flexmpi/error.hpp"

namespace flexmpi {

struct Config;

/// A value a setting cannot take, thrown by its parser; the loader adds the
/// variable, the value and what is accepted. `why` may say more.
struct SettingRejected {
  std::string why;
};

/// One setting: its environment variable, its flexrun option, how to read it:
/// `apply` for a setting of the runtime (stored in its Config field), `parse`
/// for a strategy's (its typed value stored in Config::strategy_settings
/// under its variable). Exactly one of them is set.
struct SettingDescriptor {
  using Apply = std::function<void(Config&, std::string_view)>;
  using Parse = std::function<std::any(std::string_view)>;

  SettingDescriptor(std::string_view variable, std::string_view option,
                    std::string_view default_text, std::string_view accepted, std::string_view help,
                    Apply apply)
      : variable(variable),
        option(option),
        default_text(default_text),
        accepted(accepted),
        help(help),
        apply(std::move(apply)) {}
  SettingDescriptor(std::string_view variable, std::string_view option,
                    std::string_view default_text, std::string_view accepted, std::string_view help,
                    Parse parse, bool names_input_file = false)
      : variable(variable),
        option(option),
        default_text(default_text),
        accepted(accepted),
        help(help),
        parse(std::move(parse)),
        names_input_file(names_input_file) {}

  std::string_view variable;      ///< e.g. "FLEXMPI_SAMPLING_INTERVAL"
  std::string_view option;        ///< flexrun long option, e.g. "sampling-interval"
  std::string_view default_text;  ///< shown in help
  std::string_view accepted;      ///< what a valid value looks like, for error messages
  std::string_view help;          ///< one line
  Apply apply;                    ///< throws SettingRejected or Error
  Parse parse;                    ///< throws SettingRejected or Error
  /// The value names a file flexmpi reads (checked against the outputs).
  bool names_input_file = false;
};

/// The typed values of the settings strategies declare, each parsed once by
/// its descriptor's `parse`, with the text it was parsed from.
class StrategySettings {
 public:
  void set(std::string_view variable, std::string_view text, std::any value);
  /// The value of `variable` when it was set, else nullptr. The type is the
  /// one its `parse` returns.
  template <typename T>
  [[nodiscard]] const T* find(std::string_view variable) const {
    const auto found = values_.find(variable);
    return found == values_.end() ? nullptr : std::any_cast<T>(&found->second.value);
  }
  /// The value of `variable`, or `fallback` (its default) when it was not set.
  template <typename T>
  [[nodiscard]] T value_or(std::string_view variable, T fallback) const {
    const T* value = find<T>(variable);
    return value != nullptr ? *value : fallback;
  }
  /// The text `variable` was set to; empty when it was not set.
  [[nodiscard]] std::string text(std::string_view variable) const;

 private:
  struct Entry {
    std::string text;
    std::any value;
  };
  std::map<std::string, Entry, std::less<>> values_;
};

// ---- parsers the declarations share ---------------------------------------

/// A whole number from `minimum` to 10^9; SettingRejected otherwise.
long long parse_whole_number(std::string_view text, long long minimum);
/// A finite number; SettingRejected otherwise.
double parse_finite_number(std::string_view text);
/// A number strictly between 0 and 1; SettingRejected otherwise.
double parse_fraction(std::string_view text);
/// `text` when it is one of `choices`; SettingRejected otherwise.
std::string parse_choice(std::string_view text, std::initializer_list<std::string_view> choices);
/// Runs a component's own parser; its Error becomes the setting's rejection
/// (the component's message kept as the reason).
template <typename Parse>
auto parsed_by_component(Parse parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const Error& e) {
    throw SettingRejected{e.what()};
  }
}

/// "a, b, c": the names of a registry, for accepted-values texts and messages.
template <typename Descriptors>
std::string joined_names(const Descriptors& descriptors) {
  std::string names;
  for (const auto& d : descriptors) names += (names.empty() ? "" : ", ") + std::string(d.name);
  return names;
}

}  // namespace flexmpi
