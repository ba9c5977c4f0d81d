#!/usr/bin/env python3
"""flexmpi-plot: turn a flexmpi JSON-lines trace into PNG plots.

    flexmpi-plot trace.jsonl -o outdir/
    flexmpi-plot --curve curve.csv -o outdir/    (flexmpi-epigraph --output)

A trace (FLEXMPI_TRACE, docs/reference/trace.md) has one JSON object per sampling
interval, written by rank 0 (src/trace/trace_writer.cpp). The plots follow
the thesis figures 6.6 and 6.7:

  computation_time.png  (a) computation time of every process per interval
  imbalance.png         (b) (max-min)/max of computation time against the
                            imbalance threshold; a marker where a decision
                            other than "none" was taken, one per kind (Fig. 6.6)
  mpi_time.png          (c) time inside MPI of every process per interval
  partition.png         (d) rows of every process during each interval, when
                            the trace has partitions (Fig. 6.7)
  speed.png             speed (metric count per second of computation) and
                            shared fraction (Treal-Tcpu)/Treal per process
  nprocs.png            process count per interval, when it changes (with the
                        granted PEs and the processes per node class, when traced),
                        and the time per iteration on a second axis (Figs. 6.14,
                        6.18-6.20)
  power.png             computing power of the processes (summed speeds) against
                        the workload per iteration, and the power an amp goal
                        needs, when the process count changes (Fig. 6.21)
  prediction.png        predicted vs measured time per phase (thesis Fig. 6.13)
  overview.png          all of the above on one page

"process i" is the i-th process of the run: its rank at start, or the next
number when spawned; its series goes on when a removal renumbers the ranks.

With --curve, the epidemic curve of flexmpi-epigraph (its --output CSV: a
row per simulated day, a column per state, then the work) instead:

  epidemic_curve.png    individuals per state per day, and the work per day
                        on a second axis (the shape of thesis Fig. 6.1)

The PNG paths are printed, one per line; with --describe, what each plot
draws instead, as JSON (for tests and scripts). Exit status 1 with a message
naming the file (and the line) for a missing file, an empty trace or a
malformed line; 2 for a bad command line.
"""

import argparse
import bisect
import csv
import itertools
import json
import math
import os
import sys

# Per-process series: fields that hold one value per process.
REQUIRED = ("computation_time", "mpi_time")
# The numbers the plots draw, checked for NaN and infinity.
NUMERIC_FIELDS = REQUIRED + ("cpu_time", "wall_time", "speed", "effective_time", "imbalance",
                             "imbalance_threshold")

# (marker, color) of each kind of decision on imbalance.png; kinds not listed
# take the spare ones in turn (again from the first after the last).
DECISION_MARKERS = {"rebalance": ("v", "tab:red"), "held": ("x", "tab:gray"),
                    "balanced": ("o", "tab:green"), "reconfigure": ("D", "tab:purple")}
# Up to this many intervals the imbalance is a bar each; beyond, one step line.
MAX_BARS = 1000
SPARE_DECISION_MARKERS = [("s", "tab:brown"), ("^", "tab:olive"), ("P", "tab:pink"),
                          ("*", "tab:cyan"), ("h", "black")]


class TraceError(Exception):
    """A trace that cannot be plotted; the message says where and why."""


def load_trace(path):
    """Reads and checks a trace, a line at a time (a long run's trace is hundreds of MB);
    returns the list of interval records. A UTF-8 byte order mark is skipped, as the
    library's readers do. Values that are not finite (NaN, Infinity) are reported on
    standard error, a line per field, and drawn as gaps."""
    records = []
    checkpoints = []
    non_finite = {}  # field: [(interval, line number, value)]
    try:
        with open(path, encoding="utf-8-sig") as stream:
            for number, line in enumerate(stream, start=1):
                if not line.strip():
                    continue
                record = parse_line(line, f"{path}: line {number}")
                if "checkpoint" in record:
                    checkpoints.append(record)
                    continue
                check_record(record, f"{path}: line {number}")
                for field, value in replace_non_finite(record):
                    non_finite.setdefault(field, []).append(
                        (record.get("interval", len(records)), number, value))
                records.append(record)
    except FileNotFoundError:
        raise TraceError(f"{path}: no such file")
    except (OSError, UnicodeDecodeError) as error:
        raise TraceError(f"{path}: cannot read: {error}")
    report_non_finite(path, non_finite)
    attach_checkpoints(records, checkpoints)
    if not records:
        raise TraceError(f"{path}: empty trace (no sampling interval was recorded; did the "
                         "program run at least FLEXMPI_SAMPLING_INTERVAL monitored iterations?)")
    return records


