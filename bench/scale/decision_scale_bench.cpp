// Decisions at scale, by simulation (docs/results.md,
// "Decisions at scale (simulation)"). No MPI: synthetic interval records of
// P processes on C node classes drive every component that reads them -- the
// interval exchange's unpacking, the imbalance detector, the load balancer,
// each registered partitioner, the interval forecaster and the hpmp and amp
// planners -- and the time of one decision (median over the repetitions) and
// the heap its state keeps are printed as a markdown table, with rank 0's
// peak RSS. Target: every decision <= 10 ms at 16,384 processes.
//
// Each component runs in a child process, killed after --timeout-s: AMP's
// integer programs (GLPK's branch and bound) ran for minutes at a few hundred
// processes, and the table must still be printed.
//
//   bench-decision-scale [--processes 1024,4096,16384] [--classes 8,32]
//                        [--repetitions 7] [--cores-per-node 32]
//                        [--rows-per-process 1000] [--limit-ms 10] [--timeout-s 20]
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "decision_timers.hpp"
#include "monitoring/interval.hpp"
#include "util/statistics.hpp"

namespace flexmpi::bench {
namespace {

struct Options {
  std::vector<int> processes = {1024, 4096, 16384};
  std::vector<int> classes = {8, 32};
  int repetitions = 7;
  int cores_per_node = 32;
  std::int64_t rows_per_process = 1000;
  double limit_ms = 10.0;
  double timeout_s = 20.0;
};

// The largest resident set of this process and of the children measured so far.
double peak_rss_mib() {
  struct rusage self {
  }, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  return static_cast<double>(std::max(self.ru_maxrss, children.ru_maxrss)) / 1024.0;  // KiB
}

// One measurement as a line: kept bytes, milliseconds (comma-separated), outcome.
std::string serialize(const Measurement& m) {
  std::ostringstream line;
  line << m.kept_bytes << '\t';
  for (std::size_t i = 0; i < m.milliseconds.size(); ++i) {
    line << (i > 0 ? "," : "") << fmt::format("{:.6f}", m.milliseconds[i]);
  }
  line << '\t' << m.outcome << '\n';
  return line.str();
}

std::optional<Measurement> deserialize(const std::string& component, const std::string& text) {
  std::istringstream line(text);
  Measurement m{component, "", {}, 0};
  std::string times;
  if (!(line >> m.kept_bytes) || line.get() != '\t' || !std::getline(line, times, '\t')) {
    return std::nullopt;
  }
  std::getline(line, m.outcome);
  std::istringstream values(times);
  for (std::string value; std::getline(values, value, ',');)
    m.milliseconds.push_back(std::stod(value));
  if (m.milliseconds.empty()) return std::nullopt;
  return m;
}

// Reads the child's line until it ends or `deadline` passes.
std::string read_until(int fd, std::chrono::steady_clock::time_point deadline) {
  std::string text;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return {};
    pollfd wanted{fd, POLLIN, 0};
    if (poll(&wanted, 1, static_cast<int>(left.count())) <= 0) return {};
    const ssize_t got = read(fd, buffer, sizeof buffer);
    if (got <= 0) return text;
    text.append(buffer, static_cast<std::size_t>(got));
  }
}

// Measures one component in a child process; nullopt when it did not finish in time.
std::optional<Measurement> measure_in_child(const SyntheticJob& job, std::size_t component,
                                            const std::string& name, const Options& options) {
  std::fflush(stdout);
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) throw std::runtime_error("pipe failed");
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    close(pipe_ends[0]);
    const std::string line = serialize(measure_decision(job, component, options.repetitions));
    const bool written =
        write(pipe_ends[1], line.data(), line.size()) == static_cast<ssize_t>(line.size());
    _exit(written ? 0 : 1);
  }
  close(pipe_ends[1]);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(options.timeout_s));
  const std::string text = read_until(pipe_ends[0], deadline);
  close(pipe_ends[0]);
  if (text.empty()) kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  return text.empty() ? std::nullopt : deserialize(name, text);
}

