#!/usr/bin/env python3
"""Writes flexmpi's PMPI wrappers from the one table, profiling/mpi_functions.def.

    generate_wrappers.py TABLE --mpi openmpi|mpich --c OUT.inc --fortran OUT.inc
    generate_wrappers.py TABLE --list-names
    generate_wrappers.py TABLE --check-doc docs/reference/pmpi.md

The C wrappers (MPI_Send ...) time PMPI_Send and count its bytes; the Fortran
wrappers (mpi_send_, mpi_send_f08_ ...) forward the caller's pointers to the
MPI library's own entry and count the same bytes from the values read as C
handles (interposition/fortran_binding.hpp says which entries each MPI needs).
Both evaluate the table's byte expression, so the two cannot count apart.
--list-names prints the table's functions and categories; --check-doc fails
unless the document's "Wrapped functions" lists exactly the table's, by category.
"""
import argparse
import re
import sys

# C parameter type -> (Fortran argument type, C value from the Fortran argument `f`).
# The value is an expression over the pointer the Fortran caller passed.
KINDS = {
    "const void*": ("void*", "fortran::buffer({f})"),
    "void*": ("void*", "fortran::buffer({f})"),
    "const char*": ("char*", None),  # a CHARACTER: its length follows the arguments
    "int": ("MPI_Fint*", "static_cast<int>(*{f})"),
    "int*": ("MPI_Fint*", "{f}"),
    "int[]": ("MPI_Fint*", "{f}"),
    "const int[]": ("MPI_Fint*", "{f}"),
    "MPI_Aint": ("MPI_Aint*", "*{f}"),
    "MPI_Offset": ("MPI_Offset*", "*{f}"),
    "const MPI_Aint[]": ("MPI_Aint*", None),
    "MPI_Comm": ("MPI_Fint*", "PMPI_Comm_f2c(*{f})"),
    "MPI_Datatype": ("MPI_Fint*", "PMPI_Type_f2c(*{f})"),
    "const MPI_Datatype[]": ("MPI_Fint*", "fortran::TypeArray{{{f}}}"),
    "MPI_Op": ("MPI_Fint*", "PMPI_Op_f2c(*{f})"),
    "MPI_Win": ("MPI_Fint*", None),
    "MPI_File": ("MPI_Fint*", None),
    "MPI_File*": ("MPI_Fint*", None),
    "MPI_Info": ("MPI_Fint*", None),
    "MPI_Group": ("MPI_Fint*", None),
    "MPI_Message*": ("MPI_Fint*", None),
    "MPI_Request*": ("MPI_Fint*", "fortran::RequestArray{{{f}}}"),
    "MPI_Request[]": ("MPI_Fint*", "fortran::RequestArray{{{f}}}"),
    "MPI_Status*": ("MPI_Fint*", None),  # see status_used
    "MPI_Status[]": ("MPI_Fint*", None),
}
BUFFERS = {"const void*", "void*"}


class Parameter:
    def __init__(self, declaration):
        match = re.fullmatch(r"(.*?)\s*\b(\w+)\s*(\[\])?", declaration.strip())
        if not match:
            sys.exit(f"generate_wrappers: cannot read parameter '{declaration}'")
        self.name = match.group(2)
        self.type = re.sub(r"\s+\*", "*", match.group(1).strip()) + (match.group(3) or "")
        if self.type not in KINDS:
            sys.exit(f"generate_wrappers: no Fortran kind for '{self.type} {self.name}'")
        self.fortran_type, self.fortran_value = KINDS[self.type]

    def c_declaration(self):
        if self.type.endswith("[]"):
            return f"{self.type[:-2]} {self.name}[]"
        return f"{self.type} {self.name}"


