// Quoting a word for a POSIX shell (flexrun's --dry-run, the scripts a
// resource manager's helper jobs run).
#pragma once

#include <string>
#include <string_view>

namespace flexmpi {

/// `text` quoted for a POSIX shell when needed: single quotes, a ' inside
/// written as '\''.
inline std::string shell_quote(const std::string& text) {
  constexpr std::string_view safe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,+@%";
  if (!text.empty() && text.find_first_not_of(safe) == std::string::npos) return text;
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace flexmpi
