#!/usr/bin/env python3
"""DRUM thesis Table 5.3: the cost of DRUM's monitoring agents at a 1 s
monitoring period, on a homogeneous run.

flexmpi-zoltan-drum partitions a real matrix (DRUM's flat model) and runs its
solve phase (halo exchanges and sparse products, one process per core) twice
per pair, with and without DRUM's agents watching the whole phase
(--monitor-solve, MONITORING_FREQUENCY=1); pairs alternate which goes first.
Two figures:
  - the agents' own CPU time over the monitored time (each agent measures it;
    DEBUG_LEVEL=4 prints it): the share of a core they take, which is the
    application's slowdown if every CPU cycle they use is taken from it;
  - the solve phase's wall time with / without, median of the pairs (on this
    shared VM the run-to-run noise is far above the 0.2 % sought, so this
    figure only bounds it).

  python3 bench/drum/monitoring_overhead.py --build build --pairs 5
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def solve(args, monitored):
    command = [args.mpiexec, "-n", str(args.processes), "--bind-to", "core",
               os.path.join(args.build, "apps/zoltan_drum/flexmpi-zoltan-drum"),
               "--matrix", args.matrix, "--steps", str(args.steps), "--products",
               str(args.products), "--drum-param", "MONITORING_FREQUENCY=1",
               "--drum-param", "DEBUG_LEVEL=4"] + (["--monitor-solve"] if monitored else [])
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEXMPI_")}
    env.update(MPI_ENV)
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{out.stdout}\n{out.stderr}")
    seconds = float(re.search(r"^solve: .* time=([0-9.]+) s", out.stdout, re.M).group(1))
    # The last report of each rank is the solve phase's (the first, the short
    # monitoring before the partition).
    agents = {}
    for rank, monitored_s, samples, agent in re.findall(
            r"DRUM rank (\d+) monitor: ([0-9.]+) s, (\d+) samples, .* agent ([0-9.]+) s CPU",
            out.stdout):
        agents[int(rank)] = (float(monitored_s), int(samples), float(agent))
    return seconds, agents


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--mpiexec", default="mpiexec.openmpi")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--matrix", default=os.path.join(ROOT, "../shared/matrices/bcsstk16.mtx"))
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--products", type=int, default=2)
    args = parser.parse_args()
    times = {False: [], True: []}
    shares = []
    for pair in range(args.pairs):
        order = [False, True] if pair % 2 == 0 else [True, False]
        for monitored in order:
            seconds, agents = solve(args, monitored)
            times[monitored].append(seconds)
            if monitored:
                for rank, (monitored_s, samples, agent) in sorted(agents.items()):
                    shares.append(agent / monitored_s)
                    print(f"# pair {pair} rank {rank}: monitored {monitored_s:.2f} s, {samples} "
                          f"samples, agent {agent * 1e3:.2f} ms CPU = {100 * agent / monitored_s:.4f} %")
            print(f"# pair {pair} {'with' if monitored else 'without'} agents: {seconds:.3f} s",
                  flush=True)
    without, with_agents = statistics.median(times[False]), statistics.median(times[True])
    print(f"\n| solve phase | runs (s) | median s |\n|---|---|---|")
    print(f"| without agents | {', '.join(f'{t:.3f}' for t in times[False])} | {without:.3f} |")
    print(f"| with agents (1 s) | {', '.join(f'{t:.3f}' for t in times[True])} | {with_agents:.3f} |")
    print(f"\nwith / without, medians: {with_agents / without:.4f}")
    print(f"agent CPU / monitored time, per rank and run: median {100 * statistics.median(shares):.4f} %,"
          f" max {100 * max(shares):.4f} % ({len(shares)} agents)")


if __name__ == "__main__":
    main()
