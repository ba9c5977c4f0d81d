#!/usr/bin/env python3
"""The HPMP experiment of thesis 6.5 (Figs. 6.17-6.19) on an emulated cluster.

flexmpi-jacobi or flexmpi-cg (--app) on the emulated Table 6.4 cluster
(emulated_cluster.py): first static runs (FLEXMPI_POLICY=lb, balanced, no
process change) on every process count of --counts, giving the time per
iteration of each count; then FLEXMPI_POLICY=hpmp starting on 8 with the 10
idle PEs granted and FLEXMPI_MAX_PROCS=18. The hostfile lists the 8 initial
PEs (2 per class) and then the 10 idle ones fastest class first, the order
HPMP takes them in, so a static run on c processes uses the PEs HPMP would.
Repeated --runs times, static counts and HPMP interleaved so that a slow
spell of the machine touches all of them.

Prints the static curve (median of the runs), the count HPMP chose in each
run, the static time of that count against the best static count (the
decision: target within 5 %), the time per iteration HPMP then ran at, and
the whole run against the static 8-process run.

usage: hpmp_experiment.py --build build [--app jacobi|cg] [--runs 3] [--out out/hpmp]
"""
import argparse
import collections
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulated_cluster import (CLASSES, add_unit_time_argument, fix_unit_time,  # noqa: E402
                              run_app, seconds_per_iteration)

# The 8 initial PEs (2 per class), then the 10 idle ones, fastest class first.
HOSTS = ("c1a:C1:2\nc7a:C7:2\nc6a:C6:2\nc8a:C8:2\n"
         "c8b:C8:2\nc6b:C6:3\nc7b:C7:3\nc1b:C1:2\n")


def run(args, nprocs, policy, trace, iterations):
    """One run under `policy`; its trace records and its summary."""
    args.iterations = iterations
    summary = run_app(args, nprocs, {"FLEXMPI_POLICY": policy, "FLEXMPI_MAX_PROCS": "18",
                                     "FLEXMPI_TRACE": trace})
    return [json.loads(line) for line in open(trace)], summary


def settled_per_iteration(records, nprocs):
    """Median time per iteration of the intervals on nprocs processes, from
    the third on (the balancer settles the partition in the first two)."""
    times = [seconds_per_iteration(r) for r in records if r["nprocs"] == nprocs][2:]
    return statistics.median(times) if times else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--app", choices=("jacobi", "cg"), default="jacobi")
    parser.add_argument("--out", default="out/hpmp")
    parser.add_argument("--size", type=int, default=2400, help="rows (Jacobi n, CG --generate)")
    parser.add_argument("--iterations", type=int, default=1000, help="iterations of the HPMP run")
    parser.add_argument("--static-iterations", type=int, default=200,
                        help="iterations of each static run (only its time per iteration counts)")
    parser.add_argument("--interval", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--counts", default=",".join(str(c) for c in range(8, 19)))
    parser.add_argument("--reference-speed", type=float, default=100.0,
                        help="a class X of this speed (GFLOPS) that no node has: every emulated "
                             "PE runs at its class's speed relative to X, so the emulated time "
                             "dominates the real work (0: the fastest class, C8, runs at full speed)")
    add_unit_time_argument(parser)
    args = parser.parse_args()
    hpmp_iterations = args.iterations
    os.makedirs(args.out, exist_ok=True)
    classes = CLASSES + (f"X {args.reference_speed}\n" if args.reference_speed > 0 else "")
    for name, text in (("hosts.txt", HOSTS), ("classes.txt", classes)):
        with open(os.path.join(args.out, name), "w") as stream:
            stream.write(text)

    print(f"flexmpi-{args.app} size {args.size}, HPMP run {hpmp_iterations} iterations, static "
          f"runs {args.static_iterations}, sampling interval {args.interval}, {args.runs} runs, "
          f"emulated Table 6.4 cluster (sleep mode), reference speed "
          f"{args.reference_speed or 'C8'}, {fix_unit_time(args)}")
    counts = [int(c) for c in args.counts.split(",")]
    static = collections.defaultdict(list)
    hpmp = []
    for repetition in range(args.runs):
        for count in counts:
            trace = os.path.join(args.out, f"static_{count}_run{repetition}.jsonl")
            records, _ = run(args, count, "lb", trace, args.static_iterations)
            static[count].append(settled_per_iteration(records, count))
        trace = os.path.join(args.out, f"hpmp_run{repetition}.jsonl")
        records, summary = run(args, 8, "hpmp", trace, hpmp_iterations)
        chosen = collections.Counter(r["nprocs"] for r in records).most_common(1)[0][0]
        hpmp.append({"chosen": chosen, "counts": [r["nprocs"] for r in records],
                     "per_iteration": settled_per_iteration(records, chosen),
                     "time": summary["time"], "checksum": summary["checksum"]})
        print(f"run {repetition + 1}: hpmp processes per interval {hpmp[-1]['counts'][:8]}..., "
              f"chose {chosen}, {1e3 * hpmp[-1]['per_iteration']:.2f} ms/iteration, whole run "
              f"{summary['time']:.2f} s", flush=True)

    curve = {c: statistics.median(v) for c, v in static.items()}
    best = min(curve, key=curve.get)
    print(f"{'processes':>9} {'static ms/iteration':>20} {'min':>7} {'max':>7}")
    for count in counts:
        print(f"{count:>9} {1e3 * curve[count]:>20.2f} {1e3 * min(static[count]):>7.2f} "
              f"{1e3 * max(static[count]):>7.2f}")
    print(f"best static count {best}: {1e3 * curve[best]:.2f} ms/iteration")
    for index, h in enumerate(hpmp):
        print(f"run {index + 1}: hpmp chose {h['chosen']} (static {1e3 * curve[h['chosen']]:.2f} "
              f"ms/iteration, {curve[h['chosen']] / curve[best]:.3f} x the best; target <= 1.05), "
              f"ran at {1e3 * h['per_iteration']:.2f} ms/iteration "
              f"({h['per_iteration'] / curve[h['chosen']]:.3f} x the static run of that count), "
              f"checksum {h['checksum']}")
    static_total = curve[8] * hpmp_iterations
    print(f"whole run: hpmp median {statistics.median(h['time'] for h in hpmp):.2f} s; static 8 "
          f"processes {static_total:.2f} s (its time per iteration x {hpmp_iterations})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
