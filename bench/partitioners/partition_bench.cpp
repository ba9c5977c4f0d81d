// Offline benchmark of the partitioners (no MPI): for p = 2 ... 10,000
// processes with synthetic speed functions, the time to compute a
// partition, the solver (or bisection) iterations and the residual imbalance
// of the integer partition (target <= 1 %). The FPM paper (sec. 3.3): 2
// iterations when the speed functions are smooth, up to 30 near steep
// changes, O(p^2) per HYBRJ iteration.
//
// Each process's model is what the partitioner would have learnt: six
// measurements of its true speed function around n/p. Two families:
//   smooth: s(x) = a / (1 + c x / (n/p))        (caches: speed falls slowly)
//   steep:  the rows beyond X run r times slower (a memory cliff, as
//           FLEXMPI_EMULATE_SPEED=1@X:r), X in [0.5, 1.5] n/p, r in [0.1, 0.3]
// Residual imbalance: (max - min) / max of the model times of the rounded
// partition, and of the true times (which adds the model's own error: six
// points cannot place a cliff exactly). A second table runs the dynamic
// procedure (sec. 4) on the true functions: the imbalance after 1, 3, 7 and
// 15 decisions, as each decision adds the measurement of its partition.
//
//   bench-partitioners [--max-p N] [--dense-max-p N] [--repeat N] [--csv]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "balancing/fpm/piecewise_linear_speed.hpp"
#include "balancing/fpm_akima/akima_speed_function.hpp"
#include "balancing/fpm_akima/fpm_akima_partitioner.hpp"
#include "balancing/fpm_geometric/fpm_geometric_partitioner.hpp"
#include "balancing/partitioner.hpp"
#include "config/config.hpp"

