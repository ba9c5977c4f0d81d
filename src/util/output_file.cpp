#include "util/output_file.hpp"

#include <cerrno>
#include <cstring>

#include "flexmpi/error.hpp"

namespace flexmpi {

OutputFile::OutputFile(std::string_view setting, const std::string& path)
    : setting_(setting), path_(path), file_(std::fopen(path.c_str(), "w")) {
  if (file_ == nullptr) {
    throw Error(Errc::bad_config, setting_ + "='" + path + "': cannot open for writing (" +
                                      std::strerror(errno) + ")");
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
