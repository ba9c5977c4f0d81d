#!/usr/bin/env python3
"""Tests of flexrun, flexmpi-plot, flexmpi-calibrate and the installed package
(tests/tools/CMakeLists.txt).

    tools_test.py --flexrun PATH --plot PATH --probe PATH --mpi openmpi|mpich --work DIR CHECK

Each CHECK is one CTest test; it works in DIR/CHECK and exits non-zero with
a message saying what was expected and what happened.
"""

import argparse
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHECKS = {}


class Failure(Exception):
    pass


def check(name):
    def register(function):
        CHECKS[name] = function
        return function
    return register


def expect(condition, message):
    if not condition:
        raise Failure(message)


def run(command, env=None, timeout=120, cwd=None):
    """Runs a command, echoing it and its output (CTest shows them on failure)."""
    print("$ " + " ".join(shlex.quote(str(word)) for word in command), flush=True)
    result = subprocess.run([str(word) for word in command], env=env, cwd=cwd, timeout=timeout,
                            stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if result.stdout:
        print(result.stdout, end="" if result.stdout.endswith("\n") else "\n")
    if result.stderr:
        print("[stderr] " + result.stderr.replace("\n", "\n[stderr] ").rstrip("[stderr] "))
    print(f"[exit {result.returncode}]", flush=True)
    return result


def settings_table(args):
    """{option: (variable, default, accepted)} from `flexrun --settings-table`."""
    result = run([args.flexrun, "--settings-table"])
    expect(result.returncode == 0, "flexrun --settings-table failed")
    table = {}
    for line in result.stdout.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        variable, option = cells[0].strip("`"), cells[1].strip("`")
        expect(option.startswith("--"), f"bad settings-table line: {line}")
        table[option[2:]] = (variable, cells[2], cells[3])
    expect(table, "flexrun --settings-table printed no setting")
    return table


def fake_mpiexec(args, flavour):
    """A stand-in launcher: answers --version like `flavour` and records how it was run."""
    path = os.path.join(args.workdir, f"fake-mpiexec-{flavour}")
    banner = {"openmpi": "mpiexec (OpenRTE) 4.1.4\\n\\nReport bugs to http://www.open-mpi.org/",
              "mpich": "HYDRA build details:\\n    Version:    4.0.2\\n"}[flavour]
    with open(path, "w") as stream:
        stream.write(f"""#!{sys.executable}
import json, os, sys
if sys.argv[1:] == ["--version"]:
    print("{banner}")
    sys.exit(0)
with open(os.environ["FAKE_MPIEXEC_RECORD"], "w") as out:
    json.dump({{"argv": sys.argv[1:], "env": dict(os.environ)}}, out)
""")
    os.chmod(path, 0o755)
    return path


def clean_environment():
    """The test's environment without any FLEXMPI_* or launcher-tuning variable."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("FLEXMPI_", "OMPI_MCA_rmaps", "OMPI_MCA_mpi_yield", "OMPI_ALLOW",
                                 "OMPI_MCA_pml", "PMIX_MCA_gds"))}


def mpi_environment():
    """The test's environment (with the MPI settings of CTest) without FLEXMPI_* variables."""
    return {k: v for k, v in os.environ.items() if not k.startswith("FLEXMPI_")}


def dry_run_exports(output):
    """{variable: value} of the export lines of a --dry-run."""
    exports = {}
    for line in output.splitlines():
        if line.startswith("export "):
            words = shlex.split(line[len("export "):], comments=True)
            name, _, value = words[0].partition("=")
            exports[name] = value
    return exports


def dry_run_command(output):
    lines = [line for line in output.splitlines() if line and not line.startswith(("#", "export "))]
    expect(len(lines) == 1, f"expected one command line in the dry run, got {lines}")
    return shlex.split(lines[0])


# Option values every table is expected to accept.
SAMPLE_VALUES = {
    "sampling-interval": "7", "imbalance-threshold": "0.2", "dedicated-threshold": "0.1",
    "k": "5", "lb-model": "nnz", "partitioner": "rcp", "metric": "work", "policy": "lb",
    "goal": "0.75", "goal-speedup": "0.35", "constraint": "energy",
    "scheduler": "balance_occupied",
    "trace": "/tmp/some trace.jsonl", "emulate-speed": "1.0,0.5", "emulate-mode": "sleep",
    "emulate-unit-seconds": "2.5e-08",
    "report": "-", "log-level": "warn", "max-procs": "8",
    "checkpoint": "/tmp/some checkpoint.h5", "checkpoint-every": "60s",
    "restart": "/tmp/some checkpoint.h5",
}


@check("flexrun-dry-run")
def flexrun_dry_run(args):
    table = settings_table(args)
    hostfile = os.path.join(args.workdir, "cluster.txt")
    with open(hostfile, "w") as stream:
        stream.write("# test cluster\nnode1:C1:2:1.5\nnode2:C2:4\n")
    schedule = os.path.join(args.workdir, "schedule.txt")
    with open(schedule, "w") as stream:
        stream.write("# test schedule\n100 spawn 2 C1\n300 remove 1\n")
    classes = os.path.join(args.workdir, "classes.txt")
    with open(classes, "w") as stream:
        stream.write("# test node classes\nC1 1.90 0.095\nC2 4.62 0.462 95\n")
    values = dict(SAMPLE_VALUES, hostfile=hostfile, schedule=schedule)
    values["node-classes"] = classes
    work_profile = os.path.join(args.workdir, "earlier run.jsonl")
    with open(work_profile, "w") as stream:
        stream.write('{"interval": 0, "iterations": 10, "metric_count": [5, 7]}\n')
    values["profile"] = work_profile
    server_uri = os.path.join(args.workdir, "ompi-server.uri")
    with open(server_uri, "w") as stream:
        stream.write("1234.0;tcp://127.0.0.1:5678\n")
    values["slurm-join"] = server_uri  # needs resources=slurm: a Slurm job's environment below
    values["resources"] = "slurm"
    values["drum-topology"] = os.path.join(args.source_dir, "tests", "machine", "fixtures",
                                           "fig3_5.xml")
    # A profile flexmpi-calibrate --quick wrote on the 2-vCPU development VM.
    values["machine-profile"] = os.path.join(args.source_dir, "tests", "tools",
                                             "machine_profile.json")
    for option, (_, default, _) in table.items():
        # A setting added later is tried with its default, when it has one.
        if option not in values:
            expect(not default.startswith("("), f"no sample value for the new setting --{option}: "
                   "add one to SAMPLE_VALUES in tests/tools/tools_test.py")
            values[option] = default
    program = ["./app", "-n", "3", "a b", "--trace=not-for-flexrun", "--", "x"]
    command = [args.flexrun, "--dry-run", "-n", "1000"]
    command += [f"--{option}={values[option]}" for option in table] + program
    env = clean_environment()
    env.update(SLURM_JOB_ID="42", SLURM_JOB_PARTITION="flex", SLURM_JOB_NODELIST="localhost",
               SLURM_JOB_CPUS_PER_NODE="2")
    result = run(command, env=env)
    expect(result.returncode == 0, "flexrun --dry-run failed")
    exports = dry_run_exports(result.stdout)
    for option, (variable, _, _) in table.items():
        expect(exports.get(variable) == values[option],
               f"--{option}={values[option]} should set {variable}, dry run exports "
               f"{variable}={exports.get(variable)!r}")
    words = dry_run_command(result.stdout)
    expect(words[-len(program):] == program,
           f"the program and its arguments must be passed untouched: {words[-len(program):]}")
    expect(words[-len(program) - 2:-len(program)] == ["-n", "1000"], f"-n 1000 missing: {words}")
    forwarded = [words[i + 1] for i, word in enumerate(words[:-len(program)]) if word == "-x"]
    if args.mpi == "openmpi":
        expect(sorted(forwarded) == sorted(v for v, _, _ in table.values()),
               f"Open MPI: every FLEXMPI_* variable must be forwarded with -x, got {forwarded}")
        expect(f"--ompi-server file:{values['slurm-join']}" in " ".join(words),
               f"FLEXMPI_SLURM_JOIN: mpiexec must get --ompi-server file:URI, got {words}")
        expect(exports.get("OMPI_MCA_rmaps_base_oversubscribe") == "1" and
               exports.get("OMPI_MCA_mpi_yield_when_idle") == "1",
               "1000 processes > cores: oversubscription and yield_when_idle must be set")
        expect(exports.get("OMPI_MCA_pml") == "ob1" and exports.get("PMIX_MCA_gds") == "hash",
               "Open MPI: the fast-spawn transport settings must be set by default")
        result = run(command[:2] + ["--keep-mpi-transport"] + command[2:], env=env)
        expect(result.returncode == 0, "flexrun --dry-run --keep-mpi-transport failed")
        kept = dry_run_exports(result.stdout)
        expect("OMPI_MCA_pml" not in kept and "PMIX_MCA_gds" not in kept,
               "--keep-mpi-transport must leave Open MPI's transport settings alone")
        if os.geteuid() == 0:
            expect(exports.get("OMPI_ALLOW_RUN_AS_ROOT") == "1" and
                   exports.get("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM") == "1",
                   "running as root with Open MPI: OMPI_ALLOW_RUN_AS_ROOT* must be set")
    else:
        expect(not forwarded, f"MPICH forwards the environment itself: no -x expected: {words}")

    # A user's own choice is kept; an inherited FLEXMPI_* setting is passed on
    # unless an option overrides it.
    env = dict(clean_environment(), OMPI_MCA_rmaps_base_oversubscribe="0", FLEXMPI_K="4",
               FLEXMPI_LOG_LEVEL="error")
    result = run([args.flexrun, "--dry-run", "-n", "1000", "--log-level=debug", "./app"], env=env)
    expect(result.returncode == 0, "flexrun --dry-run failed")
    exports = dry_run_exports(result.stdout)
    expect("OMPI_MCA_rmaps_base_oversubscribe" not in exports,
           "flexrun must not override OMPI_MCA_rmaps_base_oversubscribe set by the user")
    expect(exports.get("FLEXMPI_K") == "4", "inherited FLEXMPI_K=4 must be passed on")
    expect(exports.get("FLEXMPI_LOG_LEVEL") == "debug", "--log-level must override the environment")

    # Open MPI's spelling -np is flexrun's -n; the program's own -np stays.
    result = run([args.flexrun, "--dry-run", "-np", "3", "./app", "-np", "5"], env=env)
    expect(result.returncode == 0, "flexrun --dry-run -np 3 failed")
    words = dry_run_command(result.stdout)
    expect(words[-5:] == ["-n", "3", "./app", "-np", "5"],
           f"-np 3 must launch 3 processes and leave the program's -np alone: {words}")

    # --help lists every setting with its variable and default, from the table.
    result = run([args.flexrun, "--help"])
    expect(result.returncode == 0, "flexrun --help failed")
    for option, (variable, default, _) in table.items():
        expect(f"--{option}" in result.stdout and f"{variable}, default {default}" in result.stdout,
               f"flexrun --help must list --{option} with {variable} and its default {default}")


@check("flexrun-exec")
def flexrun_exec(args):
    """flexrun really execs the launcher with the settings in its environment."""
    for flavour in ("openmpi", "mpich"):
        launcher = fake_mpiexec(args, flavour)
        record = os.path.join(args.workdir, f"record-{flavour}.json")
        env = dict(clean_environment(), FAKE_MPIEXEC_RECORD=record, FLEXMPI_K="4")
        result = run([args.flexrun, f"--mpiexec={launcher}", "-n", "3", "--sampling-interval=9",
                      "--mpiexec-arg=--bind-to", "--mpiexec-arg=none", "./app", "--k=1", "'q'"],
                     env=env)
        expect(result.returncode == 0, f"flexrun with a {flavour} launcher failed")
        with open(record) as stream:
            seen = json.load(stream)
        expect(seen["env"].get("FLEXMPI_SAMPLING_INTERVAL") == "9",
               "the launcher must get FLEXMPI_SAMPLING_INTERVAL=9 in its environment")
        expect(seen["env"].get("FLEXMPI_K") == "4",
               "the inherited FLEXMPI_K must reach the launcher")
        tail = ["--bind-to", "none", "-n", "3", "./app", "--k=1", "'q'"]
        expect(seen["argv"][-len(tail):] == tail, f"launcher arguments: {seen['argv']}")
        if flavour == "openmpi":
            expect(seen["argv"][:4] == ["-x", "FLEXMPI_K", "-x", "FLEXMPI_SAMPLING_INTERVAL"] or
                   seen["argv"][:4] == ["-x", "FLEXMPI_SAMPLING_INTERVAL", "-x", "FLEXMPI_K"],
                   f"Open MPI: settings must be forwarded with -x: {seen['argv']}")
        else:
            expect(seen["argv"] == tail, f"MPICH: no -x expected: {seen['argv']}")


@check("flexrun-bad-value")
def flexrun_bad_value(args):
    table = settings_table(args)
    launcher = fake_mpiexec(args, "openmpi")
    record = os.path.join(args.workdir, "launched.json")
    env = dict(clean_environment(), FAKE_MPIEXEC_RECORD=record)
    cases = [("sampling-interval", "0"), ("imbalance-threshold", "1.5"), ("log-level", "loud"),
             ("emulate-speed", "1.0,fast"), ("hostfile", os.path.join(args.workdir, "missing.txt"))]
    for option, value in cases:
        variable, _, accepted = table[option]
        result = run([args.flexrun, f"--mpiexec={launcher}", "-n", "2", f"--{option}={value}",
                      "./app"], env=env)
        expect(result.returncode == 2, f"--{option}={value}: exit code 2 expected")
        expect(f"--{option}" in result.stderr and variable in result.stderr and
               accepted in result.stderr,
               f"--{option}={value}: the message must name --{option}, {variable} and what is "
               f"accepted ({accepted})")
    # A bad value inherited from the environment, and a misspelt variable.
    for name, value, needle in [("FLEXMPI_SAMPLING_INTERVAL", "ten", "FLEXMPI_SAMPLING_INTERVAL"),
                                ("FLEXMPI_SAMPLING_INTERVALL", "10", "unknown setting")]:
        result = run([args.flexrun, f"--mpiexec={launcher}", "-n", "2", "./app"],
                     env=dict(env, **{name: value}))
        expect(result.returncode == 2 and needle in result.stderr,
               f"{name}={value} in the environment: exit 2 and a message with '{needle}' expected")
    for command in ([args.flexrun, "--no-such-option", "./app"], [args.flexrun, "-n", "2"]):
        result = run(command, env=env)
        expect(result.returncode == 2, f"{command[1:]}: usage error, exit code 2 expected")
    # An empty value is refused, not taken as a missing one: CLI11 would read
    # "--trace= -n 2 ./app" as --trace=-n and run "2".
    for option in ["--" + name for name in table] + ["-n", "--np", "--mpiexec-arg"]:
        for empty in ([f"{option}="], [option, ""]):
            result = run([args.flexrun, f"--mpiexec={launcher}"] + empty + ["-n", "2", "./app"],
                         env=env)
            expect(result.returncode == 2 and
                   result.stderr == f"flexrun: {option} needs a value\n",
                   f"{empty}: exit 2 and 'flexrun: {option} needs a value' expected")
    result = run([args.flexrun, "--mpiexec=", "-n", "2", "./app"], env=env)
    expect(result.returncode == 2 and result.stderr == "flexrun: --mpiexec needs a value\n",
           "--mpiexec=: exit 2 and 'flexrun: --mpiexec needs a value' expected")
    for count in ("0", "-1", "zero", "2.5", "99999999999"):
        result = run([args.flexrun, f"--mpiexec={launcher}", "-n", count, "./app"], env=env)
        wanted = f"flexrun: -n {count}: expected a number of processes >= 1\n"
        expect(result.returncode == 2 and result.stderr == wanted,
               f"-n {count}: exit 2 and {wanted.strip()!r} expected")
    expect(not os.path.exists(record), "nothing may be launched when a value is invalid")


def executable_script(path, body):
    with open(path, "w") as stream:
        stream.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)
    return path


