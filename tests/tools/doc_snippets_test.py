#!/usr/bin/env python3
"""Compiles every C, C++ and Fortran code block of Markdown files against include/.

A snippet the reader copies must compile as written, so each block is compiled
with the MPI compiler wrappers (syntax and semantics, no link). A block that is
not a whole translation unit says what it is in an HTML comment on the line
just before its fence, which the rendered page does not show:

    <!-- compile: file -->      the block is a translation unit (the default)
    <!-- compile: body -->      the block is statements, compiled as a function body
    <!-- compile: no REASON --> not compiled: REASON says why (pseudo-code, ...)

`file` and `body` take two optional parts, in this order: `given: TEXT`, the
code the fragment assumes (declarations, the start of a loop), put before the
block, and `then: TEXT`, put after it (the closing brace of a loop the
fragment opens). The comment may span several lines. Code several fragments
assume is written once, `<!-- compile-given NAME: TEXT -->` anywhere in the
file, and `@NAME` in a `given:` or `then:` stands for it. Every file starts with
the installed C headers (flexmpi.h, flexmpi/drum.h, ull_calibrate.h) and the
usual standard headers; C++ adds flexmpi/flexmpi.hpp; a Fortran body is a
subroutine with `use mpi`, `use flexmpi` and `implicit none`.

Blocks of other languages (sh, cmake, ...) are not compiled; a block with no
language is an error, so is an annotation that is not before a block. A
compiler error names the Markdown file and line (`#line`), and the test fails
with the line of every block that does not compile.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

C_LANGUAGES = {"c": "c", "cpp": "cpp", "c++": "cpp", "cxx": "cpp", "fortran": "fortran",
               "f90": "fortran", "f08": "fortran"}
# Languages of blocks that are read or run, not compiled.
OTHER_LANGUAGES = {"sh", "bash", "console", "cmake", "text", "json", "xml", "ini", "python",
                   "make", "yaml", "toml", "csv", "diff"}

C_PRELUDE = """#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <flexmpi.h>
#include <flexmpi/drum.h>
#include <ull_calibrate.h>
"""
CPP_PRELUDE = """#include <cstdio>
#include <cstdlib>
#include <vector>
#include <mpi.h>
#include <flexmpi.h>
#include <flexmpi/flexmpi.hpp>
"""
FORTRAN_BODY_START = """subroutine snippet
  use mpi
  use flexmpi
  implicit none
