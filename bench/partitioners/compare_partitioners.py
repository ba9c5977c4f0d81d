#!/usr/bin/env python3
"""Static vs rcp, ull, fpm-akima and fpm-geometric on CG and Jacobi with an
emulated memory cliff on 2 ranks (docs/results.md, "Partitioners").

Rank 1 runs its first C rows at full speed and the rows beyond 5 times
slower (FLEXMPI_EMULATE_SPEED=1.0,1.0@C:0.2), C = 40 % of the rows: the
even split is 44 % unbalanced and the balanced partition gives rank 1
13/30 of the rows. A constant-speed model (rcp, ull) measures rank 1 fast
below the cliff and slow beyond it and jumps across it; the functional
models (fpm-*) learn the cliff (FPM paper sec. 4).

For each application and mode, `--repeat` runs; per run the JSON-lines
trace (FLEXMPI_TRACE) gives the intervals to converge (the interval after
the last rebalance; "no" if it still rebalanced in the last 3 intervals),
the final imbalance (median of the last 5 intervals' (max-min)/max
computation time) and the final partition. Medians over the runs.

  bench/partitioners/compare_partitioners.py --build-dir build --repeat 3
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

MODES = ["static", "rcp", "ull", "fpm-akima", "fpm-geometric"]


def run_once(app, mode, args, workdir):
    trace = os.path.join(workdir, f"{app['name']}-{mode}.jsonl")
    if os.path.exists(trace):
        os.remove(trace)
    env = dict(os.environ)
    env.update({
        "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_mpi_yield_when_idle": "1",
        "FLEXMPI_EMULATE_SPEED": f"1.0,1.0@{app['cliff']}:0.2",
        "FLEXMPI_LOG_LEVEL": "warn",
    })
    env.update(app.get("env", {}))
    command = [args.mpiexec, "-n", "2", app["program"], *app["args"], "--trace", trace, "--quiet"]
    if mode == "static":
        command.append("--static")
    else:
        env["FLEXMPI_PARTITIONER"] = mode
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}")
    seconds = float(re.search(r"time=([0-9.]+)", result.stdout).group(1))
    records = [json.loads(line) for line in open(trace)]
    moves = [r["interval"] for r in records if r.get("decision") == "rebalance"]
    last = records[-1]["interval"]
    if not moves:
        converged = 0
    elif moves[-1] >= last - 2:
        converged = None  # still moving at the end
    else:
        converged = moves[-1] + 1
    imbalance = statistics.median(r["imbalance"] for r in records[-5:])
    return {"seconds": seconds, "converged": converged, "imbalance": imbalance,
            "partition": records[-1].get("partition"), "rebalances": len(moves), "intervals": last + 1}


def summarize(runs):
    converged = [r["converged"] for r in runs]
    done = [c for c in converged if c is not None]
    if len(done) * 2 > len(converged):
        text = str(int(statistics.median(done)))
    else:
        text = "no"
    if len(done) < len(converged):
        text += f" ({len(converged) - len(done)} of {len(converged)} runs still rebalancing at the end)"
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "converged": text,
        "imbalance": statistics.median(r["imbalance"] for r in runs),
        "rebalances": statistics.median(r["rebalances"] for r in runs),
        "partition": runs[len(runs) // 2]["partition"],
        "intervals": runs[0]["intervals"],
    }


def ull_jacobi(args, workdir):
    """The ULL paper's example on this machine: 3 ranks at 1/4, 1/2 and full
    speed, 1500 rows, 100 us threshold: ULL_MPI_calibrate against --static
    (same calls, a threshold nothing exceeds)."""
    program = os.path.join(args.build_dir, "apps/ull_jacobi/flexmpi-ull-jacobi")
    env = dict(os.environ)
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_mpi_yield_when_idle": "1",
                "FLEXMPI_EMULATE_SPEED": "0.25,0.5,1.0", "FLEXMPI_LOG_LEVEL": "warn"})
    print(f"\null-jacobi: 3 ranks (on 2 cores), FLEXMPI_EMULATE_SPEED=0.25,0.5,1.0, n=1500, "
          f"{args.ull_iterations} iterations, {args.repeat} runs, medians")
    print("| mode | time (s) | vs static | iterations that moved rows (rank 0) | final counts |")
    print("|---|---:|---:|---:|---|")
    modes = [("static", ["--static"]), ("ULL_MPI_calibrate, 100 us", ["--threshold", "100"]),
             ("ULL_MPI_calibrate, 1000 us", ["--threshold", "1000"])]
    runs = {mode: [] for mode, _ in modes}
    for _ in range(args.repeat):
        for mode, extra in modes:
            out = subprocess.run([args.mpiexec, "-n", "3", program, "--size", "1500", "--iterations",
                                  str(args.ull_iterations), *extra], env=env, capture_output=True, text=True,
                                 timeout=600)
            if out.returncode != 0:
                sys.exit(out.stdout + out.stderr)
            m = re.search(r"time_s=([0-9.]+).*rebalanced_iterations=([0-9]+) counts=(\S+)", out.stdout)
            runs[mode].append((float(m.group(1)), int(m.group(2)), m.group(3)))
    static = None
    for mode, _ in modes:
        ordered = sorted(runs[mode])
        seconds, moved, counts = ordered[len(ordered) // 2]
        static = static or seconds
        print(f"| {mode} | {seconds:.2f} | {seconds / static:.2f} | {moved} | {counts} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--matrix", default=os.path.join(os.path.dirname(__file__), "../../../shared/matrices/bcsstk16.mtx"))
    parser.add_argument("--mpiexec", default="mpiexec.openmpi")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--apps", default="jacobi,cg,ull-jacobi")
    parser.add_argument("--jacobi-size", type=int, default=2000)
    parser.add_argument("--jacobi-iterations", type=int, default=1000)
    parser.add_argument("--cg-iterations", type=int, default=10000)
    parser.add_argument("--ull-iterations", type=int, default=300)
    args = parser.parse_args()

    n = args.jacobi_size
    apps = {
        "jacobi": {"name": "jacobi", "program": os.path.join(args.build_dir, "apps/jacobi/flexmpi-jacobi"),
                   "args": ["--size", str(n), "--iterations", str(args.jacobi_iterations),
                            "--sampling-interval", "25"],
                   "cliff": int(0.4 * n), "rows": n},
        # The count workload model, so that the cliff and the partition are both
        # in rows (the emulator reads the runtime's work units).
        "cg": {"name": "cg", "program": os.path.join(args.build_dir, "apps/cg/flexmpi-cg"),
               "args": ["--matrix", args.matrix, "--iterations", str(args.cg_iterations),
                        "--sampling-interval", "250"],
               "env": {"FLEXMPI_LB_MODEL": "count"}, "cliff": int(0.4 * 4884), "rows": 4884},
    }
    print(f"load average at the start: {open('/proc/loadavg').read().split()[:3]}")
    with tempfile.TemporaryDirectory() as workdir:
        for name in args.apps.split(","):
            if name == "ull-jacobi":
                ull_jacobi(args, workdir)
                continue
            app = apps[name]
            balanced = round(app["rows"] * 13 / 30)
            print(f"\n{name}: 2 ranks, FLEXMPI_EMULATE_SPEED=1.0,1.0@{app['cliff']}:0.2, "
                  f"balanced partition about [{app['rows'] - balanced}, {balanced}], {args.repeat} runs, medians")
            print("| mode | time (s) | vs static | rebalances | converged at interval | final imbalance | final partition |")
            print("|---|---:|---:|---:|---|---:|---|")
            # Modes interleaved run by run, so that a change of the machine's
            # load (other jobs on the shared cores) hits every mode alike.
            runs = {mode: [] for mode in MODES}
            for _ in range(args.repeat):
                for mode in MODES:
                    runs[mode].append(run_once(app, mode, args, workdir))
            static = None
            for mode in MODES:
                s = summarize(runs[mode])
                static = static or s["seconds"]
                even = [app["rows"] - app["rows"] // 2, app["rows"] // 2]
                print(f"| {mode} | {s['seconds']:.2f} | {s['seconds'] / static:.2f} | {s['rebalances']:.0f} | "
                      f"{'-' if mode == 'static' else s['converged']} (of {s['intervals']}) | "
                      f"{100 * s['imbalance']:.0f} % | {s['partition'] or even} |", flush=True)


if __name__ == "__main__":
    main()
    print(f"\nload average at the end: {open('/proc/loadavg').read().split()[:3]}")
