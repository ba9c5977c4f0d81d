#!/usr/bin/env python3
"""Checkpoint and restart benchmarks of flexmpi (bench-checkpoint, bench/checkpoint).

io        per state size (--bytes) and repeat, two jobs of --nprocs ranks: the first writes the
          state with a bare collective HDF5 write and with XMPI_Checkpoint; the second, a fresh
          job as a restart is, reads the bare file back and restarts from the checkpoint
          (XMPI_Resume), checking every element. Which one goes first alternates between
          repeats; a first pair of jobs is not counted. Table: medians (min-max) over the
          repeats, and flexmpi / bare (of the medians, and the min-max of the paired ratios).
periodic  "periodic checkpoints of a 1 GiB state every 60 s cost <= 2 % of the run": a loop of
          --passes memory-bound sweeps over a --periodic-bytes state an iteration, monitored
          and balanced (FLEXMPI_POLICY=none), as many iterations as a short calibration run
          says fill --run-seconds, run without checkpoints and with FLEXMPI_CHECKPOINT_EVERY
          = --period seconds (alternating). The checkpoints add C seconds each, so over a run
          they cost C / period of it: a shorter period in a shorter run (--period 20
          --run-seconds 120) measures C, and the table gives C / 60 s beside the measured
          fraction, assuming C does not depend on the period. C includes what the io table
          leaves out: on this VM a page-cache write after a pause is 3-10 times slower.

Files go to --dir (default: a new directory in /tmp, removed at the end). Nothing drops the page
cache (that needs root): the reads come from memory, as a restart soon after its checkpoint's
do; every file is removed after its read.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
}
FIGURE = re.compile(r"(\w+)=([0-9.]+)")


def run(args, mode_args):
    """One job of bench-checkpoint; returns the figures of its output (name=value)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEXMPI_")}
    env.update(MPI_ENV)
    # Waiting ranks yield only when they outnumber the cores.
    env["OMPI_MCA_mpi_yield_when_idle"] = "1" if args.nprocs > (os.cpu_count() or 1) else "0"
    command = [args.mpiexec, "-n", str(args.nprocs), args.program, "--dir", args.dir, *mode_args]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=7200)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{out.stdout}\n{out.stderr}")
    return {name: float(value) for name, value in FIGURE.findall(out.stdout)}


def size_name(size):
    return f"{size / 2**30:g} GiB" if size >= 2**30 else f"{size / 2**20:g} MiB"


def spread(values, digits=3):
    if None in values:  # a figure a run did not print
        return "-"
    return (f"{statistics.median(values):.{digits}f}"
            f" ({min(values):.{digits}f}-{max(values):.{digits}f})")


def ratio(new, base):
    if None in new:
        return "-"
    paired = [n / b for n, b in zip(new, base)]
    return (f"{statistics.median(new) / statistics.median(base):.2f}"
            f" ({min(paired):.2f}-{max(paired):.2f})")


def io(args):
    print(f"\n### Write and read: {args.nprocs} ranks, {args.repeats} repeats, seconds,"
          " median (min-max)\n")
    print("| state | bare write | flexmpi write | flexmpi / bare | bare read | flexmpi read |"
          " flexmpi / bare |")
    print("|---|---|---|---|---|---|---|")
    for size in args.bytes:
        figures = {"bare_write_s": [], "flexmpi_write_s": [], "bare_read_s": [],
                   "flexmpi_read_s": []}
        # Repeat -1 is not counted: on this VM the first page-cache write after a second
        # without one is 3-10 times slower, and the state's memory may be new to the process.
        for repeat in range(-1, args.repeats):
            state = ["--bytes", str(size), "--first", "bare" if repeat % 2 == 0 else "flexmpi"]
            written = run(args, ["--mode", "write", *state])
            restarted = run(args, ["--mode", "restart-read", *state])
            for name, values in figures.items():
                values.extend([{**written, **restarted}.get(name)] if repeat >= 0 else [])
        bare_write, flexmpi_write, bare_read, flexmpi_read = figures.values()
        print(f"| {size_name(size)} | {spread(bare_write)} | {spread(flexmpi_write)} |"
              f" {ratio(flexmpi_write, bare_write)} | {spread(bare_read)} |"
              f" {spread(flexmpi_read)} | {ratio(flexmpi_read, bare_read)} |")