def process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@check("flexrun-launcher-timeout")
def flexrun_launcher_timeout(args):
    """A launcher that never answers --version: flexrun names it, ends, and kills it."""
    pid_file = os.path.join(args.workdir, "sleeper.pid")
    launcher = executable_script(os.path.join(args.workdir, "silent-mpiexec"),
                                 f"sleep 600 &\necho $! > {shlex.quote(pid_file)}\nwait\n")
    script, marker = marker_script(args)
    started = time.monotonic()
    result = run([args.flexrun, f"--mpiexec={launcher}", "-n", "2", script],
                 env=clean_environment(), timeout=60)
    seconds = time.monotonic() - started
    wanted = (f"flexrun: the launcher '{launcher}' did not answer '--version' within 10 s "
              f"and was killed (give the launcher with --mpiexec=PATH)\n")
    expect(result.returncode == 127 and result.stderr == wanted,
           f"exit 127 and {wanted.strip()!r} expected")
    expect(seconds < 30, f"flexrun took {seconds:.0f} s to give up on the launcher")
    expect(not os.path.exists(marker), "nothing may run when the launcher does not answer")
    with open(pid_file) as stream:
        sleeper = int(stream.read())
    for _ in range(50):  # the kill is asynchronous to the reaping of its parent
        if not process_alive(sleeper):
            break
        time.sleep(0.1)
    expect(not process_alive(sleeper), "what the launcher started must be killed with it")