// What rank 0 receives per interval (the Allgather of every record) and holds
// once it is unpacked (the IntervalReport), for P processes.
struct Gathered {
  std::size_t exchanged = 0;
  std::size_t report = 0;
};
Gathered gathered_bytes(int processes) {
  const auto p = static_cast<std::size_t>(processes);
  return {p * ProcessInterval::kFieldCount * sizeof(double), p * sizeof(ProcessInterval)};
}

struct SizeSummary {
  int processes = 0;
  int classes = 0;
  double rss_mib = 0.0;
};

int run(const Options& options) {
  std::printf(
      "| component | processes | node classes | median ms | max ms | kept bytes | outcome |\n"
      "|---|---:|---:|---:|---:|---:|---|\n");
  std::vector<SizeSummary> sizes;
  int over_limit = 0;
  for (const int processes : options.processes) {
    for (const int classes : options.classes) {
      JobShape shape;
      shape.processes = processes;
      shape.node_classes = std::min(classes, processes);
      shape.cores_per_node = options.cores_per_node;
      shape.rows_per_process = options.rows_per_process;
      const SyntheticJob job(shape);
      const std::vector<std::string> components = decision_components();
      for (std::size_t c = 0; c < components.size(); ++c) {
        const std::optional<Measurement> measured =
            measure_in_child(job, c, components[c], options);
        if (!measured) {
          ++over_limit;
          std::printf("| %s | %d | %d | **> %.0f s** | | | did not finish |\n",
                      components[c].c_str(), processes, shape.node_classes, options.timeout_s);
          continue;
        }
        const Measurement& m = *measured;
        const double typical = median(m.milliseconds);
        const double worst = *std::max_element(m.milliseconds.begin(), m.milliseconds.end());
        const bool over = typical > options.limit_ms;
        over_limit += over ? 1 : 0;
        std::printf("| %s | %d | %d | %s%.3f%s | %.3f | %zu | %s |\n", m.component.c_str(),
                    processes, shape.node_classes, over ? "**" : "", typical, over ? "**" : "",
                    worst, m.kept_bytes, m.outcome.c_str());
      }
      std::fflush(stdout);
      sizes.push_back({processes, shape.node_classes, peak_rss_mib()});
    }
  }
  std::printf(
      "\n| processes | node classes | gathered per interval (Allgather), bytes | interval report, "
      "bytes | peak RSS so far, MiB |\n|---:|---:|---:|---:|---:|\n");
  for (const SizeSummary& s : sizes) {
    const Gathered g = gathered_bytes(s.processes);
    std::printf("| %d | %d | %zu | %zu | %.1f |\n", s.processes, s.classes, g.exchanged, g.report,
                s.rss_mib);
  }
  std::printf("\n%d decision(s) over %.1f ms (median, in bold)\n", over_limit, options.limit_ms);
  return 0;
}

}  // namespace
}  // namespace flexmpi::bench

int main(int argc, char** argv) {
  flexmpi::bench::Options options;
  CLI::App app{"Time flexmpi's decisions on synthetic interval records of many processes (no MPI)"};
  app.add_option("--processes", options.processes, "process counts")->delimiter(',');
  app.add_option("--classes", options.classes, "node class counts")->delimiter(',');
  app.add_option("--repetitions", options.repetitions, "decisions timed per component")
      ->check(CLI::PositiveNumber);
  app.add_option("--cores-per-node", options.cores_per_node, "processes per node")
      ->check(CLI::PositiveNumber);
  app.add_option("--rows-per-process", options.rows_per_process, "rows of the decomposition")
      ->check(CLI::PositiveNumber);
  app.add_option("--limit-ms", options.limit_ms, "a median above this is shown in bold");
  app.add_option("--timeout-s", options.timeout_s, "a component's repetitions may take this long")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    return flexmpi::bench::run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench-decision-scale: %s\n", e.what());
    return 1;
  }
}
