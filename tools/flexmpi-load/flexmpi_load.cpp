// flexmpi-load: real outside load for the non-dedicated experiments
// (thesis 6.2.3, Euro-Par 2013 section 4.2): busy processes pinned to chosen
// cores, switched on and off by a schedule of bursts and long-term loads.
//
//   flexmpi-load --cores 1 --schedule on:2,off:3,on:2,off:3,on:60
//
// runs one busy process on core 1 for 2 s, nothing for 3 s, ... The load
// competes with whatever else runs on the core exactly like another user's
// program, so the PE really becomes non-dedicated (CPU time < wall time).
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Phase {
  bool busy = false;
  double seconds = 0.0;
};

std::vector<Phase> parse_schedule(const std::string& text) {
  std::vector<Phase> phases;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    const std::size_t colon = item.find(':');
    const std::string kind = item.substr(0, colon);
    if (colon == std::string::npos || (kind != "on" && kind != "off")) {
      throw std::invalid_argument("schedule item '" + item +
                                  "': expected on:SECONDS or off:SECONDS");
    }
    std::size_t used = 0;
    double seconds = 0.0;
    try {
      seconds = std::stod(item.substr(colon + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() - colon - 1 || !(seconds > 0.0) || seconds > 86400.0) {
      throw std::invalid_argument("schedule item '" + item +
                                  "': SECONDS must be a number in (0, 86400]");
    }
    phases.push_back({kind == "on", seconds});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return phases;
}

std::vector<pid_t> children;

void stop_children() {
  for (const pid_t child : children) kill(child, SIGKILL);
  for (const pid_t child : children) waitpid(child, nullptr, 0);
  children.clear();
}

void on_signal(int) {
  stop_children();
  _exit(130);
}

// One busy process pinned to `core`.
pid_t start_busy(int core) {
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) _exit(3);
    volatile double x = 1.0;
    for (;;) x = x * 1.0000001 + 1e-9;
  }
  return child;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> cores;
  int per_core = 1;
  std::string schedule_text;
  CLI::App cli{"flexmpi-load: pinned busy processes on a burst/long-term schedule"};
  cli.add_option("--cores", cores, "cores to load (e.g. --cores 1 or --cores 0 1)")
      ->required()
      ->check(CLI::Range(0, CPU_SETSIZE - 1));
  cli.add_option("--per-core", per_core, "busy processes per core")->check(CLI::Range(1, 64));
  cli.add_option("--schedule", schedule_text, "phases on:SECONDS / off:SECONDS, comma-separated")
      ->required();
  CLI11_PARSE(cli, argc, argv);

  std::vector<Phase> schedule;
  try {
    schedule = parse_schedule(schedule_text);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "flexmpi-load: --schedule: %s\n", e.what());
    return 2;
  }
  const long available = sysconf(_SC_NPROCESSORS_ONLN);
  for (const int core : cores) {
    if (core >= available) {
      std::fprintf(stderr, "flexmpi-load: --cores: core %d does not exist (this machine has %ld)\n",
                   core, available);
      return 2;
    }
  }
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  const auto origin = std::chrono::steady_clock::now();
  for (const Phase& phase : schedule) {
    const double at =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - origin).count();
    std::printf("flexmpi-load: t=%.1fs %s for %.1fs\n", at, phase.busy ? "on " : "off",
                phase.seconds);
    std::fflush(stdout);
    if (phase.busy) {
      for (const int core : cores) {
        for (int k = 0; k < per_core; ++k) children.push_back(start_busy(core));
      }
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(phase.seconds));
    stop_children();
  }
  return 0;
}