@check("flexrun-launcher-runs-nothing")
def flexrun_launcher_runs_nothing(args):
    """/bin/true as launcher exits 0 without running the program: refused as no launcher."""
    script, marker = marker_script(args)
    result = run([args.flexrun, "--mpiexec=/bin/true", "-n", "2", script], env=clean_environment())
    expect(result.returncode == 127 and
           result.stderr.startswith("flexrun: '/bin/true' is no MPI launcher: its --version (") and
           "(Open MPI's mpiexec, MPICH's Hydra, Slurm's srun)" in result.stderr,
           "--mpiexec=/bin/true: exit 127 and a message that it is no MPI launcher expected")
    expect(not os.path.exists(marker), "the program cannot have run")
    result = run([args.flexrun, "--mpiexec=/bin/true", "--dry-run", "-n", "2", script],
                 env=clean_environment())
    expect(result.returncode == 0 and "not usable: '/bin/true' is no MPI launcher" in result.stdout,
           "a dry run prints the plan and says the launcher is not usable")


@check("flexrun-option-like-value")
def flexrun_option_like_value(args):
    """A value that looks like an option is taken only with '='."""
    launcher = fake_mpiexec(args, "openmpi")
    record = os.path.join(args.workdir, "launched.json")
    env = dict(clean_environment(), FAKE_MPIEXEC_RECORD=record)
    for option, word in (("--trace", "--dry-run"), ("--report", "-v"), ("--mpiexec-arg", "--host"),
                         ("-n", "--dry-run")):
        result = run([args.flexrun, f"--mpiexec={launcher}", option, word, "-n", "2", "./app"],
                     env=env, cwd=args.workdir)
        spelled = "--np" if option == "-n" else option
        wanted = (f"flexrun: {option} needs a value, and '{word}' is an option: write "
                  f"{spelled}={word} for a file (or value) of that name\n")
        expect(result.returncode == 2 and result.stderr == wanted,
               f"{option} {word}: exit 2 and {wanted.strip()!r} expected")
        expect(not os.path.exists(record), f"{option} {word}: nothing may be launched")
        expect(not os.path.exists(os.path.join(args.workdir, word)),
               f"{option} {word}: no file named {word} may be written")
    # With '=' the value is taken as it is; "-" (standard error) and numbers are values.
    result = run([args.flexrun, f"--mpiexec={launcher}", "--trace=--dry-run", "--report", "-",
                  "--imbalance-threshold", "0.2", "-n", "2", "./app"], env=env)
    expect(result.returncode == 0, "--trace=--dry-run --report - must launch")
    with open(record) as stream:
        seen = json.load(stream)
    expect(seen["env"].get("FLEXMPI_TRACE") == "--dry-run" and
           seen["env"].get("FLEXMPI_REPORT") == "-",
           "FLEXMPI_TRACE=--dry-run and FLEXMPI_REPORT=- expected in the launcher's environment")


@check("flexrun-double-dash")
def flexrun_double_dash(args):
    """'--' ends flexrun's options: a program whose name starts with '-' runs."""
    marker = os.path.join(args.workdir, "ran")
    executable_script(os.path.join(args.workdir, "-prog"),
                      f'echo "$@" > {shlex.quote(marker)}\n')
    launcher = fake_mpiexec(args, args.mpi)
    record = os.path.join(args.workdir, "launched.json")
    env = dict(clean_environment(), FAKE_MPIEXEC_RECORD=record)
    result = run([args.flexrun, f"--mpiexec={launcher}", "-n", "2", "--", "-prog", "-n", "3"],
                 env=env, cwd=args.workdir)
    expect(result.returncode == 0, "flexrun -n 2 -- -prog must launch")
    with open(record) as stream:
        argv = json.load(stream)["argv"]
    expect(argv[-5:] == ["-n", "2", "./-prog", "-n", "3"],
           f"the launcher must get the program as ./-prog, its arguments untouched: {argv}")
    result = run([args.flexrun, "-n", "2", "-prog"], env=env, cwd=args.workdir)
    expect(result.returncode == 2 and "unknown option '-prog'" in result.stderr,
           "without '--', -prog is an unknown option of flexrun")
    # Through the real launcher, the program runs.
    result = run([args.flexrun, "-n", "1", "--", "-prog", "a b"], env=mpi_environment(),
                 cwd=args.workdir)
    expect(result.returncode == 0 and os.path.exists(marker),
           "flexrun -n 1 -- -prog: the program must run")
    with open(marker) as stream:
        expect(stream.read() == "a b\n", "the program's argument must arrive untouched")


def probe_run(args, extra_options, probe_args, timeout=120):
    env = mpi_environment()
    return run([args.flexrun, "-n", "2"] + extra_options + [args.probe] + probe_args, env=env,
               timeout=timeout)


