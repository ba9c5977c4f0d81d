#!/usr/bin/env python3
"""Checks that no file of src/ includes a header from a layer above its own.

The layers file lists the layers bottom first, one a line; a layer names one
or more folders below src/ (an entry may also be a file without its ending,
for a file that must sit apart from its folder; the tree needs none today).
A file belongs to the entry with the longest matching prefix. It may include
headers of its own entry and of any entry on a lower line, so entries of one
line do not include each other; anything else is a violation, printed as
file:line. Headers outside src/ (the public include/flexmpi, system and
library headers) are not checked.

    python3 scripts/check_layering.py scripts/layers.txt src
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_layers(path):
    """Each entry's layer, numbered from 1 at the bottom (comments and blank lines skipped)."""
    entries = {}
    number = 0
    for line in pathlib.Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        number += 1
        for prefix in line.split():
            entries[prefix.rstrip("/")] = number
    return entries


def entry_of(relative, entries):
    """The longest prefix of `relative` (a path below src/) that is an entry."""
    stem = str(pathlib.PurePosixPath(relative).with_suffix(""))
    best = None
    for prefix in entries:
        if stem == prefix or stem.startswith(prefix + "/"):
            if best is None or len(prefix) > len(best):
                best = prefix
    return best


def main(layers_path, source_dir):
    entries = read_layers(layers_path)
    root = pathlib.Path(source_dir)
    violations = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in {".hpp", ".cpp", ".h", ".c", ".def"}:
            continue
        relative = path.relative_to(root).as_posix()
        own = entry_of(relative, entries)
        if own is None:
            violations.append(f"{path}: in no layer of {layers_path}")
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            match = INCLUDE.match(line)
            if not match or not (root / match.group(1)).exists():
                continue
            target = entry_of(match.group(1), entries)
            if target is None:
                violations.append(f"{path}:{number}: {match.group(1)} is in no layer")
            elif target != own and entries[target] >= entries[own]:
                violations.append(f"{path}:{number}: {own} (layer {entries[own]}) includes "
                                  f"{match.group(1)} of {target} (layer {entries[target]})")
    for violation in violations:
        print(violation)
    return 1 if violations else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: check_layering.py LAYERS_FILE SOURCE_DIR")
    sys.exit(main(sys.argv[1], sys.argv[2]))
