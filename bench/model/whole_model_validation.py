#!/usr/bin/env python3
"""Whole-model validation of thesis 6.3 (Fig. 6.13, Table 6.8) on this machine.

flexmpi-jacobi runs with the smp policy and a predefined schedule (thesis
5.4.1): from 2 processes it spawns 1, 2 and 4 and removes them again, so
that every kind of interval occurs: steady ones, the first after a spawn
(spawning + handing data to the new processes) and the first after a removal
(removing + taking the data back). Rank 0 predicts every interval before it
runs (IntervalForecaster, eq. 5.2, with the machine profile given) and the
trace sets the prediction beside the measurement. This script reads the
traces of --runs runs and prints, per phase, the median absolute relative
error and the relative standard deviation of the signed errors, pooled over
the runs and per run, for steady intervals (one process per core), steady
oversubscribed ones and the first interval after a spawn or a removal.

usage: whole_model_validation.py --build build --machine-profile machine.json
                                 [--runs 5] [--size 2000] [--interval 50] [--out DIR]
                                 [--emulate SPEED] [--dedicated]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "malleability"))
# Open MPI for spawning here (the transport that makes it fast; ranks yield: 6 on 2 cores at most).
from smp_experiment import MPI_ENV  # noqa: E402

PHASES = ("computation", "communication", "reconfiguration", "redistribution")
CORES = os.cpu_count()
# From 2 processes: spawn 1, 2, 4, each removed again 4 intervals later (Table 6.8's set;
# 3-6 processes on 2 cores). --dedicated: from 1 process, spawn 1 and remove it 3 times,
# so that every process has a core of its own, as the thesis's cluster had.
CHANGES = [("spawn", 1), ("remove", 1), ("spawn", 2), ("remove", 2), ("spawn", 4), ("remove", 4)]
DEDICATED_CHANGES = [("spawn", 1), ("remove", 1)] * 3


def schedule(interval, changes):
    """A change every 4 sampling intervals, the first after 2 steady intervals."""
    lines = [f"{interval * (2 + 4 * k)} {action} {count}"
             for k, (action, count) in enumerate(changes)]
    return "\n".join(lines) + "\n", interval * (2 + 4 * len(changes) + 2)


def run(args, index, schedule_file, iterations):
    trace = os.path.join(args.out, f"trace_{index}.jsonl")
    if os.path.exists(trace):
        os.remove(trace)
    env = dict(os.environ, **MPI_ENV,
               FLEXMPI_POLICY="smp", FLEXMPI_SCHEDULE=schedule_file,
               FLEXMPI_SAMPLING_INTERVAL=str(args.interval), FLEXMPI_TRACE=trace,
               FLEXMPI_MACHINE_PROFILE=args.machine_profile)
    if args.emulate:
        # Every rank (the 6 at the widest) a slower PE that sleeps out its
        # extra time: oversubscribed ranks then rarely compete for a core.
        env.update(FLEXMPI_EMULATE_SPEED=",".join([str(args.emulate)] * 6),
                   FLEXMPI_EMULATE_MODE="sleep")
    start = "1" if args.dedicated else "2"
    command = ["mpiexec", "-n", start, os.path.join(args.build, "apps/jacobi/flexmpi-jacobi"),
               "--size", str(args.size), "--iterations", str(iterations), "--quiet"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        sys.exit(f"run {index} failed:\n{result.stdout}\n{result.stderr}")
    with open(trace) as stream:
        return [json.loads(line) for line in stream if line.strip()]


def errors(records):
    """{(kind, phase): [signed relative errors]} of one run's predicted intervals."""
    found = {}
    for record in records:
        prediction = record.get("prediction")
        if not prediction:
            continue
        actions = {event["action"] for event in record.get("reconfigurations", [])}
        kind = ("spawn" if "spawn" in actions else "remove" if "remove" in actions
                else "steady" if record["nprocs"] <= CORES else "over")
        for phase in PHASES:
            error = prediction["relative_error"].get(phase)
            if error is not None:
                found.setdefault((kind, phase), []).append(error)
    return found


def noise(records):
    """{phase: [|change|]}: how much a steady interval's measurement differs from the one
    before on the same processes -- the floor under any prediction from the past."""
    found, previous = {}, None
    for record in records:
        prediction = record.get("prediction")
        steady = prediction and not record.get("reconfigurations") and \
            prediction["measured"]["redistribution"] == 0
        if steady and previous and previous["nprocs"] == record["nprocs"]:
            for phase in ("computation", "communication"):
                before = previous["prediction"]["measured"][phase]
                if before > 0:
                    found.setdefault(phase, []).append(
                        abs(prediction["measured"][phase] - before) / before)
        previous = record if steady else None
    return found


def summary(values):
    """Median |error| and the relative standard deviation of the signed errors, in %."""
    median = 100 * statistics.median(abs(v) for v in values)
    spread = 100 * statistics.pstdev(values) if len(values) > 1 else 0.0
    return f"{median:6.1f} % ({spread:5.1f} %)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--machine-profile", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--interval", type=int, default=50)
    parser.add_argument("--out", default="/tmp/whole-model")
    parser.add_argument("--dedicated", action="store_true",
                        help="1 <-> 2 processes: never more processes than cores")
    parser.add_argument("--emulate", type=float, default=0.0,
                        help="relative speed of every rank, emulated by sleeping (0: off)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    text, iterations = schedule(args.interval,
                                DEDICATED_CHANGES if args.dedicated else CHANGES)
    schedule_file = os.path.join(args.out, "schedule.txt")
    with open(schedule_file, "w") as stream:
        stream.write(text)
    pooled, per_run, changes = {}, [], {}
    for index in range(args.runs):
        records = run(args, index, schedule_file, iterations)
        for phase, values in noise(records).items():
            changes.setdefault(phase, []).extend(values)
        found = errors(records)
        per_run.append(found)
        for key, values in found.items():
            pooled.setdefault(key, []).extend(values)
    print(f"Jacobi n={args.size}, {iterations} iterations, sampling interval {args.interval}, "
          f"{args.runs} runs, profile {args.machine_profile}, emulated speed "
          f"{args.emulate or 'off'}")
    print("median |relative error| (standard deviation of the signed error), pooled; "
          "then each run's median")
    print(f"steady: intervals without a change on <= {CORES} processes (one per core); over: "
          "without a change, more processes than cores; spawn/remove: the first interval "
          "after one")
    for kind in ("steady", "over", "spawn", "remove"):
        for phase in PHASES:
            values = pooled.get((kind, phase))
            if not values:
                continue
            runs = ", ".join(f"{100 * statistics.median(abs(v) for v in r[(kind, phase)]):.0f}"
                             for r in per_run if (kind, phase) in r)
            print(f"  {kind:7s} {phase:16s} n={len(values):3d}  {summary(values)}  runs: {runs}")
    print("noise: median |change| of a steady interval's measurement from the one before "
          "(same processes)")
    for phase, values in changes.items():
        print(f"  {phase:16s} n={len(values):3d}  {100 * statistics.median(values):6.1f} %")


if __name__ == "__main__":
    main()
