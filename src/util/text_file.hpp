// The one reader of flexmpi's settings files (hostfile, schedule, scenario,
// node classes, DRUM files, machine and work profiles): the whole text, read
// once before it is parsed, normalised so that every parser sees the same
// thing and reports the same errors:
//   - a directory, or a file that cannot be read, is refused by name;
//   - a UTF-8 byte-order mark at the start is dropped (editors add it; it
//     would otherwise become part of the first word, invisibly);
//   - CR LF line endings become LF (a file saved on Windows);
//   - any other control byte (NUL, a lone CR, ...) is refused with its line,
//     its column and the byte in hexadecimal: the file is binary or damaged.
#pragma once

#include <string>
#include <string_view>

#include "flexmpi/error.hpp"

namespace flexmpi {

/// The normalised text of `path`; Error(code) naming `what` ("schedule") and
/// the path otherwise.
std::string read_text_file(const std::string& path, std::string_view what, Errc code);

/// `text` as read_text_file normalises it; `source` names it in errors.
std::string normalise_text(std::string text, std::string_view source, Errc code);

/// `text` for an error message: control and non-ASCII bytes as \xNN.
std::string printable(std::string_view text);

}  // namespace flexmpi