"""
# Fragments declare what they use in `given:`; unused leftovers are no error.
C_WARNINGS = ["-Wall", "-Werror", "-Wno-unused-variable", "-Wno-unused-but-set-variable",
              "-Wno-unused-function", "-Wno-unused-parameter"]
FENCE = re.compile(r"^\s*(```+|~~~+)\s*([^\s`]*)")
ANNOTATION = re.compile(r"^compile:\s*(file|body|no)\b(.*)$", re.S)
SHARED_GIVEN = re.compile(r"^compile-given\s+(\w+):(.*)$", re.S)
PARTS = re.compile(r"^(?:\s*given:(?P<given>.*?))?(?:\s*then:(?P<then>.*?))?\s*$", re.S)


class Block:
    """One fenced code block: where it starts, its language, text and annotation."""

    def __init__(self, path, line, language, text, annotation, annotation_line):
        self.path, self.line, self.language, self.text = path, line, language, text
        self.mode, self.given, self.then, self.reason = "file", "", "", ""
        self.annotation_line = annotation_line
        self.annotated = annotation is not None
        if self.annotated:
            self.parse_annotation(annotation)

    def parse_annotation(self, annotation):
        match = ANNOTATION.match(annotation.strip())
        if not match:
            raise ValueError(f"{self.where(self.annotation_line)}: the annotation must read "
                             f"'compile: file|body|no ...', not '{annotation.strip()}'")
        self.mode, rest = match.group(1), match.group(2)
        if self.mode == "no":
            self.reason = rest.strip()
            if not self.reason:
                raise ValueError(f"{self.where(self.annotation_line)}: 'compile: no' needs a "
                                 "reason")
            return
        parts = PARTS.match(rest)
        if not parts:
            raise ValueError(f"{self.where(self.annotation_line)}: after 'compile: {self.mode}' "
                             "only 'given: ...' then 'then: ...' may follow")
        self.given = (parts.group("given") or "").strip()
        self.then = (parts.group("then") or "").strip()

    def where(self, line=None):
        return f"{self.path}:{line or self.line}"


def read_comment(lines, index):
    """The text of the HTML comment starting at lines[index], and the index of its last line."""
    text = lines[index].lstrip()[len("<!--"):]
    while "-->" not in text and index + 1 < len(lines):
        index += 1
        text += "\n" + lines[index]
    return text.split("-->")[0].strip(), index


def read_fence(lines, index):
    """The language and text of the block fenced at lines[index], and the index of its end."""
    fence = FENCE.match(lines[index])
    indent = len(lines[index]) - len(lines[index].lstrip())
    end = index + 1
    while end < len(lines) and not lines[end].lstrip().startswith(fence.group(1)):
        end += 1
    text = "\n".join(line[min(indent, len(line) - len(line.lstrip())):]
                     for line in lines[index + 1:end])
    return fence.group(2).lower(), text, end


def read_blocks(path, shown_path):
    """The fenced blocks of a Markdown file, each with the annotation just before it."""
    with open(path, encoding="utf-8") as stream:
        lines = stream.read().split("\n")
    blocks, errors, shared_given = [], [], {}
    annotation, annotation_line, annotation_end = None, 0, -1
    misplaced = "the annotation is not on the line just before a code block"
    index = 0
    while index < len(lines):
        if lines[index].lstrip().startswith("<!-- compile"):
            start = index
            text, index = read_comment(lines, index)
            shared = SHARED_GIVEN.match(text)
            if shared:
                shared_given[shared.group(1)] = (start + 1, shared.group(2).strip())
            else:
                annotation, annotation_line, annotation_end = text, start + 1, index
        elif FENCE.match(lines[index]):
            language, text, end = read_fence(lines, index)
            own = annotation if annotation_end == index - 1 else None
            if annotation is not None and own is None:
                errors.append(f"{shown_path}:{annotation_line}: {misplaced}")
            try:
                blocks.append(Block(shown_path, index + 1, language, text, own, annotation_line))
            except ValueError as error:
                errors.append(str(error))
            annotation, index = None, end
        elif annotation is not None and lines[index].strip():
            errors.append(f"{shown_path}:{annotation_line}: {misplaced}")
            annotation = None
        index += 1
    for block in blocks:
        try:
            block.given, block.then = (expand(block.given, shared_given, block),
                                       expand(block.then, shared_given, block))
        except ValueError as error:
            errors.append(str(error))
    return blocks, errors


def expand(text, shared_given, block):
    """`text` with every @NAME replaced by its compile-given text."""
    def replace(match):
        if match.group(1) not in shared_given:
            raise ValueError(f"{block.where(block.annotation_line)}: no compile-given "
                             f"'{match.group(1)}' in this file")
        line, given = shared_given[match.group(1)]
        return line_marker(line, block.path) + given + "\n"
    return re.sub(r"@(\w+)", replace, text)


def line_marker(line, path):
    return f'#line {line} "{path}"\n'


def source_of(block, language):
    """The file to compile for a block, and its suffix."""
    given = block.given and line_marker(block.annotation_line, block.path) + block.given + "\n"
    code = given + line_marker(block.line + 1, block.path) + block.text + "\n" + block.then + "\n"
    if language == "fortran":
        if block.mode == "body":
            code = FORTRAN_BODY_START + code + "end subroutine snippet\n"
        return code, ".F90"
    prelude, suffix = (C_PRELUDE, ".c") if language == "c" else (CPP_PRELUDE, ".cpp")
    if block.mode == "body":
        code = "void snippet(void) {\n" + code + "}\n"
    return prelude + code, suffix


def compile_block(block, language, compilers, work, index, root):
    """None when the block compiles, else the compiler's output (which quotes the Markdown
    lines when run in `root`, the directory the #line paths are relative to)."""
    source, suffix = source_of(block, language)
    path = os.path.join(work, f"block{index}_line{block.line}{suffix}")
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(source)
    result = subprocess.run(compilers[language] + ["-fsyntax-only", path], capture_output=True,
                            text=True, cwd=root, check=False)
    return None if result.returncode == 0 else (result.stdout + result.stderr).strip()


