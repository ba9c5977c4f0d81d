#!/usr/bin/env python3
"""DRUM against rcp and fpm on the same cases (DRUM thesis ch. 5:
experiments (b), (c) and (e)), 2 ranks bound to the 2 cores.

Cases:
  fast/slow   rank 1 emulated at 1/1.5 of rank 0 (burn mode): the
              1.5x mix of Table 5.2 (RC against RC_ideal = 0.2);
  loaded      equal ranks, and flexmpi-load keeps rank 1's core busy from the
              start to the end (a compute-bound outside job on the host of the
              highest rank, Fig. 5.7): a non-dedicated node.
Modes: static (the even split), rcp, fpm-akima, drum. Each case and mode runs
--repeats times, modes alternating; the figure is flexmpi-jacobi's own loop
time, median of the runs.
  RC       = (t_static - t_mode) / t_static     (DRUM thesis 5.1), from the
             medians, and paired: 1 - the median over repeats of t_mode /
             t_static of the same round (this VM's speed drifts between rounds)
  RC_ideal = 1 - 2 / (1 + h), h = rank 0's speed over rank 1's measured in
             the static runs (rows per second of computation wall time,
             median over intervals and runs): the two vCPUs of this VM differ
             by themselves, so the nominal 1.5 is not the ratio the run sees.

  python3 bench/drum/partitioner_cases.py --build build --repeats 5
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lb_benchmarks import run  # noqa: E402  (one launcher for every 2-rank benchmark)

MODES = ["static", "rcp", "fpm-akima", "drum"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--mpiexec", default="mpiexec.openmpi")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--size", type=int, default=3000)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--sampling-interval", type=int, default=50)
    parser.add_argument("--cases", nargs="*", default=["fast/slow", "loaded"])
    args = parser.parse_args()
    jacobi = [os.path.join(args.build, "apps/jacobi/flexmpi-jacobi"), "--size", str(args.size),
              "--iterations", str(args.iterations), "--sampling-interval",
              str(args.sampling_interval), "--quiet"]
    load = os.path.join(args.build, "tools/flexmpi-load/flexmpi-load")
    print("| case | measured h | RC ideal | mode | runs (s) | median s | RC | RC paired |"
          " paired / ideal |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as workdir:
        for case in args.cases:
            times = {mode: [] for mode in MODES}
            ratios = []
            for repeat in range(args.repeats):
                for mode in MODES:
                    env = {"FLEXMPI_SAMPLING_INTERVAL": str(args.sampling_interval)}
                    if case == "fast/slow":
                        env["FLEXMPI_EMULATE_SPEED"] = f"1.0,{1 / 1.5:.4f}"
                    if mode != "static":
                        env["FLEXMPI_PARTITIONER"] = mode
                    loader = None
                    if case == "loaded":
                        loader = subprocess.Popen([load, "--cores", "1", "--schedule", "on:600"],
                                                  stdout=subprocess.DEVNULL)
                    try:
                        trace = os.path.join(workdir, f"{repeat}_{mode}.jsonl")
                        seconds, records = run(args,
                                               jacobi + (["--static"] if mode == "static" else []),
                                               env, trace, bind=True)
                    finally:
                        if loader:
                            loader.terminate()
                            loader.wait()
                    times[mode].append(seconds)
                    if mode == "static":
                        ratios += [(r["metric_count"][0] / r["computation_time"][0]) /
                                   (r["metric_count"][1] / r["computation_time"][1])
                                   for r in records]
                    print(f"# {case} {mode} run {repeat}: {seconds:.3f} s", flush=True)
                    time.sleep(0.3)
            static = statistics.median(times["static"])
            h = statistics.median(ratios)
            ideal = 1 - 2 / (1 + max(h, 1 / h))
            for mode in MODES:
                median = statistics.median(times[mode])
                rc = (static - median) / static
                paired = 1 - statistics.median(t / s for t, s in zip(times[mode], times["static"]))
                share = f"{paired / ideal:.2f}" if ideal > 0 and mode != "static" else "-"
                print(f"| {case} | {h:.2f} | {ideal:.3f} | {mode} |"
                      f" {', '.join(f'{t:.3f}' for t in times[mode])} | {median:.3f} | {rc:.3f} |"
                      f" {paired:.3f} | {share} |", flush=True)


if __name__ == "__main__":
    main()