def split_top_level(text):
    """The comma-separated parts of `text` outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    parts.append(current.strip())
    return parts


class Function:
    def __init__(self, arguments):
        if len(arguments) != 5:
            sys.exit(f"generate_wrappers: FLEXMPI_WRAP needs 5 arguments: {arguments}")
        self.name, self.category, self.comm, self.bytes, parameters = arguments
        self.parameters = [Parameter(p) for p in split_top_level(parameters.strip()[1:-1])]
        self.lower = self.name.lower()

    def uses(self, name):
        return re.search(rf"(?<![\w.>]){name}\b", self.bytes) is not None

    def status(self):
        """The status parameter the byte rule reads, if any."""
        return next((p for p in self.parameters if p.type == "MPI_Status*" and self.uses(p.name)),
                    None)

    def has_buffer(self):
        return any(p.type in BUFFERS for p in self.parameters)


def read_table(path):
    text = re.sub(r"//[^\n]*", "", open(path, encoding="utf-8").read())
    functions, position = [], 0
    while (start := text.find("FLEXMPI_WRAP(", position)) >= 0:
        depth, end = 0, start + len("FLEXMPI_WRAP")
        for end in range(end, len(text)):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
        functions.append(Function(split_top_level(text[start + len("FLEXMPI_WRAP("):end])))
        position = end + 1
    return functions


def substitute(expression, replacements):
    for name, value in replacements.items():
        expression = re.sub(rf"(?<![\w.>]){name}\b", lambda _: value, expression)
    return expression


def c_wrapper(function):
    """extern "C" int MPI_Name(...): times PMPI_Name, counts the table's bytes."""
    setup, replacements = [], {}
    arguments = [p.name for p in function.parameters]
    status = function.status()
    if status is not None:
        setup.append("  MPI_Status local_status;")
        setup.append(f"  MPI_Status* const status_used = {status.name} == MPI_STATUS_IGNORE ? "
                     f"&local_status : {status.name};")
        arguments[function.parameters.index(status)] = "status_used"
        replacements[status.name] = "status_used"
    if "message_before" in function.bytes:
        setup.append("  const MPI_Message message_before = *message;")
    declaration = ", ".join(p.c_declaration() for p in function.parameters)
    return "\n".join([
        f'extern "C" int MPI_{function.name}({declaration}) {{', *setup,
        f"  return profiled(",
        f"      MpiOp::{function.name}, {function.comm},",
        f"      [&] {{ return PMPI_{function.name}({', '.join(arguments)}); }},",
        f"      [&]([[maybe_unused]] const CommShape& shape) -> Bytes {{",
        f"        return {substitute(function.bytes, replacements)};",
        "      });", "}", ""])


def fortran_signature(function):
    """The Fortran entry's parameters: every argument by reference, then
    ierror, then the lengths of CHARACTER arguments."""
    parameters = [f"{p.fortran_type} f_{p.name}" for p in function.parameters]
    parameters.append("MPI_Fint* ierror")
    parameters += [f"std::size_t f_{p.name}_length" for p in function.parameters
                   if p.type == "const char*"]
    return parameters


def fortran_body(function):
    """template <Binding> fortran_Name(entry, arguments...): the shared body."""
    setup, replacements = [], {}
    forwarded = [f"f_{p.name}" for p in function.parameters] + ["code"]
    forwarded += [f"f_{p.name}_length" for p in function.parameters if p.type == "const char*"]
    for p in function.parameters:
        if function.uses(p.name) and p.type != "MPI_Status*":
            if p.fortran_value is None:
                sys.exit(f"generate_wrappers: {function.name}'s bytes read {p.name}, "
                         "which has no C value")
            replacements[p.name] = p.fortran_value.format(f=f"f_{p.name}")
    status = function.status()
    if status is not None:
        setup.append("  MPI_Fint local_status[fortran::kStatusSize];")
        setup.append(f"  MPI_Fint* const status_used = fortran::is_status_ignore(binding, "
                     f"f_{status.name}) ? local_status : f_{status.name};")
        forwarded[function.parameters.index(status)] = "status_used"
        replacements[status.name] = "fortran::status_to_c(binding, status_used)"
    if "message_before" in function.bytes:
        setup.append("  const MPI_Message message_before = PMPI_Message_f2c(*f_message);")
    comm = function.comm
    if any(p.name == comm for p in function.parameters):
        comm = f"PMPI_Comm_f2c(*f_{comm})"
    entry = f"{function.name}_entry"
    return "\n".join([
        f"using {entry} = void({', '.join(fortran_signature(function))});",
        "template <fortran::Binding binding>",
        f"void fortran_{function.name}({entry}* pmpi, {', '.join(fortran_signature(function))}) {{",
        "  MPI_Fint local_ierror = MPI_SUCCESS;",
        "  MPI_Fint* const code = ierror != nullptr ? ierror : &local_ierror;", *setup,
        "  profiled(",
        f"      MpiOp::{function.name}, {comm},",
        "      [&] {",
        f"        pmpi({', '.join(forwarded)});",
        "        return static_cast<int>(*code);",
        "      },",
        "      [&]([[maybe_unused]] const CommShape& shape) -> Bytes {",
        f"        return {substitute(function.bytes, replacements)};",
        "      });", "}", ""])