@check("flexrun-launch")
def flexrun_launch(args):
    trace = os.path.join(args.workdir, "trace.jsonl")
    result = probe_run(args, ["--sampling-interval=7", f"--trace={trace}", "--log-level=warn"],
                       ["--expect", "FLEXMPI_SAMPLING_INTERVAL=7", "--expect",
                        f"FLEXMPI_TRACE={trace}", "--expect", "FLEXMPI_LOG_LEVEL=warn",
                        "--iterations", "40", "--", "-n", "3", "a b"])
    expect(result.returncode == 0, "the 2-rank probe launched by flexrun failed")
    for rank in (0, 1):
        expect(f"probe: rank {rank}: FLEXMPI_SAMPLING_INTERVAL=7" in result.stdout,
               f"rank {rank} did not get FLEXMPI_SAMPLING_INTERVAL=7")
    # Only rank 0 echoes its arguments, but mpiexec may interleave rank 1's
    # lines between them, so compare rank 0's echo lines in order.
    echoed = [line for line in result.stdout.splitlines() if line.startswith("probe: argv[")]
    expect(echoed == ["probe: argv[0]=-n", "probe: argv[1]=3", "probe: argv[2]=a b"],
           "the program's arguments must arrive untouched")
    with open(trace) as stream:
        records = [json.loads(line) for line in stream if line.strip()]
    expect(len(records) == 40 // 7, f"40 iterations / 7 per interval: expected {40 // 7} trace "
           f"lines, got {len(records)}")
    expect(all(r["iterations"] == 7 and len(r["computation_time"]) == 2 for r in records),
           "every trace line must cover 7 iterations of 2 processes")


@check("flexrun-preload")
def flexrun_preload(args):
    """Profile-only mode: an MPI program that does not know flexmpi is profiled."""
    profile = os.path.join(args.workdir, "profile.json")
    result = run([args.flexrun, "-n", "2", "--preload", f"--report={profile}", args.plain],
                 env=mpi_environment())
    expect(result.returncode == 0 and "plain_mpi: sum 2" in result.stdout,
           "flexrun --preload -n 2 plain_mpi failed")
    expect(os.path.exists(profile), f"the profile {profile} was not written")
    with open(profile) as stream:
        text = stream.read()
    expect("MPI_Allreduce" in text, f"the profile does not mention MPI_Allreduce:\n{text[:500]}")


# Each MPI (by its FLEXMPI_MPI value): its name in flexrun's messages, its launcher and
# compiler (Debian's names, as CMakeLists.txt uses them) and its libflexmpi's file name.
MPIS = {"openmpi": ("Open MPI", "mpiexec.openmpi", "mpicc.openmpi", "libflexmpi.so.0"),
        "mpich": ("MPICH", "mpiexec.mpich", "mpicc.mpich", "libflexmpi_mpich.so.0")}
# The CMake package and pkg-config module of each MPI's build (CMakeLists.txt, install).
PACKAGES = {"openmpi": "flexmpi", "mpich": "flexmpi_mpich"}


def other_mpi(mpi):
    return "mpich" if mpi == "openmpi" else "openmpi"


def marker_script(args):
    """A program whose MPI is not visible (as a Python script's): it only leaves a file."""
    marker = os.path.join(args.workdir, "ran")
    script = os.path.join(args.workdir, "script.sh")
    with open(script, "w") as stream:
        stream.write(f"#!/bin/sh\ntouch {shlex.quote(marker)}\n")
    os.chmod(script, 0o755)
    return script, marker


def preloaded_library(argv):
    """The LD_PRELOAD a launcher is given (-x LD_PRELOAD=... or -genv LD_PRELOAD ...)."""
    for i, word in enumerate(argv):
        if word.startswith("LD_PRELOAD="):
            return word.split("=", 1)[1]
        if word == "LD_PRELOAD" and i > 0 and argv[i - 1] == "-genv":
            return argv[i + 1]
    return None


@check("flexrun-preload-mpi")
def flexrun_preload_mpi(args):
    """--preload with the other MPI's launcher is refused before anything runs; with
    this build's MPI, the launcher gets this build's libflexmpi."""
    own_name, _, _, own_library = MPIS[args.mpi]
    other = other_mpi(args.mpi)
    other_name, other_mpiexec, _, other_library = MPIS[other]
    other_launcher = shutil.which(other_mpiexec) or fake_mpiexec(args, other)
    script, marker = marker_script(args)
    env = clean_environment()
    # A program linked with this build's MPI, under the other MPI's launcher.
    result = run([args.flexrun, "--preload", f"--mpiexec={other_launcher}", "-n", "2", args.plain],
                 env=env)
    expect(result.returncode == 2 and "plain_mpi" not in result.stdout and
           f"is linked with {own_name}" in result.stderr and
           f"{other_launcher} runs {other_name}" in result.stderr,
           f"a {own_name} program under {other_mpiexec}: exit 2 and a message naming both MPIs")
    # A program whose MPI is not visible: the launcher's decides, and this build has no
    # libflexmpi for it.
    for dry_run in ([], ["--dry-run"]):
        result = run([args.flexrun, "--preload", f"--mpiexec={other_launcher}"] + dry_run +
                     ["-n", "2", script], env=env)
        wanted = (f"flexrun: --preload: {other_launcher} runs {other_name}, but this flexrun's "
                  f"libflexmpi (")
        expect(result.returncode == 2 and result.stderr.startswith(wanted) and
               f"is built for {own_name} and no {other_library} is installed beside it" in
               result.stderr and f"-DFLEXMPI_MPI={other}" in result.stderr and
               f"or use {own_name}'s launcher (--mpiexec={args.mpiexec})" in result.stderr,
               f"{other_mpiexec}{' --dry-run' if dry_run else ''}: exit 2 and '{wanted}...' "
               f"naming both MPIs expected")
        expect(not os.path.exists(marker), "nothing may run when --preload is refused")
    # This build's MPI: its own library, given to the launcher.
    record = os.path.join(args.workdir, "record.json")
    result = run([args.flexrun, "--preload", f"--mpiexec={fake_mpiexec(args, args.mpi)}", "-n", "2",
                  args.plain], env=dict(env, FAKE_MPIEXEC_RECORD=record))
    expect(result.returncode == 0, f"--preload with a {own_name} launcher failed")
    with open(record) as stream:
        preload = preloaded_library(json.load(stream)["argv"])
    expect(preload and os.path.basename(preload).startswith(own_library),
           f"the launcher must preload {own_library}, got LD_PRELOAD={preload}")


@check("plot-real-trace")
def plot_real_trace(args):
    trace = os.path.join(args.workdir, "trace.jsonl")
    result = run([args.flexrun, "-n", "2", "--sampling-interval=10", f"--trace={trace}",
                  "--emulate-speed=1.0,0.5", args.jacobi, "--size", "400", "--iterations", "200",
                  "--quiet"], env=mpi_environment(), timeout=120)
    expect(result.returncode == 0, "flexmpi-jacobi launched by flexrun failed")
    outdir = os.path.join(args.workdir, "plots")
    shutil.rmtree(outdir, ignore_errors=True)
    result = run([args.plot, trace, "-o", outdir])
    expect(result.returncode == 0, "flexmpi-plot failed on a real trace")
    paths = result.stdout.split()
    names = sorted(os.path.basename(p) for p in paths)
    for wanted in ("computation_time.png", "imbalance.png", "mpi_time.png", "overview.png"):
        expect(wanted in names, f"{wanted} missing from the printed paths {names}")
    # The move to 2:1 is judged on the blocks it made (do no harm), and plotted.
    with open(trace) as stream:
        judged = [r for r in map(json.loads, stream) if r.get("move_outcome")]
    expect(judged, "the rebalance of the 1.0/0.5 ranks was never judged (move_outcome)")
    expect("moves.png" in names, f"moves.png missing from the printed paths {names}")
    for path in paths:
        with open(path, "rb") as stream:
            expect(stream.read(8) == PNG_SIGNATURE, f"{path} is not a PNG file")
        expect(os.path.getsize(path) > 10000, f"{path} is suspiciously small")