def parse_line(line, where):
    """One trace line as a JSON object; TraceError naming `where` otherwise."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise TraceError(f"{where}: malformed (not JSON: {error.msg}, column {error.colno})")
    if not isinstance(record, dict):
        raise TraceError(f"{where}: malformed (expected a JSON object, "
                         f"got {type(record).__name__})")
    return record


def replace_non_finite(record):
    """Sets every NaN or infinite number of the plotted fields to NaN (a gap: an infinity
    would stretch an axis to nothing); returns [(field, value as read)] of those found."""
    found = []
    for field in NUMERIC_FIELDS:
        value = record.get(field)
        if isinstance(value, list):
            bad = [v for v in value if is_number(v) and not math.isfinite(v)]
            if bad:
                found.append((field, bad[0]))
                record[field] = [v if not is_number(v) or math.isfinite(v) else math.nan
                                 for v in value]
        elif is_number(value) and not math.isfinite(value):
            found.append((field, value))
            record[field] = math.nan
    return found


def report_non_finite(path, non_finite):
    """One line per field: how many intervals, and the first of them."""
    for field, where in non_finite.items():
        interval, number, value = where[0]
        more = f" and {len(where) - 1} more intervals" if len(where) > 1 else ""
        print(f"flexmpi-plot: {path}: \"{field}\" is not a finite number ({value}) in interval "
              f"{interval} (line {number}){more}: drawn as a gap", file=sys.stderr)


def attach_checkpoints(records, checkpoints):
    """Gives each interval record the checkpoints written after it (its "checkpoints" list).

    A checkpoint's own trace line ({"checkpoint": {...}, "unix_time": t}) goes
    with the last interval recorded before it (the first, if none was).
    """
    times = [r.get("unix_time", -math.inf) for r in records]
    for line in checkpoints:
        event = line["checkpoint"]
        if not isinstance(event, dict) or not is_number(event.get("next_iteration")):
            continue
        when = line.get("unix_time", math.inf)
        # The records are in the order rank 0 wrote them: their times increase.
        before = bisect.bisect_right(times, when)
        target = records[before - 1] if before else (records[0] if records else None)
        if target is not None:
            target.setdefault("checkpoints", []).append(event)


def mark_checkpoints(axis, xs, xlabel, records):
    """A dashed green line where each checkpoint was written, at the iteration it resumes."""
    labelled = False
    for x, record in zip(xs, records):
        for event in record.get("checkpoints", []):
            where = event["next_iteration"] if xlabel == "iteration" else x
            label = None if labelled else "checkpoint written"
            axis.axvline(where, color="tab:green", linestyle="--", linewidth=1.2, label=label)
            labelled = True
    if labelled:
        axis.legend(fontsize="small", loc="best")


def array(values):
    """`values` as a float array, None as NaN: matplotlib scans a list element by element,
    which took minutes on the series of a trace of 60,000 intervals."""
    import numpy
    return numpy.array([math.nan if v is None else v for v in values], dtype=float)


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_record(record, where):
    """Raises TraceError if a record lacks what the plots need."""
    for field in REQUIRED:
        if field not in record:
            raise TraceError(f"{where}: malformed (no \"{field}\" field)")
    for field in REQUIRED + ("cpu_time", "wall_time", "speed", "partition", "partition_before"):
        if field not in record:
            continue
        values = record[field]
        if not isinstance(values, list) or not all(is_number(v) for v in values):
            raise TraceError(f"{where}: malformed (\"{field}\" must be a list of numbers)")
    if len(record["mpi_time"]) != len(record["computation_time"]):
        raise TraceError(f"{where}: malformed (\"mpi_time\" has {len(record['mpi_time'])} "
                         f"values, \"computation_time\" {len(record['computation_time'])})")
    events = record.get("reconfigurations", [])
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise TraceError(f"{where}: malformed (\"reconfigurations\" must be a list of objects)")
    for event in events:
        ranks = event.get("removed_ranks", [])
        counts = [event.get(field, 0) for field in ("nprocs", "nprocs_before")]
        if not (isinstance(ranks, list) and all(isinstance(rank, int) for rank in ranks) and
                all(isinstance(count, int) for count in counts)):
            raise TraceError(f"{where}: malformed (a reconfiguration's \"removed_ranks\", "
                             "\"nprocs\" and \"nprocs_before\" must be whole numbers)")
    for field in ("imbalance", "imbalance_threshold", "interval", "first_iteration", "iterations",
                  "nprocs"):
        if field in record and not is_number(record[field]):
            raise TraceError(f"{where}: malformed (\"{field}\" must be a number)")


def x_values(records):
    """The x axis: the last iteration of each interval when known, else the interval index."""
    if all("first_iteration" in r and "iterations" in r for r in records):
        return [r["first_iteration"] + r["iterations"] for r in records], "iteration"
    return [r.get("interval", i) for i, r in enumerate(records)], "sampling interval"


# id(records): (records, process_ids(records)); every panel asks, it is computed once.
PROCESS_IDS = {}


def process_ids(records):
    """The processes of each interval, rank by rank: [[process of rank 0, ...] per record].

    Process i is the i-th process of the run (its rank at start, or the next
    number when spawned), so that a process keeps its series when a removal
    renumbers the ranks after it. A record's "reconfigurations" are the
    spawns and removals since the previous interval: a removal names the
    ranks it took ("removed_ranks"); spawned processes join at the end.
    """
    known = PROCESS_IDS.get(id(records))
    if known is not None and known[0] is records:
        return known[1]
    processes, started, result = [], 0, []  # started: processes the run has had so far
    for record in records:
        for event in record.get("reconfigurations", []):
            if event.get("action") == "spawn":
                joining = event.get("nprocs", 0) - event.get("nprocs_before", 0)
                processes += range(started, started + joining)
                started += joining
            elif event.get("action") == "remove":
                gone = set(event.get("removed_ranks", []))
                processes = [p for rank, p in enumerate(processes) if rank not in gone]
        # What no event says (the first interval, a trace without events): the
        # last ranks come and go.
        width = len(record["computation_time"])
        joining = max(0, width - len(processes))
        processes += range(started, started + joining)
        started += joining
        del processes[width:]
        result.append(list(processes))
    PROCESS_IDS[id(records)] = (records, result)
    return result


def by_process(records, values_per_record):
    """{process: [value or NaN per interval]} from one list of values per record, rank by rank
    (None: not known in that interval)."""
    series = {}
    for k, (processes, values) in enumerate(zip(process_ids(records), values_per_record)):
        for rank, process in enumerate(processes[:len(values or [])]):
            if process not in series:
                series[process] = [math.nan] * len(records)
            series[process][k] = values[rank]
    return dict(sorted(series.items()))


def per_process(records, field):
    """{process: [value or NaN per interval]} of a per-process field: processes may come and
    go (malleability)."""
    return by_process(records, [r.get(field) for r in records])


def partition_per_interval(records):
    """The rows each process held during each interval (None where unknown): the blocks the
    balancer judged ("partition_before"), else the blocks the previous interval left
    ("partition") if the processes are the same, else the interval's own "partition"
    (a trace that records only that)."""
    processes = process_ids(records)
    during = []
    for k, record in enumerate(records):
        previous = records[k - 1] if k > 0 else {}
        if "partition_before" in record:
            during.append(record["partition_before"])
        elif "partition" in previous and processes[k - 1] == processes[k]:
            during.append(previous["partition"])
        else:
            during.append(record.get("partition"))
    return during


def imbalance_of(record):
    if "imbalance" in record:
        return record["imbalance"]
    times = record["computation_time"]
    top = max(times) if times else 0.0
    return (top - min(times)) / top if top > 0 else 0.0


def decided(record):
    decision = record.get("decision", "none")
    return decision not in (None, "", "none")


def plot_per_process(axis, xs, series, ylabel, title, drawstyle="default"):
    many = len(series) > 12
    for process, values in series.items():
        axis.plot(xs, array(values), marker=None if many or len(xs) > 40 else "o", markersize=3,
                  linewidth=1.2, drawstyle=drawstyle, color=f"C{process % 10}",
                  label=f"process {process}")
    axis.set_ylabel(ylabel)
    axis.set_title(title)
    axis.grid(True, alpha=0.3)
    if not many:
        axis.legend(fontsize="small", ncol=min(4, max(1, len(series))), loc="best")


def mark_decisions(axis, xs, records):
    """A faint vertical line at each interval that decided something (one artist for all)."""
    where = [x for x, record in zip(xs, records) if decided(record)]
    if where:
        axis.vlines(where, 0, 1, transform=axis.get_xaxis_transform(), color="tab:red",
                    alpha=0.25, linewidth=1)


def panel_computation(axis, xs, xlabel, records):
    if any("effective_time" in r for r in records):
        # What the balancer compares: on a shared PE the computation's CPU
        # time over the process's share of the PE; dotted, wall - MPI time.
        plot_per_process(axis, xs, per_process(records, "effective_time"), "seconds",
                         "(a) computation time per process and interval\n"
                         "(solid: as balanced, dotted: wall - MPI)")
        for process, values in per_process(records, "computation_time").items():
            axis.plot(xs, array(values), linestyle=":", linewidth=1, color=f"C{process % 10}")
    else:
        plot_per_process(axis, xs, per_process(records, "computation_time"), "seconds",
                         "(a) computation time per process and interval")
    mark_decisions(axis, xs, records)
    mark_checkpoints(axis, xs, xlabel, records)
    axis.set_xlabel(xlabel)


def panel_imbalance(axis, xs, xlabel, records):
    imbalance = [imbalance_of(r) for r in records]
    label = "(max-min)/max of computation time (as balanced)"
    if len(xs) <= MAX_BARS:
        widths = [(xs[1] - xs[0]) * 0.6] if len(xs) > 1 else [0.6]
        axis.bar(xs, imbalance, width=widths[0], color="tab:blue", alpha=0.7, label=label)
    else:  # one line: a bar per interval is a patch per interval, and Agg cannot split a fill
        axis.plot(xs, array(imbalance), drawstyle="steps-mid", color="tab:blue", alpha=0.7,
                  linewidth=1, label=label)
    if any("imbalance_threshold" in r for r in records):
        thresholds = [r.get("imbalance_threshold", math.nan) for r in records]
        axis.plot(xs, array(thresholds), "k:", linewidth=1.5, drawstyle="steps-mid",
                  label="imbalance threshold")
    kinds = sorted({str(r["decision"]) for r in records if decided(r)})
    spare = itertools.cycle(SPARE_DECISION_MARKERS)
    for kind in kinds:
        marker, color = DECISION_MARKERS.get(kind) or next(spare)
        hits = [(x, v) for x, v, r in zip(xs, imbalance, records)
                if decided(r) and str(r["decision"]) == kind]
        axis.plot([x for x, _ in hits], [v for _, v in hits], linestyle="none", marker=marker,
                  color=color, markersize=8, label=f"decision: {kind}")
    top = max([v for v in imbalance + [r.get("imbalance_threshold", 0.0) for r in records]
               if not math.isnan(v)] + [0.05])
    axis.set_ylim(0, top * 1.35)  # room for the legend above the bars
    axis.set_ylabel("relative imbalance")
    axis.set_xlabel(xlabel)
    axis.set_title("(b) load imbalance and decisions")
    axis.grid(True, alpha=0.3)
    # The interval time (slowest process) as in Fig. 6.6's red line.
    twin = axis.twinx()
    slowest = [max(r["wall_time"]) if r.get("wall_time") else
               max(r["computation_time"]) + max(r["mpi_time"]) if r["computation_time"]
               else math.nan for r in records]
    twin.plot(xs, array(slowest), color="tab:red", linewidth=1, alpha=0.8,
              label="interval time, slowest process (right axis)")
    twin.set_ylabel("interval time, slowest (s)", color="tab:red")
    twin.tick_params(axis="y", colors="tab:red")
    twin.set_ylim(0, max([v for v in slowest if not math.isnan(v)] + [1e-9]) * 1.35)
    # One legend, on the twin (drawn last) so no line crosses it.
    handles = axis.get_legend_handles_labels()
    twin_handles = twin.get_legend_handles_labels()
    twin.legend(handles[0] + twin_handles[0], handles[1] + twin_handles[1], fontsize="small",
                loc="upper left", framealpha=0.95)


def panel_mpi(axis, xs, xlabel, records):
    plot_per_process(axis, xs, per_process(records, "mpi_time"), "seconds",
                     "(c) time inside MPI per process and interval")
    axis.set_xlabel(xlabel)


def panel_partition(axis, xs, xlabel, records):
    # An interval's rows drawn back to the interval's start (x is its end).
    plot_per_process(axis, xs, by_process(records, partition_per_interval(records)), "rows",
                     "(d) partition size per process", drawstyle="steps-pre")
    mark_decisions(axis, xs, records)
    axis.set_xlabel(xlabel)


def panel_speed(axis, xs, xlabel, records):
    metric = next((r["metric"] for r in records if "metric" in r), "metric")
    plot_per_process(axis, xs, per_process(records, "speed"), f"{metric} units / s",
                     "speed per process (solid) and shared fraction (dashed)")
    axis.set_xlabel(xlabel)
    if all("cpu_time" in r and "wall_time" in r for r in records):
        twin = axis.twinx()
        walls, cpus = per_process(records, "wall_time"), per_process(records, "cpu_time")
        for process in walls:
            shared = [(w - c) / w if w and w > 0 else math.nan
                      for w, c in zip(walls[process], cpus[process])]
            twin.plot(xs, array([max(0.0, s) for s in shared]), linestyle="--", linewidth=1,
                      alpha=0.7,
                      color=f"C{process % 10}")
        twin.set_ylabel("(Treal - Tcpu) / Treal")
        twin.set_ylim(0, 1)


def panel_nprocs(axis, xs, xlabel, records):
    counts = [r.get("nprocs", len(r["computation_time"])) for r in records]
    axis.step(xs, array(counts), where="post", color="tab:green", label="processes")
    top = max(counts)
    # A malleability policy's records carry the resource manager's grants
    # and each process's node class (thesis Figs. 6.14, 6.18).
    views = [r.get("resources") or {} for r in records]
    # No node class known (no hostfile): no grants, and every process in class "".
    granted = [sum(c["granted_pes"] for c in v["classes"]) if v.get("classes") else None
               for v in views]
    if any(g is not None for g in granted):
        axis.step(xs, array(granted), where="post", color="black", linestyle="--",
                  label="granted PEs")
        top = max(top, max(g for g in granted if g is not None))
    classes = sorted({c for v in views for c in v.get("process_classes", [])})
    if classes != [""]:  # else the one class is all the processes, drawn already
        for k, name in enumerate(classes):
            per_class = [v["process_classes"].count(name) if v.get("process_classes") else None
                         for v in views]
            axis.step(xs, array(per_class), where="post", linewidth=1, alpha=0.8,
                      color=f"C{(k + 3) % 10}",
                      label=f"processes of {name}" if name else "processes without a node class")
    if len(axis.get_lines()) > 1:
        axis.legend(fontsize="small", loc="upper left")
    axis.set_ylabel("processes")
    axis.set_xlabel(xlabel)
    axis.set_title("number of processes and time per iteration")
    axis.set_ylim(0, top + 1)
    axis.yaxis.get_major_locator().set_params(integer=True)
    axis.grid(True, alpha=0.3)
    # Time per iteration: the interval's slowest process (what the loop waits for).
    if all("wall_time" in r and r.get("iterations") for r in records):
        right = axis.twinx()
        right.plot(xs, array([max(r["wall_time"]) / r["iterations"] for r in records]),
                   color="tab:red",
                   marker=".", linewidth=1, label="time per iteration")
        right.set_ylabel("seconds per iteration", color="tab:red")
        right.set_ylim(bottom=0)
        right.legend(fontsize="small", loc="upper right")


def panel_power(axis, xs, xlabel, records):
    """Computing power against workload (thesis Fig. 6.21): the summed speeds
    of the processes (metric per second of computation), the work of one
    iteration, and for amp the power its goal needs (the power that would
    finish the remaining work in the remaining goal time)."""
    power = [sum(r["speed"]) if r.get("speed") else None for r in records]
    axis.step(xs, array(power), where="post", color="tab:blue",
              label="computing power (summed speeds)")
    needed = []
    for r in records:
        amp = r.get("amp") or {}
        try:
            needed.append(amp["current_speed"] * amp["current_prediction_seconds"] /
                          amp["remaining_goal_seconds"])
        except (KeyError, TypeError, ZeroDivisionError):
            needed.append(None)
    if any(v is not None and v > 0 for v in needed):
        axis.step(xs, array(needed), where="post", color="black", linestyle="--",
                  label="power the goal needs (amp)")
    metric = next((r["metric"] for r in records if "metric" in r), "work")
    axis.set_ylabel(f"{metric} per second")
    axis.set_xlabel(xlabel)
    axis.set_title("computing power and workload")
    # A goal passed near the end needs "infinite" power: keep the processes' power readable.
    top = max((v for v in power if v), default=0.0)
    axis.set_ylim(0, 3 * top if top > 0 and any(v and v > 3 * top for v in needed) else None)
    axis.grid(True, alpha=0.3)
    axis.legend(fontsize="small", loc="upper left")
    workload = [sum(r["metric_count"]) / r["iterations"]
                if r.get("metric_count") and r.get("iterations") else None for r in records]
    if any(workload):
        right = axis.twinx()
        right.plot(xs, array(workload), color="tab:orange", marker=".", linewidth=1,
                   label="workload (work per iteration)")
        right.set_ylabel(f"{metric} per iteration", color="tab:orange")
        right.set_ylim(bottom=0)
        right.legend(fontsize="small", loc="upper right")


def panel_prediction(axis, xs, xlabel, records):
    """Predicted (dashed) against measured (solid) time per phase (thesis Fig. 6.13)."""
    values = []
    for k, phase in enumerate(("computation", "communication", "reconfiguration",
                               "redistribution")):
        # .get: traces written before the reconfiguration phase have none;
        # 0 s: the interval had no such phase (not drawn).
        predicted = [r["prediction"]["predicted"].get(phase) or None if "prediction" in r
                     else None for r in records]
        measured = [r["prediction"]["measured"].get(phase) or None if "prediction" in r
                    else None for r in records]
        if not any(measured) and not any(predicted):
            continue
        values += [v for v in measured + predicted if v]
        axis.plot(xs, array(measured), marker="o", markersize=3, color=f"C{k}",
                  label=f"{phase}, measured")
        axis.plot(xs, array(predicted), linestyle="--", marker="x", markersize=5, color=f"C{k}",
                  label=f"{phase}, predicted")
    # A spawn (0.1-1 s) next to milliseconds of communication: a log scale
    # keeps every phase readable (intervals without the phase are not drawn).
    if values and max(values) > 100 * min(values):
        axis.set_yscale("log")
    profile = next(r["prediction"]["machine_profile"] for r in records if "prediction" in r)
    axis.set_ylabel("seconds per interval")
    axis.set_xlabel(xlabel)
    axis.set_title(f"prediction model: predicted vs measured (machine profile: {profile})")
    axis.legend(fontsize="small")
    axis.grid(True, alpha=0.3)


def panel_moves(axis, xs, xlabel, records):
    # Do no harm: each move's predicted and measured gain in time per
    # iteration of the slowest process, judged on the blocks it made, and the
    # back-off level the judgements left.
    judged = [(x, r["move_outcome"]) for x, r in zip(xs, records) if r.get("move_outcome")]
    width = (xs[1] - xs[0]) * 0.35 if len(xs) > 1 else 0.35
    predicted = [o["before_seconds"] - o["predicted_seconds"] for _, o in judged]
    measured = [o["before_seconds"] - o["measured_seconds"] for _, o in judged]
    axis.bar([x - width / 2 for x, _ in judged], predicted, width=width, color="tab:gray",
             label="gain predicted by the move")
    axis.bar([x + width / 2 for x, _ in judged], measured, width=width, color="tab:green",
             label="gain measured on its blocks")
    axis.axhline(0.0, color="black", linewidth=0.8)
    axis.set_ylabel("s per iteration, slowest process")
    axis.set_xlabel(xlabel)
    axis.set_title("moves judged on the blocks they made, and the back-off")
    axis.grid(True, alpha=0.3)
    twin = axis.twinx()
    twin.plot(xs, array([r.get("backoff", 0) for r in records]), color="tab:red",
              drawstyle="steps-post",
              label="back-off level (right axis)")
    twin.set_ylabel("back-off level", color="tab:red")
    twin.set_ylim(-0.1, 3.5)
    handles = axis.get_legend_handles_labels()
    twin_handles = twin.get_legend_handles_labels()
    twin.legend(handles[0] + twin_handles[0], handles[1] + twin_handles[1], fontsize="small",
                loc="upper right", framealpha=0.95)


def load_curve(path):
    """Reads flexmpi-epigraph's curve CSV; returns (state names, rows of ints)."""
    try:
        with open(path, encoding="utf-8", newline="") as stream:
            table = list(csv.reader(stream))
    except FileNotFoundError:
        raise TraceError(f"{path}: no such file")
    except (OSError, UnicodeDecodeError) as error:
        raise TraceError(f"{path}: cannot read: {error}")
    if not table or len(table[0]) < 3 or table[0][0] != "day" or table[0][-1] != "work":
        raise TraceError(f"{path}: line 1: expected the header 'day,<states...>,work' of "
                         "flexmpi-epigraph --output")
    rows = []
    for number, row in enumerate(table[1:], start=2):
        if not row:
            continue
        if len(row) != len(table[0]) or not all(v.strip().isdigit() for v in row):
            raise TraceError(f"{path}: line {number}: expected {len(table[0])} whole numbers "
                             ">= 0")
        rows.append([int(v) for v in row])
    if not rows:
        raise TraceError(f"{path}: no day in the curve")
    return table[0][1:-1], rows


