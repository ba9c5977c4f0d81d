#!/usr/bin/env python3
"""The AMP experiment of thesis 6.5 (Figs. 6.20-6.24) on an emulated cluster.

flexmpi-jacobi or flexmpi-cg (--app) starts on 8 processes of the emulated
Table 6.4 cluster (2 per class; 10 more PEs idle, FLEXMPI_MAX_PROCS=18; the
hostfile of hpmp_experiment.py). For each goal of --goals (FLEXMPI_GOAL_SPEEDUP:
that much faster than the static run as AMP predicts it from the first
interval) and each constraint of --constraints, one FLEXMPI_POLICY=amp run;
beside them a static run (FLEXMPI_POLICY=lb on the 8). Repeated --runs times.
With --profile (for an irregular program, EpiGraph: thesis 5.3.1) the AMP
runs take their work per interval from the trace of that repetition's static
run (FLEXMPI_PROFILE), and the goal is that much faster than the static run's
traced time (the profile's intervals summed) instead of a prediction.

Per run it reads from the trace: the goal in seconds (amp.goal_seconds), the
completion time (the program's loop time), their difference (target: within
±2 %, thesis -1.15...+2.44 %), the most processes run at once, and the cost:
PE-hours of every process times its class's $ per PE-hour, summed over the
intervals (each interval lasts its slowest process's wall time).

usage: amp_experiment.py --build build [--app jacobi|cg] [--runs 1] [--out out/amp]
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulated_cluster import (CLASSES, add_unit_time_argument, argparse_copy,  # noqa: E402
                              fix_unit_time, run_app)
from hpmp_experiment import HOSTS  # noqa: E402


# $ per hour of the 8 initial PEs (2 per class of CLASSES): a static run's
# trace has no resource view (its policy asks no resource manager).
STATIC_PRICE = 2 * sum(float(line.split()[2]) for line in CLASSES.splitlines())


def cost_of(records):
    """$ of the run: each interval's PE-hours per class times the class's price."""
    total = 0.0
    for r in records:
        hours = max(r["wall_time"]) / 3600.0
        view = r.get("resources")
        if not view:
            total += STATIC_PRICE * hours
            continue
        price = {c["name"]: c.get("cost", 0.0) for c in view.get("classes", [])}
        total += sum(price.get(name, 0.0) for name in view.get("process_classes", [])) * hours
    return total


def phases_of(records, total):
    """Where the run's time went (thesis Fig. 6.25), in seconds: computation and
    communication of each interval's slowest process, process creation and
    removal, data moved (handover after a change, rebalancing), and the rest
    of the program's loop time (policy, monitoring, waiting)."""
    phases = dict.fromkeys(("computation", "communication", "reconfiguration", "data"), 0.0)
    for r in records:
        slowest = max(range(r["nprocs"]), key=lambda p: r["wall_time"][p])
        phases["computation"] += r["computation_time"][slowest]
        phases["communication"] += r["mpi_time"][slowest]
        for event in r.get("reconfigurations", []):
            if event.get("action") in ("spawn", "remove"):
                phases["reconfiguration"] += event.get("seconds", 0.0)
            phases["data"] += event.get("redistribution_seconds", 0.0)
        phases["data"] += (r.get("redistribution") or {}).get("seconds", 0.0)
    phases["other"] = total - sum(phases.values())
    return phases


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--app", choices=("jacobi", "cg", "epigraph"), default="jacobi")
    parser.add_argument("--out", default="out/amp")
    parser.add_argument("--size", type=int, default=2400, help="rows (Jacobi n, CG --generate)")
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--interval", type=int, default=20)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--profile", action="store_true",
                        help="AMP runs predict the work from the static run's trace (FLEXMPI_PROFILE)")
    parser.add_argument("--goals", default="0.25,0.30,0.35")
    parser.add_argument("--constraints", default="efficiency,cost")
    parser.add_argument("--reference-speed", type=float, default=100.0,
                        help="class X of this speed (GFLOPS) that no node has (hpmp_experiment.py)")
    add_unit_time_argument(parser)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "hosts.txt"), "w") as stream:
        stream.write(HOSTS)
    with open(os.path.join(args.out, "classes.txt"), "w") as stream:
        stream.write(CLASSES + f"X {args.reference_speed}\n")

    print(f"flexmpi-{args.app} size {args.size}, {args.iterations} iterations, sampling interval "
          f"{args.interval}, {args.runs} run(s), emulated Table 6.4 cluster (sleep mode), "
          f"reference speed {args.reference_speed}, {fix_unit_time(args)}")
    # A discarded warm-up: the first run after an idle spell was the slowest
    # of every experiment (static 28 s where the same 8 processes ran 19.5 s
    # under AMP minutes later, CG).
    run_app(argparse_copy(args, iterations=args.iterations // 4), 8,
            {"FLEXMPI_POLICY": "lb"})
    rows = []
    for repetition in range(args.runs):
        trace = os.path.join(args.out, f"static_run{repetition}.jsonl")
        static = run_app(args, 8, {"FLEXMPI_POLICY": "lb", "FLEXMPI_TRACE": trace})
        profile = {"FLEXMPI_PROFILE": trace} if args.profile else {}
        records = [json.loads(line) for line in open(trace)]
        rows.append({"goal": None, "constraint": "static", "time": static["time"],
                     "cost": cost_of(records), "max_procs": 8, "checksum": static["checksum"],
                     "phases": phases_of(records, static["time"])})
        for goal in (float(g) for g in args.goals.split(",")):
            for constraint in args.constraints.split(","):
                trace = os.path.join(args.out, f"amp_{goal}_{constraint}_run{repetition}.jsonl")
                summary = run_app(args, 8, {
                    "FLEXMPI_POLICY": "amp", "FLEXMPI_GOAL_SPEEDUP": str(goal),
                    "FLEXMPI_CONSTRAINT": constraint, "FLEXMPI_MAX_PROCS": "18",
                    "FLEXMPI_TRACE": trace, **profile})
                records = [json.loads(line) for line in open(trace)]
                goal_seconds = next(r["amp"]["goal_seconds"] for r in records if "amp" in r)
                rows.append({"goal": goal, "constraint": constraint, "time": summary["time"],
                             "goal_seconds": goal_seconds, "cost": cost_of(records),
                             "max_procs": max(r["nprocs"] for r in records),
                             "counts": [r["nprocs"] for r in records],
                             "phases": phases_of(records, summary["time"]),
                             "checksum": summary["checksum"]})
                row = rows[-1]
                print(f"run {repetition + 1} goal {goal:.0%} {constraint:>10}: goal "
                      f"{goal_seconds:.2f} s, completed {row['time']:.2f} s "
                      f"({row['time'] / goal_seconds - 1:+.2%}), max {row['max_procs']} "
                      f"processes, cost ${row['cost']:.5f}, processes per interval "
                      f"{row['counts'][:12]}", flush=True)

    print(f"\n{'goal':>5} {'constraint':>10} {'goal s':>8} {'time s':>8} {'difference':>10} "
          f"{'max procs':>9} {'cost $':>9}  (medians of {args.runs} run(s))")
    statics = [r for r in rows if r["goal"] is None]
    print(f"{'-':>5} {'static':>10} {'-':>8} {statistics.median(r['time'] for r in statics):>8.2f} "
          f"{'-':>10} {8:>9} {statistics.median(r['cost'] for r in statics):>9.5f}")
    for goal in (float(g) for g in args.goals.split(",")):
        for constraint in args.constraints.split(","):
            runs = [r for r in rows if r["goal"] == goal and r["constraint"] == constraint]
            difference = statistics.median(r["time"] / r["goal_seconds"] - 1 for r in runs)
            print(f"{goal:>5.0%} {constraint:>10} "
                  f"{statistics.median(r['goal_seconds'] for r in runs):>8.2f} "
                  f"{statistics.median(r['time'] for r in runs):>8.2f} {difference:>+10.2%} "
                  f"{statistics.median(r['max_procs'] for r in runs):>9} "
                  f"{statistics.median(r['cost'] for r in runs):>9.5f}")
    print(f"\nwhere the time went, seconds (Fig. 6.25; medians of {args.runs} run(s))")
    names = ("computation", "communication", "reconfiguration", "data", "other")
    print(f"{'goal':>5} {'constraint':>10} " + " ".join(f"{n:>15}" for n in names))
    for goal in [None] + [float(g) for g in args.goals.split(",")]:
        for constraint in (["static"] if goal is None else args.constraints.split(",")):
            runs = [r for r in rows if r["goal"] == goal and r["constraint"] == constraint]
            label = "-" if goal is None else f"{goal:.0%}"
            print(f"{label:>5} {constraint:>10} " + " ".join(
                f"{statistics.median(r['phases'][n] for r in runs):>15.3f}" for n in names))
    checksums = {r["checksum"] for r in rows}
    print(f"checksums: {'all the same' if len(checksums) == 1 else sorted(checksums)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
