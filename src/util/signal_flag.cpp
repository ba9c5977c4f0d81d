#include "util/signal_flag.hpp"

#include <csignal>

namespace flexmpi {

namespace {

volatile std::sig_atomic_t arrived = 0;

extern "C" void note_signal(int /*signal*/) { arrived = 1; }

// The dispositions replaced, by signal (SIGUSR1 and SIGTERM are below 32).
constexpr int kSignals = 32;
struct sigaction replaced[kSignals] = {};
bool caught[kSignals] = {};

}  // namespace

void catch_signal(int signal) {
  if (signal <= 0 || signal >= kSignals || caught[signal]) return;
  struct sigaction action {};
  action.sa_handler = note_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // MPI's and the program's system calls go on
  if (sigaction(signal, &action, &replaced[signal]) == 0) caught[signal] = true;
}

void release_signal(int signal) {
  if (signal <= 0 || signal >= kSignals || !caught[signal]) return;
  sigaction(signal, &replaced[signal], nullptr);
  caught[signal] = false;
}

bool take_signal() noexcept {
  const bool was = arrived != 0;
  arrived = 0;
  return was;
}

bool signal_pending() noexcept { return arrived != 0; }

}  // namespace flexmpi
