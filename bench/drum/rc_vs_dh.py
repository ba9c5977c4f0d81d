#!/usr/bin/env python3
"""DRUM thesis ch. 5 (Table 5.2, Figs. 5.2-5.6) on 2 emulated ranks:
how much of the ideal gain the drum partitioner (and rcp) win against the
even split, as the speeds drift apart.

Rank 1 is emulated at relative speed s (burn mode), rank 0 at 1.
For each s and mode (static = the even split, rcp, drum), flexmpi-jacobi runs
`--repeats` times, modes alternating; its reported time (the loop, no start-
up) is the figure, median of the runs.

  RC       = (t_static - t_mode) / t_static            (DRUM thesis 5.1)
  RC_ideal = 1 - n / sum_i h_i, h_i = speed_i / slowest speed
  DH       = sqrt(sum_j (mean W - W_j)^2 / P), W_j = speed_j / fastest
             (the degree of heterogeneity of Xiao et al., DRUM thesis ch. 5)

  python3 bench/drum/rc_vs_dh.py --build build --repeats 3
"""
import argparse
import math
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lb_benchmarks import run  # noqa: E402  (one launcher for every 2-rank benchmark)

SLOW_SPEEDS = [1.0, 1 / 1.25, 1 / 1.5, 1 / 2, 1 / 3]
MODES = ["static", "rcp", "drum"]


def heterogeneity(speeds):
    fastest = max(speeds)
    weights = [s / fastest for s in speeds]
    mean = sum(weights) / len(weights)
    return math.sqrt(sum((mean - w) ** 2 for w in weights) / len(weights))


def ideal_reduction(speeds):
    slowest = min(speeds)
    return 1 - len(speeds) / sum(s / slowest for s in speeds)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--size", type=int, default=3000)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--sampling-interval", type=int, default=50)
    args = parser.parse_args()
    jacobi = [os.path.join(args.build, "apps/jacobi/flexmpi-jacobi"), "--size", str(args.size),
              "--iterations", str(args.iterations), "--sampling-interval",
              str(args.sampling_interval), "--quiet"]
    print("| slow rank's speed | DH | RC ideal | static s | rcp s | drum s | RC rcp | RC drum |"
          " RC drum / RC ideal |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as workdir:
        for slow in SLOW_SPEEDS:
            speeds = [1.0, slow]
            times = {mode: [] for mode in MODES}
            for repeat in range(args.repeats):
                for mode in MODES:
                    env = {"FLEXMPI_EMULATE_SPEED": f"1.0,{slow:.4f}",
                           "FLEXMPI_SAMPLING_INTERVAL": str(args.sampling_interval)}
                    if mode != "static":
                        env["FLEXMPI_PARTITIONER"] = mode
                    trace = os.path.join(workdir, f"{slow:.3f}_{mode}_{repeat}.jsonl")
                    seconds, _ = run(args, jacobi + (["--static"] if mode == "static" else []),
                                     env, trace)
                    times[mode].append(seconds)
            t = {mode: statistics.median(values) for mode, values in times.items()}
            rc = {mode: (t["static"] - t[mode]) / t["static"] for mode in ("rcp", "drum")}
            ideal = ideal_reduction(speeds)
            share = f"{rc['drum'] / ideal:.2f}" if ideal > 0 else "-"
            print(f"| {slow:.3f} | {heterogeneity(speeds):.3f} | {ideal:.3f} | {t['static']:.3f} |"
                  f" {t['rcp']:.3f} | {t['drum']:.3f} | {rc['rcp']:.3f} | {rc['drum']:.3f} |"
                  f" {share} |", flush=True)


if __name__ == "__main__":
    main()