def periodic(args):
    common = ["--mode", "periodic", "--bytes", str(args.periodic_bytes),
              "--passes", str(args.passes)]
    calibration = run(args, common + ["--iterations", "20"])
    iterations = max(1, round(args.run_seconds / calibration["seconds_per_iteration"]))
    times = {"without": [], "with": []}
    checkpoints = []
    for repeat in range(args.periodic_repeats):
        for which in ("without", "with") if repeat % 2 == 0 else ("with", "without"):
            every = ["--checkpoint-every", f"{args.period}s"] if which == "with" else []
            figures = run(args, common + ["--iterations", str(iterations)] + every)
            times[which].append(figures["time"])
            if which == "with":
                checkpoints.append(int(figures["checkpoints"]))
    added = [w - wo for w, wo in zip(times["with"], times["without"])]
    fraction = [a / wo for a, wo in zip(added, times["without"])]
    per_checkpoint = [a / n for a, n in zip(added, checkpoints) if n > 0]
    at_60 = f"{100 * statistics.median(per_checkpoint) / 60:.2f}" if per_checkpoint else "-"
    cost = spread(per_checkpoint) if per_checkpoint else "- (no checkpoint: run longer)"
    print(f"\n### Periodic checkpoints: {args.nprocs} ranks, {size_name(args.periodic_bytes)},"
          f" every {args.period} s, {args.periodic_repeats} pair(s), seconds, median (min-max)\n")
    print("| iterations | without checkpoints | with | checkpoints | added per checkpoint |"
          " added / run without, % | at a 60 s period, % (target <= 2) |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {iterations} | {spread(times['without'])} | {spread(times['with'])} |"
          f" {' '.join(map(str, checkpoints))} | {cost} |"
          f" {100 * statistics.median(fraction):.2f} | {at_60} |")
    if args.period != 60:
        print(f"\n(scaled: a {args.period} s period in a {args.run_seconds:g} s run; at 60 s the"
              " fraction is the cost of one checkpoint / 60 s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--program", help="default: BUILD/bench/checkpoint/bench-checkpoint")
    parser.add_argument("--mpiexec", default=shutil.which("mpiexec.openmpi") and "mpiexec.openmpi"
                        or "mpiexec")
    parser.add_argument("--nprocs", type=int, default=2)
    parser.add_argument("--dir", help="where the files go (default: a new directory in /tmp)")
    parser.add_argument("--bytes", default="268435456,1073741824",
                        help="io: comma-separated state sizes in bytes (default 256 MiB, 1 GiB)")
    parser.add_argument("--repeats", type=int, default=5, help="io: repeats (default 5)")
    parser.add_argument("--periodic-bytes", type=int, default=2**30)
    parser.add_argument("--passes", type=int, default=2,
                        help="periodic: sweeps over the state an iteration (default 2: 0.09 s at"
                        " 1 GiB on 2 ranks here)")
    parser.add_argument("--period", type=int, default=60,
                        help="periodic: seconds between checkpoints (default 60)")
    parser.add_argument("--run-seconds", type=float, default=600,
                        help="periodic: the run's length without checkpoints (default 600)")
    parser.add_argument("--periodic-repeats", type=int, default=1,
                        help="periodic: pairs of runs (default 1)")
    parts = ["io", "periodic"]
    # No `choices`: Python 3.11.7 checks the empty list of an omitted nargs="*" against them.
    parser.add_argument("parts", nargs="*", help="io, periodic or both (default both)")
    args = parser.parse_args()
    if set(args.parts) - set(parts):
        parser.error(f"unknown part(s) {', '.join(sorted(set(args.parts) - set(parts)))};"
                     " expected io, periodic or both")
    try:
        args.bytes = [int(size) for size in args.bytes.split(",")]
    except ValueError:
        parser.error(f"--bytes: expected comma-separated whole numbers, got '{args.bytes}'")
    for name in ("nprocs", "repeats", "periodic_bytes", "passes", "period", "run_seconds",
                 "periodic_repeats"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    args.program = args.program or os.path.join(args.build, "bench/checkpoint/bench-checkpoint")
    if not os.access(args.program, os.X_OK):
        parser.error(f"{args.program}: not built (cmake --build BUILD --target bench-checkpoint)")
    created = args.dir is None
    args.dir = tempfile.mkdtemp(prefix="bench-checkpoint-") if created else args.dir
    os.makedirs(args.dir, exist_ok=True)
    file_system = subprocess.run(["findmnt", "-n", "-o", "FSTYPE,SOURCE", "--target", args.dir],
                                 capture_output=True, text=True).stdout.split()
    print(f"machine: {os.cpu_count()} cores;"
          f" {subprocess.run(['uname', '-srm'], capture_output=True, text=True).stdout.strip()};"
          f" files in {args.dir} ({' on '.join(file_system)}), in the page cache (not dropped)")
    try:
        for part in args.parts or parts:
            globals()[part](args)
    finally:
        if created:
            shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
