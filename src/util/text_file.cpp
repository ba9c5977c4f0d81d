#include "util/text_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace flexmpi {

std::string printable(std::string_view text) {
  std::string shown;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      shown += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      shown += escaped;
    }
  }
  return shown;
}

std::string normalise_text(std::string text, std::string_view source, Errc code) {
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (std::string_view(text).starts_with(kByteOrderMark)) text.erase(0, kByteOrderMark.size());
  std::string clean;
  clean.reserve(text.size());
  int line = 1, column = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;  // CR LF
    if ((byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", byte);
      throw Error(code, std::string(source) + " line " + std::to_string(line) + ", column " +
                            std::to_string(column) + ": byte " + hex +
                            " is not text (is this the right file?)");
    }
    clean += text[i];
    if (byte == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return clean;
}

std::string read_text_file(const std::string& path, std::string_view what, Errc code) {
  const std::string named = "the " + std::string(what) + " file '" + printable(path) + "'";
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw Error(code, named + " is a directory: expected a file");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw Error(code, "cannot read " + named + ": cannot open it (" + std::strerror(errno) + ")");
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw Error(code, "cannot read " + named + ": a read error");
  return normalise_text(text.str(), path, code);
}

}  // namespace flexmpi
