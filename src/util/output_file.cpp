#include "util/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "util/text_file.hpp"

namespace flexmpi {
namespace {

std::string named(const OutputSetting& output) {
  return output.setting + "='" + printable(output.path) + "'";
}

// The directory in which a new file at `path` is created.
std::string directory_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// A file as the system knows it, whatever its path's spelling.
struct Identity {
  dev_t device;
  ino_t inode;
  bool operator==(const Identity&) const = default;
};

std::optional<Identity> identity_of(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return std::nullopt;
  return Identity{status.st_dev, status.st_ino};
}

// The path with every link and "..", "." of its existing part resolved: two
// outputs not written yet are the same file when these are equal.
std::string canonical_of(const std::string& path) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  if (error) return std::filesystem::path(path).lexically_normal().string();
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, error);
  return (error ? absolute.lexically_normal() : canonical).string();
}

// One file an output writes: its own path or a companion.
struct Written {
  const OutputSetting* output;
  std::string path;
  std::optional<Identity> identity;
  std::string canonical;
};

std::string describe(const Written& written) {
  std::string text = named(*written.output);
  if (written.path != written.output->path) text += " (its file '" + printable(written.path) + "')";
  return text;
}

// Refuses `written` if it is the file of an input its output may not replace.
void check_against_inputs(const Written& written, const std::vector<FileSetting>& inputs,
                          const std::vector<std::optional<Identity>>& input_identities, Errc code) {
  if (!written.identity) return;  // not there yet: no input can be it
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].setting == written.output->may_replace) continue;
    if (input_identities[i] == written.identity) {
      throw Error(code, describe(written) + " is the file of " + inputs[i].setting + "='" +
                            printable(inputs[i].path) +
                            "': writing it would destroy that input; give another path");
    }
  }
}

}  // namespace

void check_output_destination(const OutputSetting& output, Errc code) {
  const auto cannot_write = [&](const std::string& where) {
    return Error(
        code, named(output) + ": cannot open for writing (" + std::strerror(errno) + ")" + where);
  };
  struct stat status {};
  if (::lstat(output.path.c_str(), &status) == 0) {
    if (S_ISLNK(status.st_mode)) {
      std::error_code error;
      const std::string target = std::filesystem::read_symlink(output.path, error).string();
      throw Error(code, named(output) + " is a symbolic link (to '" + printable(target) +
                            "'): flexmpi does not write through a link, which would truncate "
                            "the file it leads to; give that file's own path");
    }
    // /dev/null, /dev/full: written to, nothing destroyed; but never renamed.
    if (S_ISCHR(status.st_mode) && !output.renamed_into_place) return;
    if (!S_ISREG(status.st_mode)) {
      throw Error(
          code,
          named(output) + " is not a regular file but " +
              std::string(file_type_name(status.st_mode)) + ": expected a file or a new path" +
              (output.renamed_into_place ? "" : " (or a character device such as /dev/null)"));
    }
    if (::access(output.path.c_str(), W_OK) != 0) throw cannot_write("");
    if (!output.renamed_into_place) return;
  } else if (errno != ENOENT) {
    throw cannot_write("");
  }
  const std::string directory = directory_of(output.path);
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    throw cannot_write(" in its directory '" + printable(directory) + "'");
  }
}

void check_outputs(const std::vector<FileSetting>& inputs,
                   const std::vector<OutputSetting>& outputs, Errc code) {
  std::vector<std::optional<Identity>> input_identities;
  for (const FileSetting& input : inputs) input_identities.push_back(identity_of(input.path));
  std::vector<Written> written;
  for (const OutputSetting& output : outputs) {
    check_output_destination(output, code);
    std::vector<std::string> paths = {output.path};
    paths.insert(paths.end(), output.companions.begin(), output.companions.end());
    for (const std::string& path : paths) {
      Written file{&output, path, identity_of(path), canonical_of(path)};
      check_against_inputs(file, inputs, input_identities, code);
      for (const Written& earlier : written) {
        if (earlier.output == &output) continue;  // its own files differ by name
        if ((file.identity && file.identity == earlier.identity) ||
            file.canonical == earlier.canonical) {
          throw Error(code, describe(file) + " and " + describe(earlier) +
                                " are the same file: one would overwrite the other; give "
                                "each its own path");
        }
      }
      written.push_back(std::move(file));
    }
  }
}

OutputFile::OutputFile(std::string_view setting, const std::string& path)
    : setting_(setting), path_(path) {
  check_output_destination({setting_, path_}, Errc::bad_config);
  const auto cannot_open = [&] {
    return Error(Errc::bad_config, setting_ + "='" + path_ + "': cannot open for writing (" +
                                       std::strerror(errno) + ")");
  };
  // O_NOFOLLOW and O_NONBLOCK: a link or a FIFO put in the path's place
  // since the check is refused instead of followed or waited on.
  const int descriptor =
      ::open(path.c_str(),
             O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
  if (descriptor < 0) throw cannot_open();
  struct stat status {};
  const bool regular_or_device =
      ::fstat(descriptor, &status) == 0 && (S_ISREG(status.st_mode) || S_ISCHR(status.st_mode));
  const int flags = ::fcntl(descriptor, F_GETFL);
  if (regular_or_device && flags >= 0 && ::fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) == 0) {
    file_ = ::fdopen(descriptor, "w");
  }
  if (file_ == nullptr) {
    const Error error = regular_or_device
                            ? cannot_open()
                            : Error(Errc::bad_config, setting_ + "='" + path_ +
                                                          "' is not a regular file or a device");
    ::close(descriptor);
    throw error;
  }
}

OutputFile::~OutputFile() { close(); }

void OutputFile::append(std::string_view text) {
  if (failed_ || file_ == nullptr) return;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0) {
    fail("writing");
  }
}

bool OutputFile::close() {
  if (file_ != nullptr) {
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (closed != 0 && !failed_) fail("closing");
  }
  return !failed_;
}

void OutputFile::fail(const char* step) {
  failed_ = true;
  std::fprintf(stderr,
               "flexmpi: %s='%s': %s failed (%s): the output written from here on is lost\n",
               setting_.c_str(), path_.c_str(), step, std::strerror(errno));
  std::fflush(stderr);
}

}  // namespace flexmpi
