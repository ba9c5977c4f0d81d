"""What the malleability experiments share: the emulated Table 6.4 cluster
(thesis 6.1.2) and one run of flexmpi-jacobi or flexmpi-cg on it.

Every process runs on this machine at its node class's relative speed
(FLEXMPI_EMULATE_CLUSTER=1, FLEXMPI_EMULATE_MODE=sleep: the missing time of
a slower PE is slept). Processes talk over TCP (OMPI_MCA_btl=self,tcp), as
the thesis's nodes did over Ethernet: Open MPI 4.1's shared-memory transport
cannot reach processes spawned later (MPI_Comm_spawn'ed processes are
"unreachable" with btl=self,vader), so with the default transports a static
run and a malleable one would not communicate the same way.
"""
import os
import re
import subprocess
import sys

MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_mpi_yield_when_idle": "1",
    # The transport that makes spawning fast here (docs/benchmarks.md, "Process management").
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl": "self,tcp",
    "PMIX_MCA_gds": "hash",
}
# Table 6.4: GFLOPS per core and $ per PE-hour.
CLASSES = "C1 1.90 0.095\nC7 2.25 0.115\nC6 2.90 0.204\nC8 4.62 0.462\n"
PROGRAMS = {"jacobi": ("jacobi", "flexmpi-jacobi", "--size"),
            "cg": ("cg", "flexmpi-cg", "--generate")}


def summary_of(stdout):
    """The fields of either program's summary line."""
    fields = {}
    for key, pattern in (("procs", r"\bprocs=(\d+)"), ("time", r"\btime=([0-9.]+)"),
                         ("checksum", r"\bchecksum=(\S+)")):
        match = re.search(pattern, stdout)
        if not match:
            return None
        fields[key] = match[1]
    fields["procs"] = int(fields["procs"])
    fields["time"] = float(fields["time"])
    return fields


def run_app(args, nprocs, settings):
    """args.app (jacobi or cg; args.size rows) for args.iterations on nprocs
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
    env.update(settings)
    folder, name, size_option = PROGRAMS[getattr(args, "app", "jacobi")]
    program = os.path.join(args.build, "apps", folder, name)
    command = ["mpiexec", "-n", str(nprocs), program, size_option, str(args.size),
               "--iterations", str(args.iterations), "--quiet"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
    summary = summary_of(result.stdout)
    if result.returncode != 0 or summary is None:
        sys.exit(f"{settings} -n {nprocs} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    return summary


def seconds_per_iteration(record):
    """A trace interval's time per iteration: its slowest process's wall time."""
    return max(record["wall_time"]) / record["iterations"]
