#include "resources/command_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "flexmpi/error.hpp"

extern char** environ;

namespace flexmpi {
namespace {

using Clock = std::chrono::steady_clock;

// The read and write ends of one pipe, closed when it goes.
struct Pipe {
  std::array<int, 2> ends{-1, -1};
  Pipe() {
    if (pipe(ends.data()) != 0)
      throw Error(Errc::unsupported, "pipe: " + std::string(strerror(errno)));
  }
  ~Pipe() {
    for (int end : ends) {
      if (end >= 0) close(end);
    }
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_write_end() {
    close(ends[1]);
    ends[1] = -1;
  }
};

pid_t spawn(const std::vector<std::string>& argv, Pipe& out, Pipe& err) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out.ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.ends[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  const int failed = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (failed != 0) {
    throw Error(Errc::unsupported,
                "cannot run '" + command_line(argv) + "': " + std::string(strerror(failed)));
  }
  out.close_write_end();
  err.close_write_end();
  return pid;
}

// Reads both pipes until they close or `deadline`; false on the deadline.
bool read_until_closed(Pipe& out, Pipe& err, std::string& out_text, std::string& err_text,
                       Clock::time_point deadline) {
  std::array<pollfd, 2> fds{{{out.ends[0], POLLIN, 0}, {err.ends[0], POLLIN, 0}}};
  std::array<std::string*, 2> texts{&out_text, &err_text};
  std::array<char, 4096> buffer{};
  int open = 2;
  while (open > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    if (poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR)
      return false;
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].fd < 0 || fds[k].revents == 0) continue;
      const ssize_t got = read(fds[k].fd, buffer.data(), buffer.size());
      if (got > 0) {
        texts[k]->append(buffer.data(), static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        fds[k].fd = -1;  // poll ignores it from now on
        --open;
      }
    }
  }
  return true;
}

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::string exit_description(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) line += (line.empty() ? "" : " ") + arg;
  return line;
}

std::string SystemCommandRunner::run(const std::vector<std::string>& argv) const {
  Pipe out;
  Pipe err;
  const pid_t pid = spawn(argv, out, err);
  std::string out_text;
  std::string err_text;
  const bool finished = read_until_closed(out, err, out_text, err_text, Clock::now() + timeout_);
  if (!finished) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (finished && WIFEXITED(status) && WEXITSTATUS(status) == 0) return out_text;
  const std::string why = finished ? exit_description(status)
                                   : "no answer within " + std::to_string(timeout_.count()) + " ms";
  throw Error(Errc::unsupported, "'" + command_line(argv) + "' failed (" + why + ")" +
                                     (err_text.empty() ? "" : ": " + trimmed(err_text)));
}

}  // namespace flexmpi
