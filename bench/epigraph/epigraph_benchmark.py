#!/usr/bin/env python3
"""flexmpi-epigraph: static against the count, nnz and weight workload models
(thesis 6.2, Figs. 6.2-6.5), homogeneous and with emulated
heterogeneous speeds (FLEXMPI_EMULATE_SPEED), on 2 and 4 processes.

Every configuration is run --repeats times, the repetitions interleaved (one
of each configuration, then again) so that a slow phase of a shared machine
falls on all of them; the tables give the median wall time of the simulation
loop, its ratio to static, the resource consumption (time x processes, Fig.
6.3) and the median number of moves. Every run must print the same curve
checksum: balancing must not change the epidemic. Also prints the work per
simulated day of the epidemic (the shape of Fig. 6.1) and the graph statistics.
Static runs use --lb-model count (no per-row weights are gathered).

usage: epigraph_benchmark.py --program build/apps/epigraph/flexmpi-epigraph [--repeats 3]
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys

MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
}


def yield_when_idle(nprocs):
    """Waiting ranks yield only when there are more ranks than cores:
    a yielding rank enters the kernel at every poll, which on these VMs flushes
    its TLB and slows its next computation (docs/design/balancing.md,
    point 6)."""
    return {"OMPI_MCA_mpi_yield_when_idle": "1" if nprocs > (os.cpu_count() or 1) else "0"}


SUMMARY = re.compile(r"moves=(\d+).*curve_checksum=([0-9a-f]+).*\btime=([0-9.]+) s")
MODES = ["static", "count", "nnz", "weight"]
SPEEDS = {2: "1.0,0.5", 4: "1.0,1.0,0.5,0.5"}


def run(args, nprocs, mode, heterogeneous, output=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEXMPI_")}
    env.update(MPI_ENV)
    env.update(yield_when_idle(nprocs))
    env["FLEXMPI_LOG_LEVEL"] = "warn"
    if heterogeneous:
        env["FLEXMPI_EMULATE_SPEED"] = SPEEDS[nprocs]
    command = [args.mpiexec, "-n", str(nprocs), args.program, "--class", args.problem_class,
               "--days", str(args.days), "--step-minutes", str(args.step_minutes), "--quiet",
               "--lb-model", "count" if mode == "static" else mode]
    if mode == "static":
        command.append("--static")
    if output:
        command += ["--output", output]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    match = SUMMARY.search(out.stdout)
    if out.returncode != 0 or not match:
        sys.exit(f"failed: {' '.join(command)}\n{out.stdout}\n{out.stderr}")
    return int(match.group(1)), match.group(2), float(match.group(3))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", required=True)
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--class", dest="problem_class", default="medium")
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--step-minutes", type=int, default=15)
    parser.add_argument("--nprocs", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--out", default="epigraph-bench")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    stats = subprocess.run([args.mpiexec, "-n", "1", args.program, "--class", args.problem_class,
                            "--graph-stats"], env={**os.environ, **MPI_ENV},
                           capture_output=True, text=True, check=True).stdout.strip()
    print(f"graph: {stats}\n")

    configurations = [(n, h, m) for n in args.nprocs for h in (False, True) for m in MODES]
    results = {c: [] for c in configurations}
    checksums = set()
    curve = os.path.join(args.out, "curve.csv")
    for repeat in range(args.repeats):
        for configuration in configurations:
            nprocs, heterogeneous, mode = configuration
            moves, checksum, seconds = run(args, nprocs, mode, heterogeneous,
                                           curve if repeat == 0 else None)
            results[configuration].append((seconds, moves))
            checksums.add(checksum)
            print(f"run {repeat + 1}: -n {nprocs} {'heterogeneous' if heterogeneous else 'homogeneous'}"
                  f" {mode}: {seconds:.2f} s, {moves} moves", file=sys.stderr, flush=True)
    if len(checksums) != 1:
        sys.exit(f"the curve differs between runs: checksums {sorted(checksums)}")

    print(f"curve checksum of all {args.repeats * len(configurations)} runs: {checksums.pop()}\n")
    print("| processes | speeds | model | median time (s) | runs (s) | time / static | "
          "time x PEs (s) | moves (median) |")
    print("|---|---|---|---|---|---|---|---|")
    for nprocs in args.nprocs:
        for heterogeneous in (False, True):
            static = statistics.median(s for s, _ in results[(nprocs, heterogeneous, "static")])
            for mode in MODES:
                runs = results[(nprocs, heterogeneous, mode)]
                median = statistics.median(s for s, _ in runs)
                moves = statistics.median(m for _, m in runs)
                print(f"| {nprocs} | {SPEEDS[nprocs] if heterogeneous else 'equal'} | {mode} | "
                      f"{median:.2f} | {', '.join(f'{s:.2f}' for s, _ in runs)} | "
                      f"{median / static:.3f} | {median * nprocs:.1f} | {moves:g} |")

    print("\nwork per simulated day (individual updates + degrees of the infectious), "
          "every 4th day:\n")
    print("| day | infectious | work (units) | work / day 1 |")
    print("|---|---|---|---|")
    with open(curve) as f:
        rows = list(csv.DictReader(f))
    first = int(rows[0]["work"])
    for row in rows[::4] + ([rows[-1]] if (len(rows) - 1) % 4 else []):
        infectious = int(row["infectious_symptomatic"]) + int(row["infectious_asymptomatic"])
        print(f"| {row['day']} | {infectious} | {int(row['work'])} | {int(row['work']) / first:.2f} |")


if __name__ == "__main__":
    main()