@check("plot-malleable-trace")
def plot_malleable_trace(args):
    """flexmpi-plot on a real trace with a spawn and a removal (--describe: what it drew)."""
    trace = os.path.join(args.workdir, "trace.jsonl")
    schedule = os.path.join(args.workdir, "schedule.txt")
    with open(schedule, "w") as stream:
        stream.write("40 spawn 1\n80 remove 1\n")
    rows = 400
    result = run(["bash", os.path.join(args.source_dir, "tests/process/run_spawn_test.sh"), "60",
                  "3", args.flexrun, "-n", "2", "--policy=smp", "--max-procs=3", f"--schedule={schedule}",
                  "--sampling-interval=10", "--emulate-speed=1.0,0.5", f"--trace={trace}",
                  args.jacobi, "--size", rows, "--iterations", "120", "--quiet"],
                 env=mpi_environment(), timeout=240)
    expect(result.returncode == 0, "flexmpi-jacobi with a spawn and a removal failed")
    with open(trace) as stream:
        records = [json.loads(line) for line in stream if line.strip()]
    actions = [e["action"] for r in records for e in r.get("reconfigurations", [])]
    expect("spawn" in actions and "remove" in actions,
           f"the trace should show a spawn and a removal, shows {actions}")
    # Which decisions a run takes depends on its timing (under a sanitizer a run
    # decided only 'reconfigure'): with fewer than two kinds, a copy whose first
    # undecided interval is 'held' (a decision the balancer takes) is drawn.
    kinds = {r["decision"] for r in records if r.get("decision") not in (None, "", "none")}
    if len(kinds) < 2:
        undecided = [r for r in records if r.get("decision") in (None, "", "none")]
        expect(bool(undecided), "the trace has no interval without a decision")
        undecided[0]["decision"] = "held" if "held" not in kinds else "rebalance"
        trace = os.path.join(args.workdir, "trace_two_kinds.jsonl")
        with open(trace, "w") as stream:
            stream.writelines(json.dumps(r) + "\n" for r in records)
    result = run([args.plot, trace, "-o", os.path.join(args.workdir, "plots"), "--describe"])
    expect(result.returncode == 0, "flexmpi-plot --describe failed on the trace")
    plots = {os.path.basename(path): axes for path, axes in json.loads(result.stdout).items()}
    expect({"imbalance.png", "nprocs.png", "partition.png"} <= set(plots),
           f"imbalance, nprocs and partition plots expected, got {sorted(plots)}")

    def lines(plot):
        return [line for axis in plots[plot] for line in axis["lines"]]

    def legend(plot):
        return [entry for axis in plots[plot] for entry in axis["legend"]]

    # (a) each kind of decision: its own marker and legend entry, at its intervals.
    ends = [r["first_iteration"] + r["iterations"] for r in records]
    kinds = {r["decision"] for r in records if r.get("decision") not in (None, "", "none")}
    expect(len(kinds) >= 2, f"decisions of two kinds or more expected, got {kinds}")
    markers = {}
    for kind in kinds:
        drawn = [line for line in lines("imbalance.png") if line["label"] == f"decision: {kind}"]
        expect(len(drawn) == 1 and f"decision: {kind}" in legend("imbalance.png"),
               f"imbalance.png: one series and legend entry 'decision: {kind}' expected")
        expect(drawn[0]["x"] == [x for x, r in zip(ends, records) if r["decision"] == kind],
               f"imbalance.png: 'decision: {kind}' must mark the intervals that decided it")
        markers[kind] = drawn[0]["marker"]
    expect(len(set(markers.values())) == len(kinds), f"one marker per decision: {markers}")

    # (b) no series without data, no process class without a name.
    granted = [line for line in lines("nprocs.png") if line["label"] == "granted PEs"]
    grants = any(r.get("resources", {}).get("classes") for r in records)
    expect(bool(granted) == grants, f"nprocs.png: 'granted PEs' drawn: {bool(granted)}, "
           f"the trace records grants: {grants}")
    expect(not any(entry.rstrip() == "processes of" for entry in legend("nprocs.png")),
           f"nprocs.png: a legend entry without a class name: {legend('nprocs.png')}")

    # (c) the partition of every interval on the processes of that interval, each
    # process one unbroken series while it exists.
    series = [line["y"] for line in lines("partition.png") if line["label"].startswith("process ")]
    expect(len(series) == 3, f"partition.png: 3 processes (2 + 1 spawned) expected, got "
           f"{len(series)}")
    for k, record in enumerate(records):
        held = [values[k] for values in series if values[k] is not None]
        expect(len(held) == len(record["computation_time"]) and sum(held) == rows,
               f"partition.png, interval {k}: the {len(record['computation_time'])} processes "
               f"should hold the {rows} rows, drawn: {held}")
    for values in series:
        present = [k for k, v in enumerate(values) if v is not None]
        expect(present == list(range(present[0], present[-1] + 1)),
               f"partition.png: a process's series has gaps: {values}")


def synthetic_trace(path, intervals=12):
    """A trace with the fields later components add: decisions, partition, nprocs changes."""
    with open(path, "w") as stream:
        for i in range(intervals):
            nprocs = 2 if i < 6 else 3
            partition = [500, 500] if i < 3 else [670, 330] if i < 6 else [450, 330, 220]
            times = [p * 1e-4 * (1.0 if rank != 1 else 2.0) for rank, p in enumerate(partition)]
            record = {"interval": i, "first_iteration": 10 * i, "iterations": 10, "nprocs": nprocs,
                      "metric": "work", "computation_time": times, "cpu_time": times,
                      "wall_time": [max(times) + 0.001] * nprocs,
                      "mpi_time": [max(times) - t + 0.001 for t in times],
                      "speed": [p / t for p, t in zip(partition, times)],
                      "metric_count": [float(p) for p in partition],
                      "shared": [False] * nprocs,
                      "imbalance": (max(times) - min(times)) / max(times),
                      "imbalance_threshold": 0.15,
                      "decision": "rebalance" if i == 2 else "spawn" if i == 5 else "none",
                      "partition": partition}
            if i > 0:
                phases = {"computation": max(times), "communication": 0.001, "redistribution": 0.0}
                record["prediction"] = {"machine_profile": "defaults", "measured": phases,
                                        "predicted": dict(phases, computation=1.1 * max(times))}
            stream.write(json.dumps(record) + "\n")


@check("plot-errors")
def plot_errors(args):
    good = os.path.join(args.workdir, "synthetic.jsonl")
    synthetic_trace(good)
    outdir = os.path.join(args.workdir, "plots")
    result = run([args.plot, good, "-o", outdir])
    expect(result.returncode == 0, "flexmpi-plot failed on a trace with partition and nprocs")
    names = sorted(os.path.basename(p) for p in result.stdout.split())
    for wanted in ("partition.png", "nprocs.png", "power.png", "prediction.png"):
        expect(wanted in names, f"{wanted} expected for a trace with partitions, a process "
               f"count change and predictions, got {names}")

    with open(good) as stream:
        lines = stream.readlines()
    malformed = os.path.join(args.workdir, "malformed.jsonl")
    with open(malformed, "w") as stream:
        stream.writelines(lines[:2] + ['{"interval": 2, "computation_time": [0.1, \n'] + lines[3:])
    missing_field = os.path.join(args.workdir, "missing-field.jsonl")
    with open(missing_field, "w") as stream:
        stream.writelines(lines[:4] + ['{"interval": 4}\n'])
    empty = os.path.join(args.workdir, "empty.jsonl")
    open(empty, "w").close()
    cases = [(malformed, "line 3"), (missing_field, "line 5"), (empty, "empty trace"),
             (os.path.join(args.workdir, "no-such-trace.jsonl"), "no such file")]
    for path, needle in cases:
        result = run([args.plot, path, "-o", os.path.join(args.workdir, "unused")])
        expect(result.returncode == 1, f"{os.path.basename(path)}: exit code 1 expected")
        expect(needle in result.stderr and path in result.stderr and
               "Traceback" not in result.stderr,
               f"{os.path.basename(path)}: a one-line message naming the file and '{needle}' "
               "expected")

    # A plot the disk refuses: named, exit code 1, never a silent success.
    full = os.path.join(args.workdir, "full")
    os.makedirs(full, exist_ok=True)
    if not os.path.lexists(os.path.join(full, "speed.png")):
        os.symlink("/dev/full", os.path.join(full, "speed.png"))
    result = run([args.plot, good, "-o", full])
    expect(result.returncode == 1 and "No space left on device" in result.stderr and
           os.path.join(full, "speed.png") in result.stderr and "Traceback" not in result.stderr,
           f"a plot written to /dev/full: exit code 1 and a message naming speed.png expected, got "
           f"{result.returncode}: {result.stderr}")
    with open("/dev/full", "w") as stdout:
        result = subprocess.run([args.plot, good, "-o", outdir], stdout=stdout,
                                stderr=subprocess.PIPE, text=True, timeout=120)
    expect(result.returncode == 1 and "standard output" in result.stderr and
           "Traceback" not in result.stderr,
           f"the list of plots written to /dev/full: exit code 1 and a message expected, got "
           f"{result.returncode}: {result.stderr}")


