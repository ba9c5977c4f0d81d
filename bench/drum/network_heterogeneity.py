#!/usr/bin/env python3
"""DRUM thesis 5.3 (Figs. 5.10-5.11, Table 5.4) on network-namespace hosts:
half the hosts behind a slow link, the communication weight w_comm from 0 to 1.

Four hosts (tests/process/netns_hosts.sh, one rank each, equal speeds): a and
b behind 10 Mbit/s links, c and d behind 100 Mbit/s (token bucket filters on
both directions of each host's link; DRUM reads the rate as the link's
capacity C_i). Two applications:

  zoltan  flexmpi-zoltan-drum: Zoltan partitions a real matrix's graph with
          DRUM's powers as part sizes (the flat model, available-bandwidth
          communication power, COMMUNICATION_WEIGHT=w), then --steps steps of
          a halo exchange overlapped with --products sparse products of the
          interior rows, then the boundary rows: a part's traffic grows with
          its boundary, as in the thesis's mesh solvers. Every process is
          emulated at --emulate-speed (sleep mode) so that four hosts
          on two cores do not compete for them.
          "equal" is Zoltan without DRUM (every part 1/4).
  jacobi  flexmpi-jacobi balanced by the drum partitioner
          (FLEXMPI_DRUM_COMM_WEIGHT=w): an Allgatherv of the whole vector per
          iteration, whose traffic does not shrink with a smaller block.
          "static" is the even split.

Each case runs --repeats times, cases alternating; the figure is the
application's own time (the solve phase, or Jacobi's loop), median of the runs.

  python3 bench/drum/network_heterogeneity.py --build build --app zoltan --repeats 3
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
from lb_benchmarks import MPI_ENV  # noqa: E402  (the MPI settings of every benchmark)
RATES = "10mbit,10mbit,100mbit,100mbit"
WEIGHTS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0]


def run_on_hosts(args, program, env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEXMPI_")}
    # Four hosts on two cores: a rank waiting for its halo must yield its core.
    env.update({**MPI_ENV, "OMPI_MCA_mpi_yield_when_idle": "1"})
    env.update(env_extra)
    env.update({"NETNS_HOSTS": "4", "NETNS_HOST_RATES": RATES,
                "NETNS_MPIEXEC_ARGS": "--map-by node"})
    command = ["bash", os.path.join(ROOT, "tests/process/netns_hosts.sh"), args.mpiexec] + program
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode == 77:
        sys.exit(f"network namespaces cannot be made here: {out.stdout.strip()}")
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{out.stdout}\n{out.stderr}")
    return out.stdout


def zoltan_case(args, case):
    program = [os.path.join(args.build, "apps/zoltan_drum/flexmpi-zoltan-drum"), "--matrix",
               args.matrix, "--steps", str(args.steps), "--products", str(args.products),
               "--emulate-speed", str(args.emulate_speed)]
    program += ["--equal-parts"] if case == "equal" else [
        "--drum-param", f"COMMUNICATION_WEIGHT={case}"]
    out = run_on_hosts(args, program, {})
    seconds = float(re.search(r"^solve: .*checksum=(\w+) time=([0-9.]+)", out, re.M).group(2))
    checksum = re.search(r"checksum=(\w+) time=", out).group(1)
    rows = [int(r) for r in re.findall(r"^rank \d+: (\d+) rows", out, re.M)]
    powers = [float(p) for p in re.findall(r"DRUM part size ([0-9.]+)", out)]
    halo = [int(h) for h in re.findall(r"^rank \d+: halo (\d+) values", out, re.M)]
    waits = [float(w) for w in re.findall(r"exchange ([0-9.]+) s", out)]
    return seconds, {"rows": rows, "powers": powers, "halo": halo, "checksum": checksum,
                     "halo_wait": waits}


def jacobi_case(args, case, trace):
    program = [os.path.join(args.build, "apps/jacobi/flexmpi-jacobi"), "--size", str(args.size),
               "--iterations", str(args.iterations), "--sampling-interval", "25", "--quiet"]
    env = {"FLEXMPI_TRACE": trace}
    if case == "equal":
        program.append("--static")
    else:
        env.update({"FLEXMPI_PARTITIONER": "drum", "FLEXMPI_DRUM_COMM_WEIGHT": str(case)})
    out = run_on_hosts(args, program, env)
    seconds = float(re.search(r"\btime=([0-9.]+)", out).group(1))
    records = [json.loads(line) for line in open(trace)]
    partitions = [r["partition"] for r in records if r.get("partition")]
    return seconds, {"rows": partitions[-1] if partitions else [], "powers": [], "halo": []}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--mpiexec", default="mpiexec.openmpi")
    parser.add_argument("--app", choices=["zoltan", "jacobi"], default="zoltan")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--matrix", default=os.path.join(ROOT, "../shared/matrices/bcsstk16.mtx"))
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--products", type=int, default=10)
    parser.add_argument("--emulate-speed", type=float, default=0.25,
                        help="zoltan: every process's emulated speed (sleep mode), so that 4 "
                             "hosts on 2 cores do not compete for them")
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--iterations", type=int, default=400)
    args = parser.parse_args()
    cases = ["equal"] + WEIGHTS
    times = {case: [] for case in cases}
    last = {}
    with tempfile.TemporaryDirectory() as workdir:
        for repeat in range(args.repeats):
            for case in cases:
                if args.app == "zoltan":
                    seconds, detail = zoltan_case(args, case)
                else:
                    seconds, detail = jacobi_case(args, case,
                                                  os.path.join(workdir, f"{case}_{repeat}.jsonl"))
                times[case].append(seconds)
                last[case] = detail
                print(f"# repeat {repeat} case {case}: {seconds:.3f} s {detail}", flush=True)
    checksums = {d.get("checksum") for d in last.values()} - {None}
    if len(checksums) > 1:
        sys.exit(f"the solve's checksum differs between partitions: {checksums}")
    reference = statistics.median(times["equal"])
    print(f"\n{args.app}, hosts a,b at 10 Mbit/s and c,d at 100 Mbit/s, {args.repeats} runs each")
    print("| w_comm | DRUM powers (a, b, c, d) | rows (a, b, c, d) | halo values | runs (s) |"
          " median s | equal / case |")
    print("|---|---|---|---|---|---|---|")
    for case in cases:
        detail = last[case]
        median = statistics.median(times[case])
        print(f"| {case} | {', '.join(f'{p:.3f}' for p in detail['powers']) or '-'} |"
              f" {', '.join(str(r) for r in detail['rows'])} |"
              f" {', '.join(str(h) for h in detail['halo']) or '-'} |"
              f" {', '.join(f'{t:.3f}' for t in times[case])} | {median:.3f} |"
              f" {reference / median:.2f} |")


if __name__ == "__main__":
    main()
