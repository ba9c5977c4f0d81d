// The one reader of flexmpi's settings files (hostfile, schedule, resource timeline,
// node classes, DRUM files, machine and work profiles, the ompi-server URI):
// the whole text, read once before it is parsed, normalised so that every
// parser sees the same thing and reports the same errors:
//   - anything but a regular file (a directory, a FIFO, a device, a socket)
//     is refused by name before it is opened for reading: a FIFO would block
//     every process in open() and /dev/zero would be read until memory runs
//     out. Symbolic links are followed: the file they lead to is checked;
//   - a file every user may write (mode o+w) is refused, as ssh refuses such
//     a configuration file: anyone on the machine could change where this
//     job starts processes or what its model predicts;
//   - a file above kMaxSettingsFileBytes is refused, the cap in the message;
//   - a UTF-8 byte-order mark at the start is dropped (editors add it; it
//     would otherwise become part of the first word, invisibly);
//   - CR LF line endings become LF (a file saved on Windows);
//   - any other control byte (NUL, a lone CR, ...) is refused with its line,
//     its column and the byte in hexadecimal: the file is binary or damaged.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "flexmpi/error.hpp"

namespace flexmpi {

/// The most a settings file may hold: 256 MiB, far above any real one (a
/// hostfile of 10^6 nodes is about 30 MB), low enough that a runaway file is
/// refused at once instead of filling the memory of every process.
inline constexpr std::size_t kMaxSettingsFileBytes = std::size_t{256} << 20;

/// The normalised text of `path`; Error(code) naming `what` ("schedule"),
/// the path and what was expected otherwise.
std::string read_text_file(const std::string& path, std::string_view what, Errc code);

/// `text` as read_text_file normalises it; `source` names it in errors.
std::string normalise_text(std::string text, std::string_view source, Errc code);

/// `text` for an error message: control and non-ASCII bytes as \xNN.
std::string printable(std::string_view text);

/// What a file of this st_mode is, for a refusal: "a FIFO (named pipe)",
/// "a character device", "a directory", ...
std::string_view file_type_name(mode_t mode);

}  // namespace flexmpi
