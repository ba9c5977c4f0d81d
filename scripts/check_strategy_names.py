#!/usr/bin/env python3
"""A strategy is one folder: outside it, no source file names it.

The strategies are the folders of src/balancing/ (partitioners),
src/policies/ (policies) and src/resources/ (resource-manager backends)
whose sources define the registry entry NAME_partitioner(), NAME_policy()
or NAME_resources(); a strategy's names are its folder's and
the name it registers (fpm_akima and fpm-akima). A file of src/, include/ or
tools/ outside that folder that names one (a whole word, any case, but not
a library's name of LIBRARIES) is reported, except the add_subdirectory line
of its parent folder's CMakeLists.txt (adding a strategy is its folder and
that line) and the pairs of the allowance file:
what is left to move, one "PATH NAME" a line, to be emptied.

    check_strategy_names.py ROOT [ALLOWANCE_FILE]
"""
import pathlib
import re
import subprocess
import sys

KINDS = {"balancing": "partitioner", "policies": "policy", "resources": "resources"}
# Libraries flexmpi implements whose names a partitioner shares: DRUM (the
# machine model of src/machine, C API include/flexmpi/drum.h, default model
# file drum.xml) and ULL (the calibrating library of include/ull_calibrate.h).
# Written in capitals, or as those file names, they name the library; the
# partitioner is written as it registers, in lower case.
LIBRARIES = re.compile(r"\b(DRUM|ULL)\b|\bflexmpi/drum\.h\b|\bdrum\.xml\b")
PARENTS = {"src/%s/CMakeLists.txt" % parent for parent in KINDS}


def strategies(root):
    """{name: folder} of every registered strategy."""
    found = {}
    for parent, kind in KINDS.items():
        for folder in sorted((root / "src" / parent).iterdir()):
            if not folder.is_dir():
                continue
            entry = re.compile(r"\b%s_%s\(\)\s*\{" % (re.escape(folder.name), kind))
            if any(entry.search(f.read_text()) for f in folder.glob("*.cpp")):
                relative = folder.relative_to(root).as_posix() + "/"
                found[folder.name] = relative
                found[folder.name.replace("_", "-")] = relative
    return found


def read_allowance(path):
    allowed = set()
    for line in pathlib.Path(path).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            file, name = line.split()
            allowed.add((file, name))
    return allowed


def leaks_in(root, names):
    """{(path, name): first line} of every file naming a strategy outside its folder."""
    pattern = re.compile(r"(?<![\w-])(%s)(?![\w-])" % "|".join(map(re.escape, names)), re.I)
    files = subprocess.run(["git", "ls-files", "src", "include", "tools"], cwd=root, check=True,
                           capture_output=True, text=True).stdout.split()
    leaks = {}
    for path in files:
        if path in PARENTS or not re.search(r"\.(c|h|cpp|hpp|f90|txt)$", path):
            continue
        text = (root / path).read_text(errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            for match in pattern.finditer(LIBRARIES.sub(" ", line)):
                name = match.group(1).lower()
                if not path.startswith(names[name]):
                    leaks.setdefault((path, name), number)
    return leaks


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    allowed = read_allowance(sys.argv[2]) if len(sys.argv) > 2 else set()
    names = strategies(root)
    leaks = leaks_in(root, names)
    failed = False
    for (path, name), number in sorted(leaks.items()):
        if (path, name) not in allowed:
            print(f"{path}:{number}: names the strategy {name} of {names[name]}")
            failed = True
    for path, name in sorted(allowed - leaks.keys()):
        print(f"allowance '{path} {name}' is no longer needed: remove it")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