def markdown_line(message):
    """(file, line) of a message that starts with 'file:line:', to list them in order."""
    path, line = message.split(":", 2)[:2]
    return path, int(line)


def check_block(block, compilers, work, index, root):
    """What became of a block: 'compiled', 'failed', 'not compiled', 'skipped' or 'other'
    (a language that is not compiled), and the message that says so."""
    language = C_LANGUAGES.get(block.language)
    if language is None:
        if block.language in OTHER_LANGUAGES:
            if block.annotated and block.mode != "no":
                return "failed", (f"{block.where()}: a '{block.language}' block is not "
                                  f"compiled: 'compile: {block.mode}' is misplaced")
            return "other", None
        named = f"the unknown language '{block.language}'" if block.language else "no language"
        return "failed", (f"{block.where()}: a code block with {named}: name it (c, cpp, "
                          "fortran, sh, ...)")
    if block.mode == "no":
        return "not compiled", f"{block.where()}: not compiled: {block.reason}"
    if language not in compilers:
        return "skipped", (f"{block.where()}: {language} block not compiled (this build has no "
                           "Fortran compiler)")
    error = compile_block(block, language, compilers, work, index, root)
    if error is None:
        return "compiled", None
    return "failed", (f"{block.where()}: this {language} block (compile: {block.mode}) does not "
                      f"compile:\n{error}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mpicc", required=True)
    parser.add_argument("--mpicxx", required=True)
    parser.add_argument("--mpifort", help="without it Fortran blocks are reported, not compiled")
    parser.add_argument("--fortran-modules", help="the directory of flexmpi's .mod files")
    parser.add_argument("--include", required=True, help="flexmpi's include/ directory")
    parser.add_argument("--root", default=".", help="paths in messages are relative to it")
    parser.add_argument("markdown", nargs="+")
    args = parser.parse_args()

    include = ["-I", os.path.abspath(args.include)]
    compilers = {"c": [args.mpicc, "-std=c11"] + C_WARNINGS + include,
                 "cpp": [args.mpicxx, "-std=c++20"] + C_WARNINGS + include}
    if args.mpifort:
        modules = ["-I", os.path.abspath(args.fortran_modules)] if args.fortran_modules else []
        compilers["fortran"] = [args.mpifort, "-cpp", "-ffree-line-length-none"] + include + modules

    failures, compiled, not_compiled, skipped = [], 0, [], []
    outcomes = {"failed": failures, "not compiled": not_compiled, "skipped": skipped}
    with tempfile.TemporaryDirectory(prefix="doc_snippets_") as work:
        for markdown in args.markdown:
            blocks, errors = read_blocks(markdown, os.path.relpath(markdown, args.root))
            failures += errors
            for index, block in enumerate(blocks):
                outcome, message = check_block(block, compilers, work, index, args.root)
                if outcome == "compiled":
                    compiled += 1
                elif message:
                    outcomes[outcome].append(message)
    failures.sort(key=markdown_line)
    for line in not_compiled + skipped + [f"FAIL {failure}" for failure in failures]:
        print(line)
    print(f"{compiled} blocks compiled, {len(not_compiled)} marked not compiled, "
          f"{len(skipped)} skipped, {len(failures)} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
