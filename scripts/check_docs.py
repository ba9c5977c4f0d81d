#!/usr/bin/env python3
"""Checks that the documentation reads as a guide, not a diary.

    python3 scripts/check_docs.py [SOURCE_DIR]

Fails (exit status 1, one line per problem) when
- a heading in README.md or docs/**/*.md names an issue ("issue 12"), a round ("Ninth
  round") or a date ("2026-11-25");
- docs/results.md is longer than 600 lines, or docs/architecture.md (what a newcomer
  reads first; the design notes are in docs/design/) longer than 300;
- a relative Markdown link in README.md or docs/ points to a file that does not exist, or to
  a heading (#anchor, GitHub's slug) that a Markdown file does not have.
Headings inside fenced code blocks are code, not headings, and are not checked.
"""
import os
import re
import sys

RESULTS_MAX_LINES = 600
ARCHITECTURE_MAX_LINES = 300
HEADING_FORBIDDEN = [
    (re.compile(r"\bissues?\s+#?\d+", re.I), "names an issue"),
    (re.compile(r"\brounds?\b", re.I), "names a round"),
    (re.compile(r"20\d\d-\d\d"), "names a date"),
]
# [text](target) and ![alt](target); the target ends at whitespace or ')'.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    """The anchors of a Markdown file's headings (outside code blocks)."""
    found, in_code = set(), False
    with open(path, encoding="utf-8") as stream:
        for line in stream:
            if line.lstrip().startswith("```"):
                in_code = not in_code
            elif not in_code and re.match(r"#{1,6}\s", line):
                base = slug(line.lstrip("#"))
                name, n = base, 1
                while name in found:
                    name, n = f"{base}-{n}", n + 1
                found.add(name)
    return found


def markdown_files(source_dir):
    files = [os.path.join(source_dir, "README.md")]
    for root, _, names in os.walk(os.path.join(source_dir, "docs")):
        files += [os.path.join(root, name) for name in sorted(names) if name.endswith(".md")]
    return sorted(files)


def check_file(path, source_dir):
    problems = []
    relative = os.path.relpath(path, source_dir)
    in_code = False
    with open(path, encoding="utf-8") as stream:
        lines = stream.read().split("\n")
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        if re.match(r"#{1,6}\s", line):
            for pattern, what in HEADING_FORBIDDEN:
                if pattern.search(line):
                    problems.append(f"{relative}:{number}: heading {what}: {line.strip()}")
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # a URL (http:, mailto:)
            if target.startswith("#"):
                if target[1:] not in anchors(path):
                    problems.append(f"{relative}:{number}: link to a missing heading: {target}")
                continue
            file_part, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            if not os.path.exists(resolved):
                problems.append(f"{relative}:{number}: link to a missing file: {target}")
            elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                problems.append(f"{relative}:{number}: link to a missing heading: {target}")
    return problems


def main():
    source_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    source_dir = os.path.abspath(source_dir)
    problems = []
    for path in markdown_files(source_dir):
        problems += check_file(path, source_dir)
    for name, limit in (("results.md", RESULTS_MAX_LINES), ("architecture.md", ARCHITECTURE_MAX_LINES)):
        path = os.path.join(source_dir, "docs", name)
        if not os.path.exists(path):
            problems.append(f"docs/{name} is missing")
            continue
        with open(path, encoding="utf-8") as stream:
            count = len(stream.read().splitlines())
        if count > limit:
            problems.append(f"docs/{name}: {count} lines, at most {limit} allowed")
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(1)
    print(f"docs: {len(markdown_files(source_dir))} files checked, no problem")


if __name__ == "__main__":
    main()
