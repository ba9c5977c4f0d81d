#!/usr/bin/env python3
"""A strategy is one folder: a copy of one under a new name, plus the one
add_subdirectory line of its parent, is a new strategy.

Copies the source tree to WORK/source (only the files that changed since the
last run, keeping their times, so that a rerun rebuilds nothing), copies
src/balancing/rcp as the partitioner rcp-copy, src/policies/lb as the policy
lb-copy and src/resources/scenario as the resource-manager backend
scenario-copy with their names replaced, adds the three add_subdirectory
lines, builds flexrun there (ccache shares the objects between runs) and
checks that the names are accepted values of their settings and pass
flexrun's check of the environment.

    strategy_copy_test.py --source-dir DIR --work DIR --cmake CMAKE --mpi openmpi|mpich
"""
import argparse
import filecmp
import os
import pathlib
import re
import shutil
import subprocess
import sys

COPIES = [
    # (parent folder, folder, copy, {old: new} in the copied files)
    ("src/balancing", "rcp", "rcp_copy",
     {"rcp_partitioner": "rcp_copy_partitioner", "RcpPartitioner": "RcpCopyPartitioner",
      '"rcp"': '"rcp-copy"', "balancing/rcp/": "balancing/rcp_copy/",
      "partitioner rcp)": "partitioner rcp_copy)"}),
    ("src/policies", "lb", "lb_copy",
     {"lb_policy": "lb_copy_policy", "LbPolicy": "LbCopyPolicy", '"lb"': '"lb-copy"',
      "policies/lb/": "policies/lb_copy/", "policy lb)": "policy lb_copy)"}),
    # Every name of the backend's folder says "scenario": all become the copy's.
    ("src/resources", "scenario", "scenario_copy",
     {"scenario": "scenario_copy", "Scenario": "ScenarioCopy",
      '"scenario_copy"': '"scenario-copy"'}),
]


def sync_tree(source, target):
    """Copies the files git knows or would add of `source` to `target` where they
    differ, with their times."""
    listing = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    files = subprocess.run(listing, cwd=source, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, files):
        origin, copy = source / name, target / name
        if not origin.is_file():
            continue  # deleted in the work tree
        if copy.exists() and filecmp.cmp(origin, copy, shallow=False):
            continue
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(origin, copy)


def write_if_changed(path, text):
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def copy_strategy(tree, parent, folder, name, replacements):
    for origin in sorted((tree / parent / folder).iterdir()):
        text = origin.read_text()
        for old, new in replacements.items():
            text = text.replace(old, new)
        write_if_changed(tree / parent / name / origin.name.replace(folder + "_", name + "_"), text)
    cmake = tree / parent / "CMakeLists.txt"
    text = cmake.read_text()
    line = "add_subdirectory(%s)\n" % name
    if line not in text:
        cmake.write_text(text + line)  # the one line outside the new folder


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--cmake", required=True)
    parser.add_argument("--mpi", required=True)
    args = parser.parse_args()
    tree = pathlib.Path(args.work) / "source"
    build = pathlib.Path(args.work) / "build"
    tree.mkdir(parents=True, exist_ok=True)
    sync_tree(pathlib.Path(args.source_dir), tree)
    for parent, folder, name, replacements in COPIES:
        (tree / parent / name).mkdir(exist_ok=True)
        copy_strategy(tree, parent, folder, name, replacements)
    # Objects of an earlier run are found in ccache whatever the directory.
    env = dict(os.environ, CCACHE_BASEDIR=str(tree.parent), CCACHE_NOHASHDIR="true")
    launcher = ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
    subprocess.run([args.cmake, "-S", str(tree), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                    "-DFLEXMPI_BUILD_TESTS=OFF", "-DFLEXMPI_BUILD_BENCHMARKS=OFF",
                    "-DFLEXMPI_MPI=" + args.mpi] + (launcher if shutil.which("ccache") else []),
                   check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run([args.cmake, "--build", str(build), "-j2", "--target", "flexrun"], check=True,
                   env=env, stdout=subprocess.DEVNULL)
    flexrun = str(build / "tools" / "flexrun")
    table = subprocess.run([flexrun, "--settings-table"], check=True, capture_output=True,
                           text=True).stdout
    failures = []
    for variable, name in [("FLEXMPI_PARTITIONER", "rcp-copy"), ("FLEXMPI_POLICY", "lb-copy"),
                           ("FLEXMPI_RESOURCES", "scenario-copy")]:
        row = next((r for r in table.splitlines() if r.startswith("| `%s`" % variable)), "")
        if not re.search(r"one of [^|]*\b%s\b" % re.escape(name), row):
            failures.append("%s does not accept %s: %s" % (variable, name, row))
    # The backend reads its timeline at the check: one PE appears at iteration 10.
    timeline = pathlib.Path(args.work) / "timeline.txt"
    write_if_changed(timeline, "10 available localhost:C1:1\n")
    dry_run = subprocess.run([flexrun, "--dry-run", "--partitioner=rcp-copy", "--policy=lb-copy",
                              "--resources=scenario-copy:%s" % timeline.resolve(), "-n", "1",
                              "true"], capture_output=True, text=True)
    if dry_run.returncode != 0:
        failures.append("flexrun refused the copies: " + dry_run.stderr)
    for failure in failures:
        print("FAILED: " + failure)
    if not failures:
        print("rcp-copy, lb-copy and scenario-copy are strategies: one folder and one line each")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
