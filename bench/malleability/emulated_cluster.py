"""What the malleability experiments share: the emulated Table 6.4 cluster
(thesis 6.1.2) and one run of flexmpi-jacobi, flexmpi-cg or
flexmpi-epigraph on it. For EpiGraph, --size is the population and
--iterations counts hourly steps (--step-minutes 60: 24 a simulated day,
so --iterations 1440 is 60 days; give --interval 24 for one sampling
interval a day, as in thesis 6.4).

Every process runs on this machine at its node class's relative speed
(FLEXMPI_EMULATE_CLUSTER=1, FLEXMPI_EMULATE_MODE=sleep: the missing time of
a slower PE is slept). Processes talk over TCP (OMPI_MCA_btl=self,tcp), as
the thesis's nodes did over Ethernet: Open MPI 4.1's shared-memory transport
cannot reach processes spawned later (MPI_Comm_spawn'ed processes are
"unreachable" with btl=self,vader), so with the default transports a static
run and a malleable one would not communicate the same way.
"""
import json
import os
import re
import statistics
import subprocess
import sys

MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_mpi_yield_when_idle": "1",
    # The transport that makes spawning fast here (docs/results.md, "Process creation and removal").
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl": "self,tcp",
    "PMIX_MCA_gds": "hash",
}
# Table 6.4: GFLOPS per core and $ per PE-hour.
CLASSES = "C1 1.90 0.095\nC7 2.25 0.115\nC6 2.90 0.204\nC8 4.62 0.462\n"
PROGRAMS = {"jacobi": ("jacobi", "flexmpi-jacobi"), "cg": ("cg", "flexmpi-cg"),
            "epigraph": ("epigraph", "flexmpi-epigraph")}
EPIGRAPH_STEPS_PER_DAY = 24


def arguments_of(app, size, iterations):
    """The program's arguments for a problem of `size` and `iterations`."""
    if app == "epigraph":
        if iterations % EPIGRAPH_STEPS_PER_DAY:
            sys.exit(f"epigraph: --iterations {iterations} is not whole days of 24 hourly steps")
        return ["--population", str(size), "--step-minutes", "60",
                "--days", str(iterations // EPIGRAPH_STEPS_PER_DAY), "--quiet"]
    size_option = "--size" if app == "jacobi" else "--generate"
    return [size_option, str(size), "--iterations", str(iterations), "--quiet"]


def summary_of(stdout):
    """The fields of the programs' summary lines (EpiGraph's curve checksum
    stands for the others' solution checksum)."""
    fields = {}
    for key, pattern in (("procs", r"\b(?:procs|processes)=(\d+)"),
                         ("time", r"\btime=([0-9.]+)"),
                         ("checksum", r"\b(?:checksum|curve_checksum)=(\S+)")):
        match = re.search(pattern, stdout)
        if not match:
            return None
        fields[key] = match[1]
    fields["procs"] = int(fields["procs"])
    fields["time"] = float(fields["time"])
    return fields


def add_unit_time_argument(parser):
    """--unit-seconds: how an emulated PE's full-speed time per work unit is set."""
    parser.add_argument(
        "--unit-seconds", default="auto",
        help="an emulated PE's full-speed seconds per work unit (FLEXMPI_EMULATE_UNIT_SECONDS): "
             "'calibrate' measures it once, before the runs, on one process that is not "
             "emulated; 'measured' lets each PE measure it as it runs (the library's default); "
             "or a number. auto (default): calibrate for jacobi and cg, whose time per row or "
             "nonzero is constant; measured for epigraph, whose work units are a forecast")


def fix_unit_time(args):
    """Resolves args.unit_seconds (add_unit_time_argument) to a number of seconds or
    None (measured), which run_app then gives every run; returns how it was set."""
    choice = args.unit_seconds
    if choice == "auto":
        choice = "measured" if getattr(args, "app", "jacobi") == "epigraph" else "calibrate"
    if choice == "measured":
        args.unit_seconds = None
        return "each emulated PE measures its time per work unit as it runs"
    if choice == "calibrate":
        args.unit_seconds = calibrate_unit_seconds(args)
        return (f"time per work unit {args.unit_seconds:.4g} s, calibrated on one process that "
                "is not emulated")
    try:
        args.unit_seconds = float(choice)
    except ValueError:
        sys.exit(f"--unit-seconds: expected auto, calibrate, measured or a number, not {choice!r}")
    if not args.unit_seconds > 0:
        sys.exit(f"--unit-seconds: expected a positive number of seconds, not {choice}")
    return f"time per work unit {args.unit_seconds:.4g} s, given"


def calibrate_unit_seconds(args):
    """The full-speed seconds per work unit of args.app on args.size: 80 iterations (at
    most args.iterations) on one process that is not emulated, the median over its
    sampling intervals after the first of computation / work units (a trace's
    metric_count is the work of the interval's iterations)."""
    trace = os.path.join(args.out, "unit_calibration.jsonl")
    if os.path.exists(trace):
        os.remove(trace)
    iterations = min(args.iterations, 80)
    calibration = argparse_copy(args, iterations=iterations, unit_seconds=None)
    run_app(calibration, 1, {"FLEXMPI_EMULATE_CLUSTER": "0", "FLEXMPI_POLICY": "none",
                             "FLEXMPI_SAMPLING_INTERVAL": str(min(args.interval, iterations // 4)),
                             "FLEXMPI_TRACE": trace})
    per_unit = [r["computation_time"][0] / r["metric_count"][0]
                for r in map(json.loads, open(trace)) if r["metric_count"][0] > 0]
    if len(per_unit) < 2:
        sys.exit(f"the calibration traced {len(per_unit)} interval(s) with work ({trace})")
    return statistics.median(per_unit[1:])


def argparse_copy(args, **changes):
    """A copy of the parsed arguments `args` with `changes`."""
    return type(args)(**{**vars(args), **changes})


def run_app(args, nprocs, settings):
    """args.app (jacobi, cg or epigraph; args.size rows) for args.iterations on nprocs
    processes of the emulated cluster described in args.out (hosts.txt,
    classes.txt), with the FLEXMPI_* `settings` on top; returns its summary
    (procs, time, checksum)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEXMPI_")}
    env.update(MPI_ENV)
    env.update({
        "FLEXMPI_HOSTFILE": os.path.join(args.out, "hosts.txt"),
        "FLEXMPI_NODE_CLASSES": os.path.join(args.out, "classes.txt"),
        "FLEXMPI_EMULATE_CLUSTER": "1",
        "FLEXMPI_EMULATE_MODE": "sleep",
        "FLEXMPI_SAMPLING_INTERVAL": str(args.interval),
        "FLEXMPI_LOG_LEVEL": "warn",
    })
    if getattr(args, "unit_seconds", None) is not None:
        env["FLEXMPI_EMULATE_UNIT_SECONDS"] = repr(args.unit_seconds)
    env.update(settings)
    app = getattr(args, "app", "jacobi")
    folder, name = PROGRAMS[app]
    command = (["mpiexec", "-n", str(nprocs), os.path.join(args.build, "apps", folder, name)] +
               arguments_of(app, args.size, args.iterations))
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
    summary = summary_of(result.stdout)
    if result.returncode != 0 or summary is None:
        sys.exit(f"{settings} -n {nprocs} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    return summary


def seconds_per_iteration(record):
    """A trace interval's time per iteration: its slowest process's wall time."""
    return max(record["wall_time"]) / record["iterations"]
