// Splitting text on one separator character. (Not std::views::split: Debian
// 12's clang-tidy, which scripts/lint.sh runs, cannot parse it with GCC 12's
// library.)
#pragma once

#include <string_view>
#include <vector>

namespace flexmpi {

/// The pieces of `text` between `separator`s, empty ones included: "a;b;" ->
/// {"a", "b", ""}. They point into `text`.
inline std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(separator, start);
    pieces.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return pieces;
    start = end + 1;
  }
}

/// The words of `line`, separated by spaces and tabs: " a\tb  c" -> {"a",
/// "b", "c"}. They point into `line`.
inline std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  constexpr std::string_view kBlanks = " \t";
  for (std::size_t start = line.find_first_not_of(kBlanks); start != std::string_view::npos;) {
    const std::size_t end = line.find_first_of(kBlanks, start);
    words.push_back(line.substr(start, end == std::string_view::npos ? end : end - start));
    start = end == std::string_view::npos ? end : line.find_first_not_of(kBlanks, end);
  }
  return words;
}

}  // namespace flexmpi
