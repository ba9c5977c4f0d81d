#!/usr/bin/env python3
"""flexmpi-epigraph on 8 processes of an emulated cluster (thesis
6.2, Figs. 6.2-6.6, and 6.4, Fig. 6.16).

Every process runs on this machine at its node class's relative speed, the
missing time slept (FLEXMPI_EMULATE_CLUSTER=1, FLEXMPI_EMULATE_MODE=sleep;
bench/malleability/emulated_cluster.py), so 8 and more emulated PEs share
the 2 real cores. The node classes are those of thesis Table 6.4 with this
machine's core counted as --reference-speed GFLOPS (default 100: the
emulated PEs are 22-53 times slower than a real core, so the real work of
8 processes stays well below the emulated time).

- Balancing (Figs. 6.2-6.6): static, count, nnz and weight (forecast, and
  weight-last: the last interval's work per row) on a homogeneous
  cluster (8 PEs of class C6) and on the heterogeneous one (2 PEs of each
  Table 6.4 class): median wall time of the simulation loop, ratio to
  static, resource consumption (time x PEs, Fig. 6.3), moves, and the median
  imbalance of the sampling intervals ((max - min) / max of the processes'
  computation time: what the balancer acts on).
- SMP with a predefined schedule (Fig. 6.16): on the heterogeneous cluster
  with 4 idle C8 PEs, the smp policy (weight model) spawns 4 processes on
  them at the end of --grow-day, as the epidemic rises, and removes them at
  the end of --shrink-day, after its peak; resource consumption is the sum
  over sampling intervals of wall time x processes (from the trace).

Every configuration runs --repeats times, the repetitions interleaved; every
run must print the same epidemic curve. The traces of the first repetition
and their flexmpi-plot figures are written to --out.

usage: epigraph_cluster.py --build build [--repeats 3] [--out out/epigraph-cluster]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "malleability"))
from emulated_cluster import CLASSES, MPI_ENV  # noqa: E402

CLUSTERS = {
    "homogeneous": "c6h:C6:8\n",
    # 2 PEs of each class (mpiexec fills them in order), then 4 idle C8 PEs for SMP.
    "heterogeneous": "c1a:C1:2\nc7a:C7:2\nc6a:C6:2\nc8a:C8:2\nc8b:C8:4\n",
}
# weight: each row's forecast work over the next interval (--row-weight next, the
# default); weight-last: its work in the last interval (--row-weight last).
MODES = ["static", "count", "nnz", "weight-last", "weight"]
SUMMARY = re.compile(r"peak_processes=(\d+).*moves=(\d+).*curve_checksum=([0-9a-f]+)"
                     r".*\btime=([0-9.]+) s")


def run(args, cluster, mode, trace, extra_env=None):
    """One run; returns (seconds, moves, checksum, peak processes, PE-seconds,
    median imbalance of the sampling intervals)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEXMPI_")}
    env.update(MPI_ENV)
    env.update({
        "FLEXMPI_HOSTFILE": os.path.join(args.out, f"hosts_{cluster}.txt"),
        "FLEXMPI_NODE_CLASSES": os.path.join(args.out, "classes.txt"),
        "FLEXMPI_EMULATE_CLUSTER": "1",
        "FLEXMPI_EMULATE_MODE": "sleep",
        "FLEXMPI_LOG_LEVEL": "warn",
        "FLEXMPI_TRACE": trace,
    })
    env.update(extra_env or {})
    program = os.path.join(args.build, "apps", "epigraph", "flexmpi-epigraph")
    command = ["mpiexec", "-n", "8", program, "--class", args.problem_class, "--days",
               str(args.days), "--step-minutes", str(args.step_minutes), "--quiet",
               "--lb-model", {"static": "count", "smp": "weight", "weight-last": "weight"}.get(mode, mode)]
    if mode == "static":
        command.append("--static")
    if mode == "weight-last":
        command += ["--row-weight", "last"]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    match = SUMMARY.search(out.stdout)
    if out.returncode != 0 or not match:
        sys.exit(f"failed: {' '.join(command)}\n{out.stdout}\n{out.stderr}")
    records = [json.loads(line) for line in open(trace)]
    pe_seconds = sum(max(r["wall_time"]) * r["nprocs"] for r in records)
    imbalance = statistics.median(r["imbalance"] for r in records)
    return (float(match[4]), int(match[2]), match[3], int(match[1]), pe_seconds, imbalance)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", default="out/epigraph-cluster")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--class", dest="problem_class", default="medium")
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--step-minutes", type=int, default=60)
    parser.add_argument("--reference-speed", type=float, default=100.0,
                        help="GFLOPS this machine's core counts as (Table 6.4 classes: 1.90-4.62)")
    parser.add_argument("--grow-day", type=int, default=15)
    parser.add_argument("--shrink-day", type=int, default=45)
    parser.add_argument("--modes", default=",".join(MODES + ["smp"]),
                        help="comma-separated subset of " + ", ".join(MODES + ["smp"]) +
                        " (static is always run: the ratios are to it)")
    parser.add_argument("--clusters", default=",".join(CLUSTERS),
                        help="comma-separated subset of " + ", ".join(CLUSTERS))
    args = parser.parse_args()
    clusters = args.clusters.split(",")
    if not set(clusters) <= set(CLUSTERS):
        sys.exit(f"--clusters: expected some of {list(CLUSTERS)}, got {args.clusters}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "classes.txt"), "w") as stream:
        stream.write(CLASSES + f"X {args.reference_speed}\n")
    for cluster, hosts in CLUSTERS.items():
        with open(os.path.join(args.out, f"hosts_{cluster}.txt"), "w") as stream:
            stream.write(hosts)
    steps_per_day = 1440 // args.step_minutes
    schedule = os.path.join(args.out, "smp_schedule.txt")
    with open(schedule, "w") as stream:
        stream.write(f"{args.grow_day * steps_per_day} spawn 4 C8\n"
                     f"{args.shrink_day * steps_per_day} remove 4\n")
    smp_env = {"FLEXMPI_POLICY": "smp", "FLEXMPI_SCHEDULE": schedule}

    chosen = set(args.modes.split(",")) | {"static"}
    unknown = chosen - set(MODES + ["smp"])
    if unknown:
        sys.exit(f"--modes: unknown {sorted(unknown)}; expected some of {MODES + ['smp']}")
    configurations = [(c, m) for c in clusters for m in MODES if m in chosen]
    if "smp" in chosen and "heterogeneous" in clusters:
        configurations.append(("heterogeneous", "smp"))
    results = {c: [] for c in configurations}
    checksums = set()
    for repeat in range(args.repeats):
        for cluster, mode in configurations:
            trace = os.path.join(args.out, f"{cluster}_{mode}_{repeat + 1}.jsonl")
            result = run(args, cluster, mode, trace, smp_env if mode == "smp" else None)
            results[(cluster, mode)].append(result)
            checksums.add(result[2])
            print(f"run {repeat + 1}: {cluster} {mode}: {result[0]:.2f} s, {result[1]} moves, "
                  f"peak {result[3]} processes, {result[4]:.1f} PE-s", file=sys.stderr, flush=True)
    if len(checksums) != 1:
        sys.exit(f"the curve differs between runs: checksums {sorted(checksums)}")

    print(f"{args.problem_class}, {args.days} days, --step-minutes {args.step_minutes}, 8 "
          f"processes, reference speed {args.reference_speed}; curve checksum of all "
          f"{args.repeats * len(configurations)} runs: {checksums.pop()}\n")
    print("| cluster | mode | median time (s) | runs (s) | time / static | PE-seconds (median) | "
          "PE-s / static | moves (median) | imbalance (median) | peak processes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for cluster in clusters:
        static = results[(cluster, "static")]
        static_time = statistics.median(r[0] for r in static)
        static_pe = statistics.median(r[4] for r in static)
        for mode in MODES + ["smp"]:
            runs = results.get((cluster, mode))
            if not runs:
                continue
            median = statistics.median(r[0] for r in runs)
            pe = statistics.median(r[4] for r in runs)
            print(f"| {cluster} | {mode} | {median:.2f} | {', '.join(f'{r[0]:.2f}' for r in runs)} "
                  f"| {median / static_time:.3f} | {pe:.1f} | {pe / static_pe:.3f} | "
                  f"{statistics.median(r[1] for r in runs):g} | "
                  f"{statistics.median(r[5] for r in runs):.2f} | {max(r[3] for r in runs)} |")

    plot = os.path.join(args.build, "tools", "flexmpi-plot")
    for cluster, mode in (("heterogeneous", "weight"), ("heterogeneous", "smp"),
                          ("homogeneous", "weight")):
        if (cluster, mode) not in results:
            continue
        trace = os.path.join(args.out, f"{cluster}_{mode}_1.jsonl")
        subprocess.run([plot, trace, "-o", os.path.join(args.out, f"plots_{cluster}_{mode}")],
                       check=True, capture_output=True)


if __name__ == "__main__":
    main()
