// The whole text of a small configuration file (hostfile, schedule, scenario,
// node classes), read once before it is parsed.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "flexmpi/error.hpp"

namespace flexmpi {

/// The text of `path`; Error(code) "cannot read the <what> file '<path>'" if
/// it cannot be opened.
inline std::string read_text_file(const std::string& path, std::string_view what, Errc code) {
  std::ifstream file(path);
  if (!file) throw Error(code, "cannot read the " + std::string(what) + " file '" + path + "'");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace flexmpi