@check("plot-curve")
def plot_curve(args):
    """--curve draws flexmpi-epigraph's CSV; a malformed one is named, line and all."""
    header = "day,susceptible,latent,recovered,work\n"
    good = os.path.join(args.workdir, "curve.csv")
    with open(good, "w") as stream:
        stream.write(header + "1,100,0,0,120\n2,90,8,2,180\n3,70,10,20,260\n")
    result = run([args.plot, "--curve", good, "-o", os.path.join(args.workdir, "curve")])
    expect(result.returncode == 0, f"flexmpi-plot --curve failed: {result.stderr}")
    expect(result.stdout.split() == [os.path.join(args.workdir, "curve", "epidemic_curve.png")]
           and os.path.getsize(result.stdout.split()[0]) > 0, "epidemic_curve.png expected")
    cases = [("bad-header.csv", "day,susceptible\n1,100\n", "line 1"),
             ("bad-number.csv", header + "1,100,0,0,120\n2,90,x,2,180\n", "line 3"),
             ("no-day.csv", header, "no day")]
    for name, text, needle in cases:
        path = os.path.join(args.workdir, name)
        with open(path, "w") as stream:
            stream.write(text)
        result = run([args.plot, "--curve", path, "-o", os.path.join(args.workdir, "unused")])
        expect(result.returncode == 1 and needle in result.stderr and path in result.stderr
               and "Traceback" not in result.stderr,
               f"{name}: exit code 1 and a message naming the file and '{needle}' expected, got "
               f"{result.returncode}: {result.stderr}")
    result = run([args.plot, "--curve", good, good, "-o", args.workdir])
    expect(result.returncode == 2, "a trace and --curve together: exit code 2 expected")


@check("plot-non-finite-and-bom")
def plot_non_finite_and_bom(args):
    """A NaN or an infinity is named (field, interval, line) and drawn as a gap; a UTF-8
    byte order mark, which the library's readers accept, is accepted."""
    good = os.path.join(args.workdir, "synthetic.jsonl")
    synthetic_trace(good)
    with open(good) as stream:
        records = [json.loads(line) for line in stream]
    records[3]["imbalance"] = math.nan
    records[5]["computation_time"][1] = math.inf
    records[7]["computation_time"][0] = -math.inf
    bad = os.path.join(args.workdir, "non-finite.jsonl")
    with open(bad, "w", encoding="utf-8") as stream:
        stream.write("\ufeff")  # and a byte order mark
        stream.writelines(json.dumps(r) + "\n" for r in records)
    result = run([args.plot, bad, "-o", os.path.join(args.workdir, "plots"), "--describe"])
    expect(result.returncode == 0 and "Traceback" not in result.stderr,
           f"a trace with a BOM and non-finite values: exit 0 expected, got "
           f"{result.returncode}: {result.stderr}")
    warnings = result.stderr.splitlines()
    expect(f'flexmpi-plot: {bad}: "imbalance" is not a finite number (nan) in interval 3 (line 4)'
           ': drawn as a gap' in warnings, f"the NaN imbalance must be named: {warnings}")
    expect(f'flexmpi-plot: {bad}: "computation_time" is not a finite number (inf) in interval 5 '
           '(line 6) and 1 more intervals: drawn as a gap' in warnings,
           f"the infinite computation times must be named: {warnings}")
    expect(len(warnings) == 2, f"one line per field expected: {warnings}")
    plots = {os.path.basename(path): axes for path, axes in json.loads(result.stdout).items()}
    drawn = [line["y"] for axis in plots["computation_time.png"] for line in axis["lines"]
             if line["label"] == "process 1"]
    expect(drawn and drawn[0][5] is None and drawn[0][4] is not None,
           f"the infinite value must be a gap in process 1's series: {drawn}")


@check("plot-large-trace")
def plot_large_trace(args):
    """20,000 intervals of 4 processes (a long run's trace, 13 MB) are drawn in seconds:
    the drawing is linear in the intervals, one artist per series."""
    trace = os.path.join(args.workdir, "large.jsonl")
    synthetic_trace(trace, intervals=20000)
    started = time.monotonic()
    result = run([args.plot, trace, "-o", os.path.join(args.workdir, "plots")], timeout=120)
    seconds = time.monotonic() - started
    expect(result.returncode == 0, f"flexmpi-plot failed on 20,000 intervals: {result.stderr}")
    expect(seconds < 60, f"flexmpi-plot took {seconds:.0f} s on 20,000 intervals")


@check("calibrate-one-process")
def calibrate_one_process(args):
    """flexmpi-calibrate on one process says how to run it and ends cleanly, status 2."""
    output = os.path.join(args.workdir, "profile.json")
    for launch in ([], [args.mpiexec, "-n", "1"]):
        result = run(launch + [args.calibrate, "--quick", "--output", output],
                     env=mpi_environment())
        errors = [line for line in result.stderr.splitlines() if "flexmpi-calibrate" in line]
        expect(result.returncode == 2, f"{launch or 'singleton'}: exit status 2 expected")
        expect(len(errors) == 1 and "needs at least 2 processes" in errors[0] and
               "mpiexec -n 2" in errors[0],
               "one line saying it needs at least 2 processes and how to run it expected")
        expect("MPI_ABORT" not in result.stdout + result.stderr, "MPI_Finalize expected, not an abort")
        expect(not os.path.exists(output), "no profile may be written")


@check("calibrate-spawn-room")
def calibrate_spawn_room(args):
    """`mpiexec -n 2 flexmpi-calibrate` on as many cores as processes: the spawn phase grows
    the job by itself; a bound the user set too low is refused before anything is measured."""
    env = {k: v for k, v in mpi_environment().items()
           if not k.startswith(("OMPI_MCA_rmaps_base_oversubscribe", "OMPI_MCA_rmaps_base_mapping"))}
    output = os.path.join(args.workdir, "profile.json")
    if os.path.exists(output):
        os.remove(output)
    too_low = dict(env, FLEXMPI_MAX_PROCS="3")
    result = run([args.mpiexec, "-n", "2", args.calibrate, "--quick", "-o", output], env=too_low)
    if args.mpi == "openmpi":
        wanted = ("flexmpi-calibrate: the spawn phase grows the job to 4 processes, over "
                  "FLEXMPI_MAX_PROCS=3: run it with FLEXMPI_MAX_PROCS=4, or without the spawn "
                  "phase (--only=network, --only=redistribution)")
        expect(result.returncode == 2 and wanted in result.stderr,
               f"FLEXMPI_MAX_PROCS=3: exit 2 and {wanted!r} expected")
        expect("[network]" not in result.stderr, "nothing may be measured before the refusal")
        expect(not os.path.exists(output), "no profile may be written")
    started = time.monotonic()
    result = run([args.mpiexec, "-n", "2", args.calibrate, "--quick", "-o", output], env=env,
                 timeout=240)
    expect(result.returncode == 0 and os.path.exists(output),
           f"mpiexec -n 2 flexmpi-calibrate --quick must complete (exit {result.returncode})")
    with open(output) as stream:
        measured = json.load(stream)["measured"]
    expect(measured == {"network": True, "spawn": args.mpi == "openmpi", "redistribution": True},
           f"every phase this MPI can run must be measured: {measured}")
    print(f"calibrated in {time.monotonic() - started:.1f} s")


