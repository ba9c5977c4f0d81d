#!/usr/bin/env python3
"""The Slurm demo and benchmark: flexmpi-jacobi under HPMP inside a Slurm
allocation of the local 4-node cluster (scripts/slurm-local.sh) grows onto
the two idle nodes, a job of higher priority arrives and needs two nodes,
flexmpi gives them back, the other job runs and leaves, and flexmpi grows
again. Each repetition prints what happened and two latencies, with their
breakdown:

  release: "higher-priority job submitted" -> "its script starts" =
           detection (until the policy's removal starts: the interval's end
           and the Slurm query) + removal (processes leave, data moves,
           helper jobs scancel'ed) + Slurm (until the urgent job runs)
  grow:    "nodes idle again" (sinfo, polled every 0.1 s) -> "new processes
           computing" = detection + spawn (process start) + booking (helper
           jobs, sbatch until running) + redistribution (data handover)

The clocks: this script's time.time(), the urgent job's `date +%s.%N`, and
the trace's unix_time (CLOCK_REALTIME on rank 0): one machine, one clock.

Every rank runs at an emulated 1/8 of a core, sleeping the rest
(FLEXMPI_EMULATE_MODE=sleep), so that 4 processes are faster than 2 on
this 2-core machine, as on the 4 real nodes the cluster stands for.

--modes: how the new processes start, each repetition running every mode in
turn: spawn (MPI_Comm_spawn; the helper jobs only book the nodes) and join
(FLEXMPI_SLURM_JOIN: the helper jobs start them, they connect through
ompi-server).

--netns: the cluster's nodes are hosts of their own (slurm-local.sh start
--netns); the job starts with one process on n1 (salloc -N1 -w n1) and grows
onto the other three; the new processes must join (--modes join), and every
Slurm command runs on n1.

  python3 bench/slurm/shrink_grow.py --build build                 # the demo, 1 run per mode
  python3 bench/slurm/shrink_grow.py --build build --repeats 5     # the benchmark
  python3 bench/slurm/shrink_grow.py --build build --netns --modes join --policy smp --repeats 5
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER = os.path.join(ROOT, "scripts", "slurm-local.sh")


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# Where Slurm's commands and the job run: here, or (--netns) on node n1.
ON_NODE = []


def slurm(*command):
    return subprocess.run(ON_NODE + list(command), capture_output=True, text=True,
                          check=True).stdout


def trace_records(path):
    records = []
    try:
        with open(path) as f:
            for line in f:
                if line.endswith("\n"):
                    records.append(json.loads(line))
    except FileNotFoundError:
        pass
    return records


def events(records, action):
    return [e for r in records for e in r.get("reconfigurations", []) if e["action"] == action]


def wait_for(what, condition, timeout, job):
    """Polls condition() every 0.1 s; fails if the flexmpi job ended first."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        if job.poll() is not None:
            sys.exit(f"the flexmpi job ended before {what}:\n{job.stdout.read()}")
        time.sleep(0.1)
    job.kill()
    sys.exit(f"timed out after {timeout} s waiting for {what}")


def read_time(path):
    try:
        with open(path) as f:
            text = f.read().strip()
        return float(text) if text else None
    except FileNotFoundError:
        return None


def idle_nodes(partition):
    return slurm("sinfo", "-h", "-p", partition, "-t", "idle", "-N", "-o", "%N").split()


