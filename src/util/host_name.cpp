#include "util/host_name.hpp"

#include <cctype>

#include "util/text_file.hpp"

namespace flexmpi {
namespace {

constexpr std::size_t kMaxName = 253;
constexpr std::size_t kMaxLabel = 63;

// The start of a long name, enough to recognise it in a message.
std::string shown(std::string_view name) {
  constexpr std::size_t kShown = 40;
  if (name.size() <= kShown) return printable(name);
  return printable(name.substr(0, kShown)) + "... (" + std::to_string(name.size()) + " bytes)";
}

bool host_name_byte(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

}  // namespace

std::string host_name_problem(std::string_view name) {
  const std::string expected =
      ": a host name has at most 253 bytes, labels of 1 to 63 letters, digits, '-' or '_' "
      "between dots";
  if (name.size() > kMaxName) return "host name '" + shown(name) + "' is too long" + expected;
  std::size_t label = 0;
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '.') {
      if (label == 0) return "host name '" + shown(name) + "' has an empty label" + expected;
      label = 0;
      continue;
    }
    if (!host_name_byte(name[i])) {
      return "host name '" + shown(name) + "' holds '" + printable(name.substr(i, 1)) + "'" +
             expected;
    }
    if (++label > kMaxLabel) {
      return "host name '" + shown(name) + "' has a label longer than 63 bytes" + expected;
    }
  }
  return {};
}

}  // namespace flexmpi
