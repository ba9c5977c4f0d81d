#!/usr/bin/env python3
"""Checks the prediction model in a flexmpi trace of a Jacobi run with a spawn
and a removal: every interval after the first was predicted with
the calibrated machine profile, steady intervals' computation within a
generous bound, and the spawn's and the removal's costs predicted beside
what they measured.

usage: check_prediction.py TRACE PROFILE
"""
import json
import statistics
import sys


def fail(message):
    sys.exit(f"CHECK FAILED: {message}")


def main():
    path, profile = sys.argv[1], sys.argv[2]
    with open(path) as stream:
        records = [json.loads(line) for line in stream if line.strip()]
    if len(records) < 6:
        fail(f"{len(records)} trace records, expected at least 6")
    steady, changes = [], {}
    for record in records[1:]:
        prediction = record.get("prediction")
        if prediction is None:
            fail(f"interval {record['interval']} was not predicted")
        if prediction["machine_profile"] != profile:
            fail(f"interval {record['interval']}: priced with {prediction['machine_profile']}")
        actions = [e["action"] for e in record.get("reconfigurations", [])]
        for action in ("spawn", "remove"):
            if action in actions:
                changes[action] = prediction
        if not actions and prediction["measured"]["redistribution"] == 0:
            steady.append(abs(prediction["relative_error"]["computation"]))
    if not steady or statistics.median(steady) > 0.5:
        fail(f"steady computation errors {steady}: median above 50 %")
    for action in ("spawn", "remove"):
        if action not in changes:
            fail(f"no interval after a {action}")
        predicted = changes[action]["predicted"]["reconfiguration"]
        measured = changes[action]["measured"]["reconfiguration"]
        if not (predicted > 0 and measured > 0):
            fail(f"{action}: predicted {predicted} s, measured {measured} s")
    spawn = changes["spawn"]
    ratio = spawn["predicted"]["reconfiguration"] / spawn["measured"]["reconfiguration"]
    if not 0.1 < ratio < 10:  # generous: calibration and run minutes apart, under load
        fail(f"spawn predicted {ratio:.2f}x what it measured")
    print(f"{len(records)} intervals predicted; steady computation error median "
          f"{100 * statistics.median(steady):.1f} %; spawn predicted {ratio:.2f}x measured")


if __name__ == "__main__":
    main()
