#!/usr/bin/env python3
"""Draws the load-pattern table of bench/lb_benchmarks.py (part load_patterns).

    python3 bench/lb_benchmarks.py ... load_patterns > patterns.md
    /usr/bin/python3 bench/plot_load_patterns.py patterns.md -o docs/img/load_patterns.png

One panel per application: for every outside load, static / balanced (the
median, with its min-max as an error bar) beside the oracle (static / ideal),
and the lines at 1 (as fast as static) and 0.97 (the issue's floor); an
oracle beyond the axis is written as a number.
"""
import argparse
import re
import sys

from plotting import pyplot

# Beyond this the oracle of a time-sliced run (CG with a load thread on
# each core: 16x) would flatten every other bar; it is written instead.
AXIS_TOP = 3.0

ROW = re.compile(r"^\| (?P<app>[^|]+) \| (?P<load>[^|]+) \| [0-9.]+ \| [0-9.]+ \| "
                 r"(?P<ratio>[0-9.]+) \((?P<low>[0-9.]+)-(?P<high>[0-9.]+)\) \| (?P<oracle>[0-9.]+) \|")


def read_table(path):
    """{app: [(load, ratio, low, high, oracle)]} in the order of the table."""
    rows = {}
    with open(path) as f:
        for line in f:
            match = ROW.match(line.strip())
            if match:
                values = [float(match[k]) for k in ("ratio", "low", "high", "oracle")]
                rows.setdefault(match["app"].strip(), []).append((match["load"].strip(), *values))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", help="the Markdown output of lb_benchmarks.py load_patterns")
    parser.add_argument("-o", "--output", default="load_patterns.png")
    args = parser.parse_args()
    rows = read_table(args.table)
    if not rows:
        sys.exit(f"plot_load_patterns: no load-pattern rows in {args.table}")
    plt = pyplot("plot_load_patterns")

    fig, axes = plt.subplots(1, len(rows), figsize=(6.5 * len(rows), 5), sharey=True, squeeze=False)
    for axis, (app, entries) in zip(axes[0], rows.items()):
        positions = range(len(entries))
        ratios = [e[1] for e in entries]
        errors = [[e[1] - e[2] for e in entries], [e[3] - e[1] for e in entries]]
        axis.bar([p - 0.2 for p in positions], ratios, 0.4, yerr=errors, capsize=3,
                 label="static / balanced (median, min-max)")
        axis.bar([p + 0.2 for p in positions], [e[4] for e in entries], 0.4, alpha=0.5,
                 label="oracle: static / ideal")
        for p, entry in zip(positions, entries):  # an oracle off the scale, by its value
            if entry[4] > AXIS_TOP:
                axis.text(p + 0.2, AXIS_TOP * 0.97, f"{entry[4]:.1f}", ha="center", va="top",
                          fontsize=8)
        axis.set_ylim(0.0, AXIS_TOP)
        axis.axhline(1.0, color="black", linewidth=0.8)
        axis.axhline(0.97, color="red", linewidth=0.8, linestyle="--", label="0.97 (3 % slower)")
        axis.set_xticks(list(positions))
        axis.set_xticklabels([e[0] for e in entries], rotation=35, ha="right", fontsize=8)
        axis.set_title(app)
        axis.set_ylabel("speed-up over static")
        axis.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"plot_load_patterns: wrote {args.output}")


if __name__ == "__main__":
    main()
