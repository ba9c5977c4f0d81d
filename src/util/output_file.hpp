// A file of flexmpi's output (the trace, the profile report). Every write,
// flush and the close are checked: a full disk or a device that refuses the
// data (FLEXMPI_TRACE=/dev/full) used to lose the user's output without a word.
// The first failure is reported on standard error, whatever the log level,
// once; what would follow is dropped, and the runtime turns the loss into the
// run's exit status (FLEXMPI_OUTPUT_ERRORS).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace flexmpi {

/// The exit status of a process whose output was lost (FLEXMPI_OUTPUT_ERRORS=fail).
inline constexpr int kOutputLostStatus = 3;

class OutputFile {
 public:
  /// Opens (truncates) `path`; Error(bad_config) naming `setting` (e.g.
  /// "FLEXMPI_TRACE"), the path and the system's reason if it cannot.
  OutputFile(std::string_view setting, const std::string& path);
  /// Closes the file if close() was not called (a failure is still reported).
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Appends `text` and flushes it, so that a crashed run keeps what was
  /// written. After a failure, nothing more is written.
  void append(std::string_view text);
  /// Closes the file; whether everything written reached it.
  bool close();
  /// No write has failed so far.
  [[nodiscard]] bool intact() const { return !failed_; }

 private:
  void fail(const char* step);

  std::string setting_;
  std::string path_;
  std::FILE* file_ = nullptr;
  bool failed_ = false;
};

}  // namespace flexmpi