@check("readme-settings")
def readme_settings(args):
    """docs/reference/settings.md's table is `flexrun --settings-table`, verbatim."""
    reference = os.path.join(args.source_dir, "docs", "reference", "settings.md")
    with open(reference) as stream:
        text = stream.read()
    match = re.search(r"<!-- settings-table begin[^>]*-->\n(.*?)<!-- settings-table end -->", text,
                      re.S)
    expect(match, "docs/reference/settings.md has no <!-- settings-table begin --> ... end block")
    result = run([args.flexrun, "--settings-table"])
    expect(result.returncode == 0, "flexrun --settings-table failed")
    if match.group(1) != result.stdout:
        if args.update:
            with open(reference, "w") as stream:
                stream.write(text[:match.start(1)] + result.stdout + text[match.end(1):])
            print(f"updated {reference}")
            return
        raise Failure("docs/reference/settings.md's settings table differs from `flexrun "
                      "--settings-table` (the table in src/core/settings.cpp changed). "
                      "Regenerate it with: python3 tests/tools/tools_test.py --flexrun "
                      "build/tools/flexrun --source-dir . --update readme-settings")


def check_installed_runpaths(prefix, libdir):
    """Every program installed into bin/ has a RUNPATH to the installed library."""
    wanted = "$ORIGIN/../" + os.path.basename(libdir)
    bindir = os.path.join(prefix, "bin")
    programs = []
    for name in sorted(os.listdir(bindir)):
        with open(os.path.join(bindir, name), "rb") as stream:
            if stream.read(4) == b"\x7fELF":  # not the scripts (flexmpi-plot)
                programs.append(name)
    expect("flexmpi-jacobi" in programs and "flexrun" in programs,
           f"bin/ should hold flexrun and the applications, holds {programs}")
    for name in programs:
        result = run(["readelf", "-d", os.path.join(bindir, name)])
        runpath = re.search(r"\(RUNPATH\)\s+Library runpath: \[(.*)\]", result.stdout)
        expect(runpath and wanted in runpath.group(1).split(":"),
               f"bin/{name}: RUNPATH {wanted} expected, readelf -d shows "
               f"{runpath.group(1) if runpath else 'none'}")


