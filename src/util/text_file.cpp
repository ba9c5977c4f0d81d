#include "util/text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace flexmpi {
namespace {

// Closes a descriptor on every way out.
class Descriptor {
 public:
  explicit Descriptor(int descriptor) : descriptor_(descriptor) {}
  ~Descriptor() {
    if (descriptor_ >= 0) ::close(descriptor_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  [[nodiscard]] int get() const { return descriptor_; }

 private:
  int descriptor_;
};

std::string cap_text() {
  return "at most " + std::to_string(kMaxSettingsFileBytes) + " bytes (" +
         std::to_string(kMaxSettingsFileBytes >> 20) + " MiB)";
}

// Refuses what a settings file must not be, from its status before it is
// opened and again from the opened descriptor's (the file may have been
// replaced in between).
void check_settings_file(const struct stat& status, const std::string& named, Errc code) {
  if (!S_ISREG(status.st_mode)) {
    const std::string why =
        S_ISDIR(status.st_mode) ? "" : " (reading it could wait forever or never end)";
    throw Error(code, named + " is " + std::string(file_type_name(status.st_mode)) +
                          ": expected a file" + why);
  }
  if ((status.st_mode & S_IWOTH) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(status.st_mode & 07777));
    throw Error(code, named + " may be written by every user (mode " + mode +
                          "): anyone could change what this run does; remove their "
                          "permission (chmod o-w) or give a copy");
  }
  if (static_cast<std::uintmax_t>(status.st_size) > kMaxSettingsFileBytes) {
    throw Error(code, named + " holds " + std::to_string(status.st_size) +
                          " bytes: a settings file may hold " + cap_text());
  }
}

// The whole content of the opened file, refused beyond the cap (a file that
// grows while it is read, or one whose size its status does not tell).
std::string read_capped(int descriptor, std::size_t expected, const std::string& named, Errc code) {
  std::string text(std::min(expected, kMaxSettingsFileBytes) + 1, '\0');
  std::size_t filled = 0;
  for (;;) {
    if (filled == text.size()) {
      if (text.size() > kMaxSettingsFileBytes) {
        throw Error(code, named + " holds more than " + std::to_string(kMaxSettingsFileBytes) +
                              " bytes: a settings file may hold " + cap_text());
      }
      text.resize(std::min(2 * text.size(), kMaxSettingsFileBytes + 1));
    }
    const ssize_t got = ::read(descriptor, text.data() + filled, text.size() - filled);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error(code, "cannot read " + named + ": a read error (" + std::strerror(errno) + ")");
    }
    filled += static_cast<std::size_t>(got);
  }
  text.resize(filled);
  return text;
}

}  // namespace

std::string_view file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

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
  const auto cannot_open = [&] {
    return Error(code, "cannot read " + named + ": cannot open it (" + std::strerror(errno) + ")");
  };
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) throw cannot_open();
  check_settings_file(status, named, code);
  // O_NONBLOCK: were a FIFO put in its place since, open() returns instead of
  // waiting for a writer, and the check of the descriptor refuses it.
  const Descriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (file.get() < 0) throw cannot_open();
  if (::fstat(file.get(), &status) != 0) throw cannot_open();
  check_settings_file(status, named, code);
  return normalise_text(
      read_capped(file.get(), static_cast<std::size_t>(status.st_size), named, code), path, code);
}

}  // namespace flexmpi