def plot_curve(states, rows, outdir, name):
    """Writes epidemic_curve.png; returns {path: describe(figure)}."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    days = [row[0] for row in rows]
    figure, axis = plt.subplots(figsize=(9, 4.5))
    for column, state in enumerate(states, start=1):
        axis.plot(days, [row[column] for row in rows], label=state.replace("_", " "))
    axis.set_xlabel("day")
    axis.set_ylabel("individuals")
    axis.grid(alpha=0.3)
    work_axis = axis.twinx()
    work_axis.plot(days, [row[-1] for row in rows], color="black", linestyle="--", label="work")
    work_axis.set_ylabel("work per day (units)")
    lines = axis.get_legend_handles_labels()
    more = work_axis.get_legend_handles_labels()
    axis.legend(lines[0] + more[0], lines[1] + more[1], fontsize="small", ncol=2)
    axis.set_title("epidemic curve")
    figure.suptitle(name, fontsize="small", color="gray")
    figure.tight_layout()
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "epidemic_curve.png")
    save_figure(figure, path, 110)
    written = {path: describe(figure)}
    plt.close(figure)
    return written


def describe(figure):
    """What a figure draws (--describe): per axes its title, legend entries and
    every line with its label, marker and points (null where not drawn)."""
    def numbers(values):
        return [None if v is None or math.isnan(float(v)) else float(v) for v in values]

    return [{"title": axis.get_title(),
             "legend": [text.get_text() for text in axis.get_legend().get_texts()]
             if axis.get_legend() else [],
             "lines": [{"label": line.get_label(), "marker": str(line.get_marker()),
                        "x": numbers(line.get_xdata()), "y": numbers(line.get_ydata())}
                       for line in axis.get_lines()]}
            for axis in figure.axes]


def make_plots(records, outdir, trace_name, describing):
    """Writes the PNG files; returns {path: describe(figure) if describing, else None}."""
    import matplotlib
    matplotlib.use("Agg")
    # A long noisy line in one piece made Agg's rasteriser take gigabytes and
    # minutes (a trace of 50,000 intervals); in pieces it takes seconds.
    matplotlib.rcParams["agg.path.chunksize"] = 10000
    import matplotlib.pyplot as plt

    xs, xlabel = x_values(records)
    xs = array(xs)
    panels = [("computation_time", panel_computation), ("imbalance", panel_imbalance),
              ("mpi_time", panel_mpi)]
    if any("partition" in r for r in records):
        panels.append(("partition", panel_partition))
    if any("speed" in r for r in records):
        panels.append(("speed", panel_speed))
    counts = {r.get("nprocs", len(r["computation_time"])) for r in records}
    if len(counts) > 1:
        panels.append(("nprocs", panel_nprocs))
        if any("speed" in r for r in records):
            panels.append(("power", panel_power))
    if any("prediction" in r for r in records):
        panels.append(("prediction", panel_prediction))
    if any("move_outcome" in r for r in records):
        panels.append(("moves", panel_moves))

    os.makedirs(outdir, exist_ok=True)
    written = {}
    for name, draw in panels:
        figure, axis = plt.subplots(figsize=(9, 4.5))
        draw(axis, xs, xlabel, records)
        figure.suptitle(trace_name, fontsize="small", color="gray")
        figure.tight_layout()
        path = os.path.join(outdir, name + ".png")
        save_figure(figure, path, 110)
        written[path] = describe(figure) if describing else None
        plt.close(figure)

    rows = (len(panels) + 1) // 2
    figure, axes = plt.subplots(rows, 2, figsize=(16, 4.2 * rows), squeeze=False)
    for (name, draw), axis in zip(panels, axes.flat):
        draw(axis, xs, xlabel, records)
    for axis in list(axes.flat)[len(panels):]:
        axis.set_visible(False)
    checkpoints = [e for r in records for e in r.get("checkpoints", [])]
    written_in = sum(e.get("seconds", 0.0) for e in checkpoints)
    figure.suptitle(f"flexmpi trace {trace_name}: {len(records)} sampling intervals" +
                    (f", {len(checkpoints)} checkpoints ({written_in:.2f} s writing)"
                     if checkpoints else ""))
    figure.tight_layout(rect=(0, 0, 1, 0.98))
    path = os.path.join(outdir, "overview.png")
    save_figure(figure, path, 90)
    written[path] = describe(figure) if describing else None
    plt.close(figure)
    return written


def save_figure(figure, path, dpi):
    """Writes `figure` to `path`; a failure (a full disk) is an OSError naming the file."""
    try:
        figure.savefig(path, dpi=dpi)
    except OSError as error:
        raise OSError(error.errno, error.strerror or str(error), path) from error


def main(argv):
    parser = argparse.ArgumentParser(
        prog="flexmpi-plot",
        description="Turn a flexmpi JSON-lines trace (FLEXMPI_TRACE) into PNG plots "
                    "like the thesis figures 6.6 and 6.7.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("trace", nargs="?", help="trace file written with FLEXMPI_TRACE=path")
    source.add_argument("--curve", help="epidemic curve CSV of flexmpi-epigraph --output")
    parser.add_argument("-o", "--output", default=".",
                        help="directory for the PNG files (created if needed; default: .)")
    parser.add_argument("--describe", action="store_true",
                        help="print, instead of the paths, what each plot draws as JSON: "
                             "{path: [per axes: title, legend, lines with label, marker, x, y]}")
    arguments = parser.parse_args(argv)
    path = arguments.curve or arguments.trace
    try:
        data = load_curve(path) if arguments.curve else load_trace(path)
    except TraceError as error:
        print(f"flexmpi-plot: {error}", file=sys.stderr)
        return 1
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(f"flexmpi-plot: matplotlib is missing for {sys.executable} "
              "(apt-get install python3-matplotlib, or run scripts/setup.sh)", file=sys.stderr)
        return 1
    try:
        name = os.path.basename(path)
        written = (plot_curve(*data, arguments.output, name) if arguments.curve else
                   make_plots(data, arguments.output, name, arguments.describe))
    except OSError as error:
        print(f"flexmpi-plot: cannot write to {arguments.output}: {error}", file=sys.stderr)
        return 1
    try:
        print(json.dumps(written, indent=1) if arguments.describe else "\n".join(written))
        sys.stdout.flush()
    except OSError as error:
        print(f"flexmpi-plot: cannot write the list of plots to standard output: {error}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