def fortran_entry(function, binding, symbol, target):
    parameters = fortran_signature(function)
    arguments = [re.sub(r".*\b(\w+)$", r"\1", p) for p in parameters]
    return (f'extern "C" void {symbol}({", ".join(parameters)}) {{\n'
            f"  fortran_{function.name}<fortran::Binding::{binding}>({target}, "
            f"{', '.join(arguments)});\n}}\n")


def open_mpi_entries(function):
    """Open MPI: mpif.h/`use mpi` under four spellings and mpi_f08, forwarded
    to the PMPI entries Open MPI exports."""
    entry, lower = f"{function.name}_entry", function.lower
    text = f'extern "C" {entry} pmpi_{lower}_, pmpi_{lower}_f08_;\n'
    text += fortran_entry(function, "mpif", f"mpi_{lower}_", f"pmpi_{lower}_")
    for spelling in (f"mpi_{lower}", f"mpi_{lower}__", f"MPI_{function.name.upper()}"):
        text += f'extern "C" {entry} {spelling} __attribute__((alias("mpi_{lower}_")));\n'
    text += fortran_entry(function, "f08", f"mpi_{lower}_f08_", f"pmpi_{lower}_f08_")
    return text


def mpich_entries(function):
    """MPICH: mpi_f08's entries without a choice buffer alone call PMPI_
    directly; forwarded to MPICH's own definition."""
    if function.has_buffer():
        return ""
    symbol = f"mpi_{function.lower}_f08_"
    target = (f"[] {{ static auto* const next = fortran::next_definition<{function.name}_entry>"
              f'("{symbol}"); return next; }}()')
    return fortran_entry(function, "f08", symbol, target)


def fortran_wrappers(functions, mpi):
    entries = open_mpi_entries if mpi == "openmpi" else mpich_entries
    parts = []
    for function in functions:
        text = entries(function)
        if text:
            parts.append(f"// MPI_{function.name}\n{fortran_body(function)}\n{text}")
    return "\n".join(parts)


def check_doc(functions, path):
    """The document's bullets "- **category**: `MPI_X`, ..." under
    "## Wrapped functions" against the table; returns the differences."""
    text = open(path, encoding="utf-8").read()
    section = text.split("## Wrapped functions", 1)[-1].split("\n## ", 1)[0]
    listed = {}
    for category, names in re.findall(r"^- \*\*(\w+)\*\*[^:]*:(.*?)(?=^- |^$)", section,
                                      re.M | re.S):
        listed.update({name: category for name in re.findall(r"`(MPI_\w+)`", names)})
    table = {f"MPI_{f.name}": f.category for f in functions}
    problems = [f"{name} ({category}) is not in {path}" for name, category in table.items()
                if name not in listed]
    problems += [f"{name} is listed in {path} but not wrapped" for name in listed
                 if name not in table]
    problems += [f"{name} is listed under {listed[name]}, the table says {category}"
                 for name, category in table.items() if listed.get(name, category) != category]
    return problems


HEADER = ("// Generated by src/interposition/generate_wrappers.py from "
          "src/profiling/mpi_functions.def: edit those, not this file.\n\n")


def write(path, text):
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table")
    parser.add_argument("--mpi", choices=["openmpi", "mpich"])
    parser.add_argument("--c")
    parser.add_argument("--fortran")
    parser.add_argument("--list-names", action="store_true")
    parser.add_argument("--check-doc")
    args = parser.parse_args()
    functions = read_table(args.table)
    if args.list_names:
        print("\n".join(f"MPI_{f.name} {f.category}" for f in functions))
        return
    if args.check_doc:
        problems = check_doc(functions, args.check_doc)
        print("\n".join(problems) or f"{args.check_doc} lists the {len(functions)} functions")
        sys.exit(1 if problems else 0)
    if args.c:
        write(args.c, HEADER + "\n".join(c_wrapper(f) for f in functions))
    if args.fortran:
        write(args.fortran, HEADER + fortran_wrappers(functions, args.mpi))


if __name__ == "__main__":
    main()