namespace flexmpi {
namespace {

struct TrueFunction {
  std::function<double(double)> time;  // seconds per iteration for x rows
};

std::vector<TrueFunction> make_functions(const std::string& family, std::size_t p, double n,
                                         unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> base(1e6, 1e7);  // rows per second
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double share = n / static_cast<double>(p);
  std::vector<TrueFunction> functions;
  for (std::size_t i = 0; i < p; ++i) {
    const double a = base(random);
    if (family == "smooth") {
      const double c = 0.5 * unit(random);
      functions.push_back({[=](double x) { return x * (1.0 + c * x / share) / a; }});
    } else {
      const double cliff = (0.5 + unit(random)) * share;
      const double slow = 0.1 + 0.2 * unit(random);
      functions.push_back(
          {[=](double x) { return (std::min(x, cliff) + std::max(0.0, x - cliff) / slow) / a; }});
    }
  }
  return functions;
}

SpeedHistory make_history(const std::vector<TrueFunction>& truth, double n) {
  const std::size_t p = truth.size();
  SpeedHistory history(32, 0.0);
  history.reset(p, n);
  const double share = n / static_cast<double>(p);
  for (std::size_t i = 0; i < p; ++i) {
    for (double f : {0.3, 0.6, 0.9, 1.2, 1.6, 2.5}) {
      const double x = f * share;
      history.add(i, x, x / truth[i].time(x));
    }
  }
  return history;
}

struct Row {
  std::string method;
  double seconds = 0.0;
  int iterations = 0;
  bool converged = false;
  double model_imbalance = 0.0;
  double true_imbalance = 0.0;
};

// One partition by `partitioner` from `history`, rounded to rows.
Row measure(FpmPartitioner& partitioner, const SpeedHistory& history,
            const std::vector<TrueFunction>& truth, double n,
            const std::function<double(std::size_t, double)>& model_time, int repeat) {
  const std::size_t p = truth.size();
  FpmMeasurement current{n, std::vector<double>(p, n / p), std::vector<double>(p)};
  for (std::size_t i = 0; i < p; ++i) current.time[i] = truth[i].time(n / p);
  FpmPartitioner::Solution solution;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeat; ++r) solution = partitioner.solve(history, current);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeat;
  Row row{partitioner.last_stats().method,
          seconds,
          partitioner.last_stats().iterations,
          partitioner.last_stats().converged && solution.fallback.empty(),
          -1.0,
          -1.0};
  if (solution.sizes.size() != p) return row;
  PartitionInput input;
  input.global_size = static_cast<std::int64_t>(n);
  const Decomposition blocks = blocks_for_sizes(input, solution.sizes);
  std::vector<double> model, real;
  for (std::size_t i = 0; i < p; ++i) {
    const double x = static_cast<double>(blocks[i].count);
    model.push_back(model_time(i, x));
    real.push_back(truth[i].time(x));
  }
  row.model_imbalance = relative_imbalance(model);
  row.true_imbalance = relative_imbalance(real);
  return row;
}

// The dynamic procedure of the FPM paper (sec. 4) on the true functions:
// decisions until the true imbalance of the partition is <= 1 %.
struct Dynamic {
  std::vector<double> imbalance;  // true imbalance after each decision
};

Dynamic simulate(const std::string& name, const std::vector<TrueFunction>& truth, std::int64_t rows,
                 int decisions) {
  auto partitioner = make_partitioner(name, Config{});
  Decomposition current = block_decomposition(rows, static_cast<int>(truth.size()));
  Dynamic run;
  for (int d = 0; d < decisions; ++d) {
    PartitionInput input;
    input.global_size = rows;
    input.current = current;
    for (std::size_t i = 0; i < truth.size(); ++i) {
      const double t = truth[i].time(static_cast<double>(current[i].count));
      input.computation_time.push_back(t);
      input.iterations.push_back(1.0);
      input.speed.push_back(current[i].count / t);
    }
    current = partitioner->partition(input).blocks;
    std::vector<double> times;
    for (std::size_t i = 0; i < truth.size(); ++i)
      times.push_back(truth[i].time(static_cast<double>(current[i].count)));
    run.imbalance.push_back(relative_imbalance(times));
  }
  return run;
}

void dynamic_table(std::size_t max_p) {
  std::printf(
      "\n| family | p | partitioner | after 1 | after 3 | after 7 | after 15 | first <= 1 %% |\n"
      "|---|---:|---|---:|---:|---:|---:|---:|\n");
  for (const std::string family : {"smooth", "steep"}) {
    for (const std::size_t p : {2, 4, 16, 64, 256, 1000}) {
      if (p > max_p) break;
      const auto rows = static_cast<std::int64_t>(1000 * p);
      const auto truth =
          make_functions(family, p, static_cast<double>(rows), 29u + static_cast<unsigned>(p));
      for (const char* name : {"rcp", "ull", "fpm-akima", "fpm-geometric"}) {
        const Dynamic run = simulate(name, truth, rows, 15);
        int first = 0;
        for (std::size_t d = 0; d < run.imbalance.size() && first == 0; ++d) {
          if (run.imbalance[d] <= 0.01) first = static_cast<int>(d) + 1;
        }
        std::printf("| %s | %zu | %s | %.1f %% | %.1f %% | %.1f %% | %.1f %% | %s |\n",
                    family.c_str(), p, name, 100 * run.imbalance[0], 100 * run.imbalance[2],
                    100 * run.imbalance[6], 100 * run.imbalance[14],
                    first ? std::to_string(first).c_str() : "-");
        std::fflush(stdout);
      }
    }
  }
}

int run(int argc, char** argv) {
  std::size_t max_p = 10000, dense_max_p = 1000;
  int repeat_small = 20;
  bool csv = false;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--max-p") && a + 1 < argc)
      max_p = std::strtoul(argv[++a], nullptr, 10);
    else if (!std::strcmp(argv[a], "--dense-max-p") && a + 1 < argc)
      dense_max_p = std::strtoul(argv[++a], nullptr, 10);
    else if (!std::strcmp(argv[a], "--repeat") && a + 1 < argc)
      repeat_small = std::atoi(argv[++a]);
    else if (!std::strcmp(argv[a], "--csv"))
      csv = true;
    else {
      std::fprintf(stderr, "usage: %s [--max-p N] [--dense-max-p N] [--repeat N] [--csv]\n",
                   argv[0]);
      return 2;
    }
  }
  if (csv)
    std::printf("family,p,n,method,seconds,iterations,converged,model_imbalance,true_imbalance\n");
  else
    std::printf(
        "| family | p | n | method | time per partition | iterations | converged | imbalance "
        "(models) | imbalance (true) |\n"
        "|---|---:|---:|---|---:|---:|---|---:|---:|\n");
  const std::vector<std::size_t> sizes = {2,   4,   8,    16,   32,   64,   128,
                                          256, 512, 1000, 2000, 5000, 10000};
  for (const std::string family : {"smooth", "steep"}) {
    for (const std::size_t p : sizes) {
      if (p > max_p) break;
      const double n = 1000.0 * static_cast<double>(p);
      const auto truth = make_functions(family, p, n, 17u + static_cast<unsigned>(p));
      const SpeedHistory history = make_history(truth, n);
      std::vector<AkimaSpeedFunction> akima;
      std::vector<PiecewiseLinearSpeed> linear;
      for (std::size_t i = 0; i < p; ++i) {
        akima.emplace_back(history.points(i), n);
        linear.emplace_back(history.points(i));
      }
      const int repeat = p <= 256 ? repeat_small : 1;
      std::vector<Row> rows;
      if (p <= dense_max_p) {
        FpmAkimaPartitioner dense(p);  // hybridsj at any p
        rows.push_back(measure(
            dense, history, truth, n, [&](std::size_t i, double x) { return akima[i].time(x); },
            repeat));
      }
      FpmAkimaPartitioner newton(0);  // the O(p) arrow-shaped Newton
      rows.push_back(measure(
          newton, history, truth, n, [&](std::size_t i, double x) { return akima[i].time(x); },
          repeat));
      FpmGeometricPartitioner geometric;
      rows.push_back(measure(
          geometric, history, truth, n, [&](std::size_t i, double x) { return linear[i].time(x); },
          repeat));
      for (const Row& r : rows) {
        if (csv) {
          std::printf("%s,%zu,%.0f,%s,%.6g,%d,%d,%.3g,%.3g\n", family.c_str(), p, n,
                      r.method.c_str(), r.seconds, r.iterations, r.converged ? 1 : 0,
                      r.model_imbalance, r.true_imbalance);
        } else {
          std::printf("| %s | %zu | %.0f | %s | %.3g ms | %d | %s | %.2f %% | %.2f %% |\n",
                      family.c_str(), p, n, r.method.c_str(), 1e3 * r.seconds, r.iterations,
                      r.converged ? "yes" : "no", 100 * r.model_imbalance, 100 * r.true_imbalance);
        }
        std::fflush(stdout);
      }
    }
  }
  if (!csv) dynamic_table(max_p);
  return 0;
}

}  // namespace
}  // namespace flexmpi

int main(int argc, char** argv) { return flexmpi::run(argc, argv); }
