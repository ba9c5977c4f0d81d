// A file of flexmpi's output (the trace, the profile report), and the checks
// every output path passes before any work.
//
// Outputs never destroy inputs or each other: check_outputs compares every
// output with every input and with the other outputs by device and inode
// (a hard link or another spelling is the same file), and outputs not yet
// there by their canonical path. An output that is a symbolic link is
// refused: writing through it would truncate a file elsewhere, perhaps one a
// link planted in a shared directory points to. An output must be a regular
// file, a new path in a writable directory or a character device (/dev/null):
// a FIFO would block its writer until someone reads it.
//
// Every write, flush and the close are checked: a full disk or a device that
// refuses the data (FLEXMPI_TRACE=/dev/full) would otherwise lose the user's
// output without a word. The first failure is reported on standard error,
// whatever the log level, once; what would follow is dropped, and the runtime
// turns the loss into the run's exit status (FLEXMPI_OUTPUT_ERRORS).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flexmpi/error.hpp"

namespace flexmpi {

/// The exit status of a process whose output was lost (FLEXMPI_OUTPUT_ERRORS=fail).
inline constexpr int kOutputLostStatus = 3;

/// A file that a setting names: "FLEXMPI_HOSTFILE" and its path.
struct FileSetting {
  std::string setting;
  std::string path;
};

/// A file that a setting makes flexmpi write.
struct OutputSetting {
  OutputSetting(std::string setting_name, std::string file_path,
                std::vector<std::string> companion_files = {},
                std::string_view replaceable_input = {}, bool renamed = false)
      : setting(std::move(setting_name)),
        path(std::move(file_path)),
        companions(std::move(companion_files)),
        may_replace(replaceable_input),
        renamed_into_place(renamed) {}

  std::string setting;
  std::string path;
  /// Other files it writes: FLEXMPI_CHECKPOINT's FILE.partial and FILE.prev.
  std::vector<std::string> companions;
  /// An input setting whose file it may be: that input is read whole before
  /// the output is first written (FLEXMPI_RESTART for FLEXMPI_CHECKPOINT).
  std::string_view may_replace;
  /// Written as a new file renamed into place: its directory must be
  /// writable even when the file exists.
  bool renamed_into_place;
};

/// Refuses (Error(code) naming the setting, the path and the reason, with the
/// system's words where the system said no) an output that is a symbolic
/// link, a directory, a FIFO, a socket or a block device, that cannot be
/// written, or whose directory does not let it be created.
void check_output_destination(const OutputSetting& output, Errc code);

/// check_output_destination of every output, then refuses an output that is
/// the file of an input (by device and inode) or of another output (by
/// device and inode, or canonical path for files not there yet).
void check_outputs(const std::vector<FileSetting>& inputs,
                   const std::vector<OutputSetting>& outputs, Errc code);

class OutputFile {
 public:
  /// Opens (truncates) `path` after check_output_destination, without
  /// following a symbolic link or waiting on a FIFO; Error(bad_config)
  /// naming `setting` (e.g. "FLEXMPI_TRACE"), the path and the system's
  /// reason if it cannot.
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
