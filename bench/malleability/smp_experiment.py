#!/usr/bin/env python3
"""The SMP experiment of thesis 6.4 (Fig. 6.14) on an emulated cluster.

flexmpi-jacobi starts on 8 processes, 2 on each of the 4 node classes of
thesis Table 6.4 (C1 1.90, C7 2.25, C6 2.90, C8 4.62 GFLOPS per core),
emulated on this machine (FLEXMPI_EMULATE_CLUSTER=1, FLEXMPI_EMULATE_MODE
=sleep: every process runs here, at its node class's relative speed). A
resource-manager scenario (FLEXMPI_RESOURCES=scenario:FILE) makes PEs
appear one by one (8 -> 12), then 8 at once, then reclaims some; the smp
policy (FLEXMPI_MAX_PROCS=18) must follow min(available PEs, 18) within one
sampling interval of each event, and the solution must be the static run's
(checksum of x, bit for bit).

Prints, per sampling interval: the PEs the resource manager grants, the
process count the policy should run, the count it runs, and the time per
iteration; then the lag of every event, the checksums and the wall times of
the static 8-process run and of the malleable one. Writes the trace and a
plot (flexmpi-plot) next to --out.

usage: smp_experiment.py --build build [--out out/smp] [--size 2400] [--iterations 240]
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulated_cluster import CLASSES, run_app  # noqa: E402


MAX_PROCS = 18
# The 8 processes mpiexec starts fill these nodes in order: 2 per class.
HOSTS = "c1a:C1:2\nc7a:C7:2\nc6a:C6:2\nc8a:C8:2\n"


def scenario(iterations):
    """Events at fractions of the run: 4 PEs one by one, 8 at once, then reclaims."""
    at = lambda fraction: int(iterations * fraction)
    return "\n".join([
        f"{at(0.10)} available c1b:C1:1",
        f"{at(0.17)} available c7b:C7:1",
        f"{at(0.24)} available c6b:C6:1",
        f"{at(0.31)} available c8b:C8:1",
        f"{at(0.45)} available c1c:C1:4 c7c:C7:4",
        f"{at(0.65)} reclaim c1c:C1:4",
        f"{at(0.80)} reclaim c7c:C7:4 c8b:C8:1",
    ]) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", default="out/smp")
    parser.add_argument("--size", type=int, default=2400)
    parser.add_argument("--iterations", type=int, default=240)
    parser.add_argument("--interval", type=int, default=10)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, text in (("hosts.txt", HOSTS), ("classes.txt", CLASSES),
                       ("scenario.txt", scenario(args.iterations))):
        with open(os.path.join(args.out, name), "w") as stream:
            stream.write(text)

    trace = os.path.join(args.out, "smp_trace.jsonl")
    if os.path.exists(trace):
        os.remove(trace)
    static = run_app(args, 8, {"FLEXMPI_POLICY": "none"})
    malleable = run_app(args, 8, {
        "FLEXMPI_POLICY": "smp",
        "FLEXMPI_RESOURCES": "scenario:" + os.path.join(args.out, "scenario.txt"),
        "FLEXMPI_MAX_PROCS": str(MAX_PROCS),
        "FLEXMPI_TRACE": trace,
    })

    records = [json.loads(line) for line in open(trace)]
    print(f"flexmpi-jacobi n={args.size}, {args.iterations} iterations, sampling interval "
          f"{args.interval}, emulated Table 6.4 cluster (sleep mode), FLEXMPI_MAX_PROCS={MAX_PROCS}")
    print(f"{'interval':>8} {'iteration':>9} {'granted PEs':>11} {'target':>6} {'processes':>9} "
          f"{'ms/iteration':>12} {'late it.':>8}")
    lags, pending = [], None
    for r in records:
        granted = sum(c["granted_pes"] for c in r.get("resources", {}).get("classes", []))
        target = min(granted, MAX_PROCS)
        per_iteration = 1e3 * max(r["computation_time"][p] + r["mpi_time"][p]
                                  for p in range(r["nprocs"])) / r["iterations"]
        late = sum(r.get("emulation_late_iterations", []))
        print(f"{r['interval']:>8} {r['first_iteration']:>9} {granted:>11} {target:>6} "
              f"{r['nprocs']:>9} {per_iteration:>12.2f} {late:>8}")
        # An event is met when a later interval runs the target count.
        if pending is not None and r["nprocs"] == pending[1]:
            lags.append(r["interval"] - pending[0] - 1)
            pending = None
        if r["nprocs"] != target and (pending is None or pending[1] != target):
            pending = (r["interval"], target)
    print(f"events followed: {len(lags)}, intervals of lag after the interval that saw them: "
          f"{lags}; unmet at the end: {pending is not None}")
    same = static["checksum"] == malleable["checksum"]
    print(f"static  8 processes: {static['time']:.3f} s, checksum {static['checksum']}")
    print(f"smp    {malleable['procs']:>2} processes at the end: {malleable['time']:.3f} s, "
          f"checksum {malleable['checksum']} ({'same' if same else 'DIFFERENT'})")
    plot = os.path.join(args.build, "tools", "flexmpi-plot")
    if os.path.exists(plot):
        subprocess.run([sys.executable, plot, trace, "--output", os.path.join(args.out, "plots")],
                       capture_output=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
