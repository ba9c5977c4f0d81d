#!/usr/bin/env python3
"""The HPMP experiment of thesis 6.5 (Figs. 6.17-6.19) on an emulated cluster.

flexmpi-jacobi on the emulated Table 6.4 cluster (FLEXMPI_EMULATE_CLUSTER=1,
sleep mode): first static runs on every process count of --counts (the
processes fill the hostfile in order: the 8 initial PEs, 2 per class, then
the 10 idle ones fastest class first, the order HPMP takes them in), giving
the time per iteration of each count; then FLEXMPI_POLICY=hpmp starting on 8
with the 10 idle PEs granted and FLEXMPI_MAX_PROCS=18. Prints the static
curve, the count HPMP chose, the time per iteration it ran at once it had
chosen, and the ratio to the best static count (target: within 5 %).

usage: hpmp_experiment.py --build build [--out out/hpmp] [--counts 8,10,12,14,16,18]
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smp_experiment import CLASSES, run_jacobi  # noqa: E402

# The 8 initial PEs (2 per class), then the 10 idle ones, fastest class first.
HOSTS = ("c1a:C1:2\nc7a:C7:2\nc6a:C6:2\nc8a:C8:2\n"
         "c8b:C8:2\nc6b:C6:3\nc7b:C7:3\nc1b:C1:2\n")


def run(args, nprocs, policy, trace):
    """One run under `policy`; its trace records and its summary."""
    summary = run_jacobi(args, nprocs, {"FLEXMPI_POLICY": policy, "FLEXMPI_MAX_PROCS": "18",
                                        "FLEXMPI_TRACE": trace})
    return [json.loads(line) for line in open(trace)], summary


def seconds_per_iteration(record):
    """The interval's time per iteration: its slowest process's wall time."""
    return max(record["wall_time"]) / record["iterations"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", default="out/hpmp")
    parser.add_argument("--size", type=int, default=2400)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--interval", type=int, default=10)
    parser.add_argument("--counts", default="8,10,12,14,16,18")
    parser.add_argument("--reference-speed", type=float, default=0.0,
                        help="a class X of this speed (GFLOPS) that no node has: every emulated "
                             "PE runs at its class's speed relative to X, so the emulated time "
                             "dominates the real work (0: the fastest class, C8, runs at full speed)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    classes = CLASSES + (f"X {args.reference_speed}\n" if args.reference_speed > 0 else "")
    for name, text in (("hosts.txt", HOSTS), ("classes.txt", classes)):
        with open(os.path.join(args.out, name), "w") as stream:
            stream.write(text)

    print(f"flexmpi-jacobi n={args.size}, {args.iterations} iterations, sampling interval "
          f"{args.interval}, emulated Table 6.4 cluster (sleep mode), reference speed "
          f"{args.reference_speed or 'C8'}")
    static = {}
    for count in (int(c) for c in args.counts.split(",")):
        # The balancer settles the partition; the median interval after the
        # first two is the count's time per iteration.
        records, _ = run(args, count, "lb", os.path.join(args.out, f"static_{count}.jsonl"))
        static[count] = statistics.median(seconds_per_iteration(r) for r in records[2:])
        print(f"  static {count:>2} processes: {1e3 * static[count]:8.2f} ms/iteration")
    best = min(static, key=static.get)

    records, summary = run(args, 8, "hpmp", os.path.join(args.out, "hpmp.jsonl"))
    counts = [r["nprocs"] for r in records]
    chosen = max(counts)
    settled = [seconds_per_iteration(r) for r in records if r["nprocs"] == chosen][2:]
    per_iteration = statistics.median(settled) if settled else float("nan")
    print(f"hpmp: processes per interval {counts}")
    print(f"hpmp chose {chosen} processes: {1e3 * per_iteration:.2f} ms/iteration once settled; "
          f"best static count {best}: {1e3 * static[best]:.2f} ms/iteration; ratio "
          f"{per_iteration / static[best]:.3f} (target <= 1.05); whole run {summary['time']} s, "
          f"checksum {summary['checksum']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
