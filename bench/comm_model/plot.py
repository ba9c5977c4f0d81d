#!/usr/bin/env python3
"""Predicted against measured time per routine (thesis Figs. 6.9-6.12).

Reads the CSVs bench/comm_model/run.sh wrote (one directory per library, or
several runs of one) and draws one panel per routine: measured (points),
the bands + fit model and the thesis's Hockney model (lines), against the
message size, one colour per process count.

usage: plot.py OUT.png DIR [DIR ...]
"""
import csv
import glob
import os
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = []
    for directory in sys.argv[2:]:
        for path in sorted(glob.glob(os.path.join(directory, "np*-*.csv"))):
            with open(path) as stream:
                rows += list(csv.DictReader(stream))
    if not rows:
        sys.exit(f"no np*-*.csv in {sys.argv[2:]}")
    routines = list(dict.fromkeys(r["routine"] for r in rows))
    figure, axes = plt.subplots(1, len(routines), figsize=(4 * len(routines), 3.6), squeeze=False)
    for axis, routine in zip(axes[0], routines):
        mine = [r for r in rows if r["routine"] == routine]
        for k, (library, procs) in enumerate(dict.fromkeys((r["library"], r["processes"])
                                                           for r in mine)):
            sel = sorted((r for r in mine if (r["library"], r["processes"]) == (library, procs)),
                         key=lambda r: int(r["bytes"]))
            sizes = [int(r["bytes"]) for r in sel]
            label = f"{library}, p={procs}"
            axis.scatter(sizes, [float(r["measured"]) for r in sel], s=8, color=f"C{k}",
                         label=f"{label} measured")
            axis.plot(sizes, [float(r["predicted"]) for r in sel], color=f"C{k}",
                      label=f"{label} bands + fit")
            axis.plot(sizes, [float(r["hockney"]) for r in sel], color=f"C{k}", linestyle=":",
                      label=f"{label} Hockney")
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_title(routine)
        axis.set_xlabel("bytes")
        axis.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("seconds per call")
    axes[0][-1].legend(fontsize="x-small")
    figure.tight_layout()
    figure.savefig(sys.argv[1], dpi=90)
    print(sys.argv[1])


if __name__ == "__main__":
    main()
