#!/usr/bin/env python3
"""Draws the non-dedicated experiment of bench/lb_benchmarks.py (thesis Fig. 6.7).

    python3 bench/lb_benchmarks.py --build build --out /tmp/nd --repeats 3 nondedicated
    /usr/bin/python3 bench/plot_nondedicated.py /tmp/nd -o docs/img/nondedicated_k.png

One panel per k (1, 3, 5) as thesis Alg. 5 has it, and one for flexmpi's
defaults, from the traces of one repetition: per sampling
interval, the rows the loaded rank (rank 1) holds (the thesis's work of the
process, red) and the interference it suffers, 1 - its CPU time / wall time
(the share of its core the outside load took, blue bars), with the intervals
that redistributed marked.
"""
import argparse
import json
import os
import sys

from plotting import pyplot

LOADED_RANK = 1  # flexmpi-load runs on rank 1's core (lb_benchmarks.py nondedicated)
PANELS = {"k=1": "k = 1, thesis Alg. 5", "k=3": "k = 3, thesis Alg. 5",
          "k=5": "k = 5, thesis Alg. 5",
          "defaults": "flexmpi's defaults (k = 3, 2 confirmations, median of 5 intervals)"}


def read_trace(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the --out directory of lb_benchmarks.py nondedicated")
    parser.add_argument("--repetition", type=int, default=0, help="which run's traces (default 0)")
    parser.add_argument("-o", "--output", default="nondedicated_k.png")
    args = parser.parse_args()
    runs = {}
    for label in PANELS:
        path = os.path.join(args.out, f"nondedicated_{label}_{args.repetition}.jsonl")
        if not os.path.exists(path):
            sys.exit(f"plot_nondedicated: {path} is missing (run lb_benchmarks.py nondedicated)")
        runs[label] = read_trace(path)
        if not runs[label]:
            sys.exit(f"plot_nondedicated: {path} has no interval")
    plt = pyplot("plot_nondedicated")

    fig, axes = plt.subplots(len(runs), 1, figsize=(8, 2.6 * len(runs)), sharex=True)
    for axis, (label, records) in zip(axes, runs.items()):
        intervals = [r["interval"] for r in records]
        rows = [r["partition"][LOADED_RANK] for r in records]
        interference = [max(0.0, 1.0 - r["cpu_time"][LOADED_RANK] / r["wall_time"][LOADED_RANK])
                        for r in records]
        share = axis.twinx()
        share.bar(intervals, interference, 0.8, color="tab:blue", alpha=0.35,
                  label="interference (share of the core lost)")
        share.set_ylim(0.0, 1.0)
        share.set_ylabel("interference")
        axis.set_zorder(share.get_zorder() + 1)  # the rows line above the bars
        axis.patch.set_visible(False)
        axis.step(intervals, rows, where="post", color="tab:red", label="rows of the loaded rank")
        moved = [r["interval"] for r in records if r.get("decision") == "rebalance"]
        axis.plot(moved, [r["partition"][LOADED_RANK] for r in records if r["interval"] in moved],
                  "v", color="black", label="redistribution")
        axis.set_ylabel("rows")
        axis.set_ylim(0, max(rows) * 1.6)  # room for the legend above the line
        axis.set_title(PANELS[label], fontsize=10)
        handles = axis.get_legend_handles_labels()
        bars = share.get_legend_handles_labels()
        axis.legend(handles[0] + bars[0], handles[1] + bars[1], fontsize=7, loc="upper right", ncol=3)
    axes[-1].set_xlabel("sampling interval")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"plot_nondedicated: wrote {args.output}")


if __name__ == "__main__":
    main()