def start_ompi_server(work):
    uri = os.path.join(work, "ompi-server.uri")
    server = subprocess.Popen(ON_NODE + ["ompi-server", "--no-daemonize", "-r", uri],
                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    for _ in range(50):
        if os.path.exists(uri) and os.path.getsize(uri) > 0:
            return server, uri
        time.sleep(0.1)
    server.terminate()
    sys.exit("ompi-server wrote no URI")


def start_job(args, work, join_uri):
    trace = os.path.join(work, "trace.jsonl")
    flexrun = os.path.join(args.build, "tools", "flexrun")
    jacobi = os.path.join(args.build, "apps", "jacobi", "flexmpi-jacobi")
    speeds = ",".join([str(args.emulated_speed)] * 4)
    allocation = ["-N1", "-w", "n1"] if args.netns else ["-N2"]
    command = ON_NODE + [
        "salloc", *allocation, "-p", args.partition, "-J", "flexmpi-demo", flexrun,
        f"--policy={args.policy}", "--sampling-interval", str(args.interval), "--emulate-speed", speeds,
        "--emulate-mode=sleep", "--trace", trace]
    if join_uri:
        command.append(f"--slurm-join={join_uri}")
    command += [jacobi, "--size", str(args.size), "--iterations", str(args.iterations)]
    log("$ " + " ".join(command))
    job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return job, trace


def one_run(args, run, mode):
    work = tempfile.mkdtemp(prefix="flexmpi-shrink-grow-")
    server, uri = start_ompi_server(work) if mode == "join" else (None, None)
    try:
        return measure(args, run, mode, work, uri)
    finally:
        if server:
            server.terminate()
            server.wait()


def measure(args, run, mode, work, uri):
    job, trace = start_job(args, work, uri)
    wait_for("4 processes", lambda: any(r["nprocs"] == 4 for r in trace_records(trace)), 120, job)
    log("flexmpi grew to 4 processes; squeue:\n" + slurm("squeue", "-p", args.partition))
    time.sleep(2 * args.settle)
    start_file, end_file = os.path.join(work, "urgent.start"), os.path.join(work, "urgent.end")
    submitted = time.time()
    slurm("sbatch", "-N2", "-p", args.partition, f"--priority={args.urgent_priority}",
          "-J", "urgent", "-o", "/dev/null",
          "--wrap", f"date +%s.%N > {start_file}; sleep {args.urgent_seconds}; "
          f"date +%s.%N > {end_file}")
    log(f"a job of higher priority asks for 2 nodes for {args.urgent_seconds} s; squeue:\n"
        + slurm("squeue", "-p", args.partition))
    urgent_start = wait_for("the urgent job to start", lambda: read_time(start_file), 120, job)
    removal = wait_for("the removal in the trace",
                       lambda: [e for e in events(trace_records(trace), "remove")
                                if e["unix_time"] > submitted], 30, job)[0]
    log(f"flexmpi removed {removal['nprocs_before'] - removal['nprocs']} processes; "
        f"the urgent job runs; squeue:\n" + slurm("squeue", "-p", args.partition))
    urgent_end = wait_for("the urgent job to end", lambda: read_time(end_file),
                          args.urgent_seconds + 60, job)
    idle = wait_for("2 idle nodes", lambda: time.time() if len(idle_nodes(args.partition)) >= 2
                    else None, 30, job)
    spawn = wait_for("the spawn after the urgent job", lambda: [
        e for e in events(trace_records(trace), "spawn") if e["unix_time"] > urgent_end], 120, job)[0]
    handover = wait_for("the data handover", lambda: [
        e for e in events(trace_records(trace), "data_handover")
        if e["unix_time"] >= spawn["unix_time"]], 60, job)[0]
    log("flexmpi grew again to 4 processes; squeue:\n" + slurm("squeue", "-p", args.partition))
    output, _ = job.communicate(timeout=600)
    residual = [line for line in output.splitlines() if "residual" in line]
    if job.returncode != 0 or not residual:
        sys.exit(f"the flexmpi job failed (exit {job.returncode}):\n{output}")
    left = [j for j in slurm("squeue", "-h", "-o", "%j").split() if j.startswith("flexmpi-helper")]
    if left:
        sys.exit(f"helper jobs left after the run: {left}")
    counts = [r["nprocs"] for r in trace_records(trace)]
    log(f"run {run} ({mode}): done, {residual[-1].strip()}; processes per interval: {counts}")
    removal_start = removal["unix_time"] - removal["seconds"] - removal["redistribution_seconds"]
    spawn_start = spawn["unix_time"] - spawn["seconds"]
    return {
        "release": urgent_start - submitted,
        "release_detection": removal_start - submitted,
        "release_removal": removal["unix_time"] - removal_start,
        "release_scancel": removal["resource_manager_seconds"],
        "release_slurm": urgent_start - removal["unix_time"],
        "idle_after_end": idle - urgent_end,
        "grow": handover["unix_time"] - idle,
        "grow_detection": spawn_start - idle,
        "grow_spawn": spawn["seconds"] - spawn["resource_manager_seconds"],
        "grow_booking": spawn["resource_manager_seconds"],
        "grow_redistribution": handover["redistribution_seconds"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--iterations", type=int, default=3000)
    parser.add_argument("--interval", type=int, default=50, help="sampling interval, iterations")
    parser.add_argument("--emulated-speed", type=float, default=0.125)
    parser.add_argument("--urgent-seconds", type=int, default=10)
    parser.add_argument("--urgent-priority", type=int, default=100000)
    parser.add_argument("--settle", type=float, default=2.0, help="seconds before the urgent job")
    parser.add_argument("--partition", default="flex")
    parser.add_argument("--keep-cluster", action="store_true")
    parser.add_argument("--modes", default="spawn,join",
                        help="comma-separated: spawn, join (how the new processes start)")
    parser.add_argument("--policy", default="hpmp", choices=["hpmp", "smp"],
                        help="hpmp grows when its model predicts a gain, smp onto any idle node")
    parser.add_argument("--netns", action="store_true",
                        help="nodes are network-namespace hosts (join only)")
    args = parser.parse_args()
    modes = args.modes.split(",")
    if not modes or any(mode not in ("spawn", "join") for mode in modes):
        parser.error(f"--modes {args.modes}: expected spawn, join or both, comma-separated")
    if args.netns and modes != ["join"]:
        parser.error("--netns: MPI_Comm_spawn cannot start processes on other hosts here; "
                     "use --modes join")
    if args.netns:
        ON_NODE.extend(["bash", CLUSTER, "on", "n1"])
    status = subprocess.run(["bash", CLUSTER, "start"] + (["--netns"] if args.netns else [])
                            ).returncode
    if status != 0:
        sys.exit(f"scripts/slurm-local.sh start failed ({status})")
    for line in subprocess.run(["bash", CLUSTER, "env"], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        os.environ[name] = value.strip("'\"")
    results = {mode: [] for mode in modes}
    try:
        for run in range(1, args.repeats + 1):
            for mode in modes:
                results[mode].append(one_run(args, run, mode))
    finally:
        if not args.keep_cluster:
            subprocess.run(["bash", CLUSTER, "stop"])
    for mode, runs in results.items():
        print(f"\n{mode}: seconds, median of", len(runs), "(min-max):")
        for key in runs[0]:
            values = [r[key] for r in runs]
            print(f"  {key:22s} {statistics.median(values):7.3f}  "
                  f"({min(values):.3f}-{max(values):.3f})")


if __name__ == "__main__":
    main()
