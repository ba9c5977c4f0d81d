#!/usr/bin/env python3
"""Load-balancing benchmarks of flexmpi (issue: dynamic load balancing).

dedicated     2 ranks with emulated speeds (SPEC 6), Jacobi and CG: static,
              balanced and ideal time side by side, repeated and interleaved;
              ideal = total work / sum of the speeds measured in the static run.
homogeneous   no emulation: balanced against static (overhead), redistributions.
nondedicated  real outside load (flexmpi-load) pinned to rank 1's core, bursts
              then a long-term load; k = 1, 3, 5 against static (Euro-Par
              2013 Table 5, thesis Fig. 6.7): total time and redistributions.

Prints Markdown tables; traces are kept in --out for flexmpi-plot.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_mpi_yield_when_idle": "1",
}
TIME_PATTERN = re.compile(r"\btime=([0-9.]+)")


def read_trace(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def run(args, app_args, env_extra, trace, bind=False):
    """Runs one 2-rank job; returns (seconds, trace records)."""
    env = dict(os.environ, **MPI_ENV, **env_extra)
    for key in [k for k in env if k.startswith("FLEXMPI_") and k not in env_extra]:
        del env[key]
    env["FLEXMPI_TRACE"] = trace
    command = [args.mpiexec, "-n", "2"]
    if bind:
        command += ["--bind-to", "core", "--map-by", "core"]
    command += app_args
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{out.stdout}\n{out.stderr}")
    match = TIME_PATTERN.search(out.stdout)
    if not match:
        sys.exit(f"no 'time=... s' in the output of {' '.join(command)}:\n{out.stdout}")
    return float(match.group(1)), read_trace(trace)


def ideal_time(records):
    """Total work divided by the sum of the measured speeds (work units/s)."""
    nprocs = len(records[0]["metric_count"])
    work = [sum(r["metric_count"][p] for r in records) for p in range(nprocs)]
    computation = [sum(r["computation_time"][p] for r in records) for p in range(nprocs)]
    speeds = [w / t for w, t in zip(work, computation)]
    return sum(work) / sum(speeds)


def rebalances(records):
    return [r["interval"] for r in records if r.get("decision") == "rebalance"]


def apps(args):
    return {
        "jacobi": [os.path.join(args.build, "apps/jacobi/flexmpi-jacobi"), "--size",
                   str(args.jacobi_size), "--iterations", str(args.jacobi_iterations),
                   "--sampling-interval", "10", "--quiet"],
        "cg": [os.path.join(args.build, "apps/cg/flexmpi-cg"), "--matrix", args.matrix,
               "--iterations", str(args.cg_iterations), "--sampling-interval", "20", "--quiet"],
    }


def dedicated(args):
    print("\n### Dedicated heterogeneous (emulated speeds), medians of", args.repeats, "runs\n")
    print("| app | speeds | static s | balanced s | ideal s | static/balanced | balanced/ideal |"
          " rebalanced at interval | final partition |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, command in apps(args).items():
        for speeds in ["1.0,0.5", "1.0,0.25"]:
            times = {"static": [], "balanced": []}
            ideals, intervals, partition = [], [], None
            for r in range(args.repeats):
                for mode in ("static", "balanced"):
                    extra = ["--static"] if mode == "static" else []
                    trace = os.path.join(args.out, f"{name}_{speeds}_{mode}_{r}.jsonl")
                    seconds, records = run(args, command + extra,
                                           {"FLEXMPI_EMULATE_SPEED": speeds}, trace)
                    times[mode].append(seconds)
                    if mode == "static":
                        ideals.append(ideal_time(records))
                    else:
                        intervals.append(rebalances(records))
                        partition = records[-1].get("partition")
            s, b, i = (statistics.median(times["static"]), statistics.median(times["balanced"]),
                       statistics.median(ideals))
            print(f"| {name} | {speeds} | {s:.3f} | {b:.3f} | {i:.3f} | {s / b:.2f} | {b / i:.3f} |"
                  f" {intervals[-1]} | {partition} |")


def homogeneous(args):
    print("\n### Homogeneous (no emulation), medians of", args.repeats, "runs\n")
    print("| app | static s | balanced s | balanced/static | redistributions (per run) |")
    print("|---|---|---|---|---|")
    for name, command in apps(args).items():
        times = {"static": [], "balanced": []}
        moves = []
        for r in range(args.repeats):
            for mode in ("static", "balanced"):
                extra = ["--static"] if mode == "static" else []
                trace = os.path.join(args.out, f"{name}_homogeneous_{mode}_{r}.jsonl")
                seconds, records = run(args, command + extra, {}, trace)
                times[mode].append(seconds)
                if mode == "balanced":
                    moves.append(len(rebalances(records)))
        s, b = statistics.median(times["static"]), statistics.median(times["balanced"])
        print(f"| {name} | {s:.3f} | {b:.3f} | {b / s:.3f} | {moves} |")


def nondedicated(args):
    load = os.path.join(args.build, "tools/flexmpi-load/flexmpi-load")
    # Three bursts, then a long-term load until the end of the run.
    schedule = "off:1,on:0.4,off:1,on:0.4,off:1,on:0.4,off:1,on:300"
    command = apps(args)["jacobi"]
    command[command.index("--iterations") + 1] = str(args.nondedicated_iterations)
    print(f"\n### Non-dedicated: flexmpi-load on rank 1's core, schedule {schedule},"
          f" medians of {args.repeats} runs\n")
    print("| run | time s | vs static | redistributions (interval indices, last run) |")
    print("|---|---|---|---|")
    results = {}
    for r in range(args.repeats):
        for label, extra_env, extra_args in [("static", {}, ["--static"]),
                                             ("k=1", {"FLEXMPI_K": "1"}, []),
                                             ("k=3", {"FLEXMPI_K": "3"}, []),
                                             ("k=5", {"FLEXMPI_K": "5"}, [])]:
            loader = subprocess.Popen([load, "--cores", "1", "--schedule", schedule],
                                      stdout=subprocess.DEVNULL)
            try:
                trace = os.path.join(args.out, f"nondedicated_{label}_{r}.jsonl")
                seconds, records = run(args, command + extra_args, extra_env, trace, bind=True)
            finally:
                loader.terminate()
                loader.wait()
            results.setdefault(label, []).append((seconds, rebalances(records)))
            time.sleep(0.5)
    static = statistics.median(s for s, _ in results["static"])
    for label, runs in results.items():
        t = statistics.median(s for s, _ in runs)
        print(f"| {label} | {t:.3f} | {t / static:.2f} | {len(runs[-1][1])} {runs[-1][1]} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", default="out/bench")
    parser.add_argument("--mpiexec", default="mpiexec.openmpi")
    parser.add_argument("--matrix", default=os.path.join(os.path.dirname(__file__), "../../shared/matrices/bcsstk16.mtx"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jacobi-size", type=int, default=3000)
    parser.add_argument("--jacobi-iterations", type=int, default=300)
    parser.add_argument("--cg-iterations", type=int, default=3000)
    parser.add_argument("--nondedicated-iterations", type=int, default=900)
    parser.add_argument("parts", nargs="*", default=["dedicated", "homogeneous", "nondedicated"],
                        choices=["dedicated", "homogeneous", "nondedicated"])
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores; {subprocess.run(['uname', '-srm'], capture_output=True, text=True).stdout.strip()}")
    for part in args.parts:
        globals()[part](args)


if __name__ == "__main__":
    main()