@check("install")
def install(args):
    """cmake --install into a fresh prefix, then build and run an application against it."""
    prefix = os.path.join(args.workdir, "prefix")
    shutil.rmtree(prefix, ignore_errors=True)
    result = run([args.cmake, "--install", args.build_dir, "--prefix", prefix], timeout=300)
    expect(result.returncode == 0, "cmake --install failed")
    package = PACKAGES[args.mpi]
    libdir = next((os.path.join(prefix, d) for d in ("lib", "lib64")
                   if os.path.exists(os.path.join(prefix, d, "pkgconfig", f"{package}.pc"))), None)
    expect(libdir, f"{package}.pc was not installed")
    for tool in ("flexrun", "flexmpi-plot"):
        expect(os.access(os.path.join(prefix, "bin", tool), os.X_OK), f"bin/{tool} not installed")
    flexrun = os.path.join(prefix, "bin", "flexrun")
    result = run([flexrun, "--version"])
    expect(result.returncode == 0, "the installed flexrun does not run (RPATH?)")
    check_installed_runpaths(prefix, libdir)
    # An installed application finds the installed library by itself.
    without_library_path = {k: v for k, v in mpi_environment().items() if k != "LD_LIBRARY_PATH"}
    result = run([args.mpiexec, "-n", "2", os.path.join(prefix, "bin", "flexmpi-jacobi"),
                  "--size", "200", "--iterations", "20"], env=without_library_path)
    expect(result.returncode == 0 and "checksum" in result.stdout,
           "the installed flexmpi-jacobi did not run without LD_LIBRARY_PATH")

    # 1. A C program with the MPI compiler wrapper and pkg-config.
    env = dict(mpi_environment(), PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig"))
    flags = run(["pkg-config", "--cflags", "--libs", package], env=env)
    expect(flags.returncode == 0, f"pkg-config --cflags --libs {package} failed")
    expect(prefix in flags.stdout, f"pkg-config flags do not point into {prefix}")
    app = os.path.join(args.workdir, "app_pkgconfig")
    result = run([args.mpicc, os.path.join(args.source_dir, "tests/tools/tools_probe.c"), "-o", app]
                 + shlex.split(flags.stdout), env=env)
    expect(result.returncode == 0,
           f"{args.mpicc} app.c $(pkg-config --cflags --libs {package}) failed")

    # 2. A CMake project with find_package(flexmpi or flexmpi_mpich) -> flexmpi::flexmpi.
    build = os.path.join(args.workdir, "consumer-build")
    shutil.rmtree(build, ignore_errors=True)
    result = run([args.cmake, "-S", os.path.join(args.source_dir, "tests/tools/install_consumer"),
                  "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}", f"-DFLEXMPI_PACKAGE={package}",
                  f"-DMPI_C_COMPILER={args.mpicc}",
                  f"-DMPI_CXX_COMPILER={args.mpicxx}"], timeout=300)
    expect(result.returncode == 0, f"configuring a find_package({package}) project failed")
    result = run([args.cmake, "--build", build], timeout=300)
    expect(result.returncode == 0, f"building a find_package({package}) project failed")

    # 3. The README's examples, exactly as written there: a balanced loop in C,
    #    the same in C++ with flexmpi.hpp alone and in Fortran with the module
    #    flexmpi (readme-examples; Fortran where the build has the modules).
    readme_programs = []
    with open(os.path.join(args.source_dir, "README.md")) as stream:
        readme = stream.read()
    examples = re.findall(r"<!-- readme-example: (\S+) -->\n```\w+\n(.*?)```", readme, re.S)
    expect(sorted(name for name, _ in examples) ==
           ["balanced_loop.c", "balanced_loop.cpp", "balanced_loop.f90"],
           f"README.md: expected the examples balanced_loop.c, .cpp and .f90, found {examples and [n for n, _ in examples]}")
    if args.mpifort:
        fortran_flags = run(["pkg-config", "--cflags", "--libs", f"{package}-fortran"], env=env)
        expect(fortran_flags.returncode == 0, f"pkg-config --cflags --libs {package}-fortran failed")
    compilers = {".c": ([args.mpicc], flags), ".cpp": ([args.mpicxx, "-std=c++20"], flags),
                 ".f90": ([args.mpifort], args.mpifort and fortran_flags)}
    for name, code in examples:
        compiler, compiler_flags = compilers[os.path.splitext(name)[1]]
        if not compiler_flags:
            continue
        source = os.path.join(args.workdir, name)
        with open(source, "w") as stream:
            stream.write(code)
        program = os.path.join(args.workdir, name.replace(".", "_"))
        result = run(compiler + ["-Wall", "-Werror", source, "-o", program]
                     + shlex.split(compiler_flags.stdout) + ["-lm"], env=env)
        expect(result.returncode == 0, f"README.md's {name} does not build as written")
        readme_programs.append(program)
    for program in readme_programs:
        result = run([flexrun, "-n", "2", "--emulate-speed=1.0,0.5", "--sampling-interval=20",
                      program], env=mpi_environment(), timeout=300)
        expect(result.returncode == 0 and ": ok" in result.stdout,
               f"README.md's {os.path.basename(program)} did not run to 'ok'")

    # 4. A Fortran CMake project with find_package -> flexmpi::flexmpi_fortran
    #    (examples/fortran/balanced_loop_f08.f90: use mpi_f08, flexmpi_f08).
    if args.mpifort:
        fortran_build = os.path.join(args.workdir, "consumer-fortran-build")
        shutil.rmtree(fortran_build, ignore_errors=True)
        result = run([args.cmake, "-S",
                      os.path.join(args.source_dir, "tests/tools/install_consumer_fortran"),
                      "-B", fortran_build, f"-DCMAKE_PREFIX_PATH={prefix}",
                      f"-DFLEXMPI_PACKAGE={package}", f"-DMPI_C_COMPILER={args.mpicc}",
                      f"-DMPI_Fortran_COMPILER={args.mpifort}"], timeout=300)
        expect(result.returncode == 0, f"configuring a Fortran find_package({package}) project failed")
        result = run([args.cmake, "--build", fortran_build], timeout=300)
        expect(result.returncode == 0, "building a project on flexmpi::flexmpi_fortran failed")
        result = run([flexrun, "-n", "2", "--emulate-speed=1.0,0.5", "--sampling-interval=20",
                      os.path.join(fortran_build, "consumer_f08")], env=mpi_environment(),
                     timeout=300)
        expect(result.returncode == 0 and ": ok" in result.stdout,
               "the find_package(flexmpi) Fortran program did not run to 'ok'")

    # Both run on 2 ranks under the installed flexrun, with a trace.
    for program in (app, os.path.join(build, "consumer_c"), os.path.join(build, "consumer_cxx")):
        trace = program + ".jsonl"
        result = run([flexrun, "-n", "2", "--sampling-interval=10", f"--trace={trace}", program,
                      "--iterations", "20"], env=mpi_environment())
        expect(result.returncode == 0, f"{os.path.basename(program)} failed under flexrun")
        with open(trace) as stream:
            expect(len(stream.readlines()) == 2, f"{trace}: 2 sampling intervals expected")


@check("install-two-mpis")
def install_two_mpis(args):
    """The libraries of an Open MPI and an MPICH build installed into one prefix (this
    build entirely, the other's "library" component): flexrun --preload picks the
    one of each launcher's MPI, and a library preloaded by hand into the other MPI's
    processes stops them with one line instead of a crash."""
    prefix = os.path.join(args.workdir, "prefix")
    shutil.rmtree(prefix, ignore_errors=True)
    result = run([args.cmake, "--install", args.other_build_dir, "--prefix", prefix,
                  "--component", "library"], timeout=300)
    expect(result.returncode == 0, f"cmake --install {args.other_build_dir} --component library failed")
    result = run([args.cmake, "--install", args.build_dir, "--prefix", prefix], timeout=300)
    expect(result.returncode == 0, f"cmake --install {args.build_dir} failed")
    libdir = os.path.join(prefix, "lib")
    for name, package in PACKAGES.items():
        for path in (MPIS[name][3], f"pkgconfig/{package}.pc", f"cmake/{package}/{package}Config.cmake"):
            expect(os.path.exists(os.path.join(libdir, path)), f"lib/{path} was not installed")
        flags = run(["pkg-config", "--libs", package],
                    env=dict(mpi_environment(), PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig")))
        expect(f"-l{package}" in flags.stdout.split(), f"pkg-config --libs {package}: -l{package}")

    flexrun = os.path.join(prefix, "bin", "flexrun")
    programs = {}
    for name, (title, mpiexec, mpicc, library) in MPIS.items():
        program = os.path.join(args.workdir, f"plain_{name}")
        result = run([mpicc, os.path.join(args.source_dir, "tests/tools/plain_mpi.c"), "-o", program])
        expect(result.returncode == 0, f"{mpicc} plain_mpi.c failed")
        programs[name] = program
        profile = program + ".profile"
        result = run([flexrun, "--preload", f"--mpiexec={mpiexec}", "-n", "2", f"--report={profile}",
                      program], env=mpi_environment())
        expect(result.returncode == 0 and "plain_mpi: sum 2" in result.stdout,
               f"flexrun --preload --mpiexec={mpiexec}: the {title} program failed")
        with open(profile) as stream:
            expect("MPI_Allreduce" in stream.read(), f"{profile} does not mention MPI_Allreduce")
        result = run([flexrun, "--preload", "--dry-run", f"--mpiexec={mpiexec}", program])
        preload = preloaded_library(dry_run_command(result.stdout))
        expect(preload == os.path.realpath(os.path.join(libdir, library)),
               f"--mpiexec={mpiexec}: {library} must be preloaded, LD_PRELOAD={preload}")

    for name, (title, mpiexec, _, _) in MPIS.items():
        other = other_mpi(name)
        # A program of one MPI under the other's launcher.
        result = run([flexrun, "--preload", f"--mpiexec={mpiexec}", "-n", "2", programs[other]])
        expect(result.returncode == 2 and f"runs {title}" in result.stderr and
               f"is linked with {MPIS[other][0]}" in result.stderr,
               f"the {MPIS[other][0]} program under {mpiexec}: exit 2 naming both MPIs expected")
        # The other MPI's library preloaded by hand.
        wrong = os.path.join(libdir, MPIS[other][3])
        preload = (["-x", f"LD_PRELOAD={wrong}"] if name == "openmpi" else
                   ["-genv", "LD_PRELOAD", wrong])
        result = run([mpiexec] + preload + ["-n", "2", programs[name]], env=mpi_environment())
        expect(result.returncode != 0 and "plain_mpi: sum" not in result.stdout and
               f"is built for {MPIS[other][0]}, but the program runs another MPI" in result.stderr,
               f"{MPIS[other][3]} preloaded into a {title} program: it must stop with a message")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--flexrun")
    parser.add_argument("--plot")
    parser.add_argument("--probe")
    parser.add_argument("--calibrate")
    parser.add_argument("--jacobi")
    parser.add_argument("--plain")
    parser.add_argument("--mpi", choices=["openmpi", "mpich"], default="openmpi")
    parser.add_argument("--work", default=".")
    parser.add_argument("--source-dir", default=os.path.join(os.path.dirname(__file__), "../.."))
    parser.add_argument("--build-dir")
    parser.add_argument("--other-build-dir", help="install-two-mpis: a build tree of the other MPI")
    parser.add_argument("--cmake", default="cmake")
    parser.add_argument("--mpicc", default="mpicc")
    parser.add_argument("--mpicxx", default="mpicxx")
    parser.add_argument("--mpifort", default="", help="the Fortran modules are built: test them")
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--update", action="store_true", help="readme-settings: rewrite docs/reference/settings.md")
    parser.add_argument("check", choices=sorted(CHECKS))
    args = parser.parse_args()
    args.workdir = os.path.abspath(os.path.join(args.work, args.check))
    # A fresh directory each run: files an earlier run left (a launcher's
    # record, a program's marker) would pass or fail a check by themselves.
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    try:
        CHECKS[args.check](args)
    except Failure as failure:
        print(f"FAILED {args.check}: {failure}", file=sys.stderr)
        return 1
    print(f"PASSED {args.check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
