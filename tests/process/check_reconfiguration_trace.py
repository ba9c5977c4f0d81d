#!/usr/bin/env python3
"""Checks the reconfigurations recorded in a flexmpi trace.

usage: check_reconfiguration_trace.py TRACE ACTION:NPROCS...
Each ACTION:NPROCS is one expected spawn or removal and the process count
after it, in order. Every reconfiguration must also say the count before it,
its time, and the intervals after it must have the new count. The handovers
of data to spawned processes (action data_handover) must say their time.
"""
import json
import sys


def main():
    path, expected = sys.argv[1], [tuple(a.split(":")) for a in sys.argv[2:]]
    with open(path) as stream:
        records = [json.loads(line) for line in stream if line.strip()]
    seen, nprocs = [], None
    for record in records:
        for event in record.get("reconfigurations", []):
            if event["action"] == "data_handover":
                if event["nprocs"] != nprocs or not event["redistribution_seconds"] >= 0:
                    sys.exit(f"{event}: a handover without its time, or to {nprocs} processes")
                continue
            if nprocs is not None and event["nprocs_before"] != nprocs:
                sys.exit(f"{event}: {event['nprocs_before']} processes before, the trace had {nprocs}")
            if not event["seconds"] >= 0:
                sys.exit(f"{event}: no time")
            seen.append((event["action"], str(event["nprocs"])))
            nprocs = event["nprocs"]
        if nprocs is not None and record["nprocs"] != nprocs:
            sys.exit(f"interval {record['interval']}: {record['nprocs']} processes after a "
                     f"reconfiguration to {nprocs}")
    if seen != [(a, n) for a, n in expected]:
        sys.exit(f"reconfigurations in the trace: {seen}\nexpected: {expected}")
    print(f"{len(seen)} reconfigurations traced as expected")


if __name__ == "__main__":
    main()
