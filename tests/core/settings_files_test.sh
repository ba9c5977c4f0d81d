#!/usr/bin/env bash
# Settings files that never hang and outputs that never destroy inputs, at
# MPI_Init on 2 processes: each CASE below is refused within seconds, with one
# message naming the setting, the path and what was expected, and the inputs
# are byte for byte what they were (cmp). A run that does not end within
# 15 s is killed and reported as a hang (tests/support/run_under_timeout.sh).
#
#   settings_files_test.sh CASE MPIEXEC PROGRAM [CALIBRATE]
#   PROGRAM: tests/core/collective_calls.c, which prints "collective_calls all: done"
set -uo pipefail
case_name=$1 mpiexec=$2 program=$3 calibrate=${4:-}
work=$(mktemp -d /tmp/flexmpi-settings-files.XXXXXX)
trap 'rm -rf "${work}"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/run_under_timeout.sh"
run_seconds=15
run_pattern_once=1

flex() {  # flex NAME EXPECTED PATTERN ENV...: the program on 2 processes
  local name=$1 expected=$2 pattern=$3
  shift 3
  run "${name}" "${expected}" "${pattern}" FLEXMPI_SAMPLING_INTERVAL=5 FLEXMPI_METRIC=work "$@" \
    -- "${mpiexec}" -n 2 "${program}" all
}

intact() {  # intact FILE COPY: FILE is byte for byte COPY
  cmp -s "$1" "$2" || fail "$1 was changed: $(head -c 200 "$1")"
}

hosts=${work}/hosts.txt
printf 'localhost:C1:4\n' >"${hosts}"
cp "${hosts}" "${work}/hosts.copy"
classes=${work}/classes.txt
printf 'C1 1.0\n' >"${classes}"
fake_slurm=(FLEXMPI_RESOURCES=slurm SLURM_JOB_ID=1 SLURM_JOB_PARTITION=p SLURM_JOB_NODELIST=localhost
  SLURM_JOB_CPUS_PER_NODE=4)

case ${case_name} in
  fifo)  # every file setting: a FIFO blocked every process in open()
    mkfifo "${work}/fifo"
    for setting in FLEXMPI_HOSTFILE FLEXMPI_MACHINE_PROFILE FLEXMPI_DRUM_TOPOLOGY FLEXMPI_NODE_CLASSES \
      FLEXMPI_SCHEDULE FLEXMPI_PROFILE; do
      flex "${setting}=FIFO" nonzero "^flexmpi: ${setting}='${work}/fifo' is invalid: .*is a FIFO \(named pipe\): expected a file" \
        "${setting}=${work}/fifo"
    done
    flex "FLEXMPI_SLURM_JOIN=FIFO" nonzero "FLEXMPI_SLURM_JOIN='${work}/fifo' is invalid: .*is a FIFO" \
      "${fake_slurm[@]}" "FLEXMPI_SLURM_JOIN=${work}/fifo"
    flex "FLEXMPI_TRACE=FIFO" nonzero "^flexmpi: FLEXMPI_TRACE='${work}/fifo' is not a regular file but a FIFO" \
      "FLEXMPI_TRACE=${work}/fifo"
    ;;
  device)  # /dev/zero was read until memory ran out (std::bad_alloc after 10-31 s)
    for setting in FLEXMPI_HOSTFILE FLEXMPI_MACHINE_PROFILE FLEXMPI_DRUM_TOPOLOGY; do
      flex "${setting}=/dev/zero" nonzero "${setting}='/dev/zero' is invalid: .*is a character device: expected a file" \
        "${setting}=/dev/zero"
    done
    ;;
  world-writable)  # used without a word
    chmod 0666 "${hosts}"
    flex "a hostfile every user may write" nonzero "may be written by every user \(mode 0666\)" \
      "FLEXMPI_HOSTFILE=${hosts}"
    ;;
  trace-is-hostfile)  # the hostfile was replaced by the trace; exit 0
    flex "FLEXMPI_TRACE=<the hostfile>" nonzero "^flexmpi: FLEXMPI_TRACE='${hosts}' is the file of FLEXMPI_HOSTFILE='${hosts}': writing it would destroy that input" \
      "FLEXMPI_HOSTFILE=${hosts}" "FLEXMPI_TRACE=${hosts}"
    intact "${hosts}" "${work}/hosts.copy"
    ln "${hosts}" "${work}/hard_link.txt"  # another name, the same file
    flex "FLEXMPI_REPORT=<a hard link to the hostfile>" nonzero "FLEXMPI_REPORT='${work}/hard_link.txt' is the file of FLEXMPI_HOSTFILE" \
      "FLEXMPI_HOSTFILE=${hosts}" "FLEXMPI_REPORT=${work}/hard_link.txt"
    intact "${hosts}" "${work}/hosts.copy"
    flex "FLEXMPI_CHECKPOINT=<the node classes>" nonzero "FLEXMPI_CHECKPOINT='${classes}' is the file of FLEXMPI_NODE_CLASSES" \
      "FLEXMPI_NODE_CLASSES=${classes}" "FLEXMPI_CHECKPOINT=${classes}"
    # The same settings with a trace of its own run: the refusals are the aliasing's.
    flex "FLEXMPI_TRACE=<a new file>" zero "collective_calls all: done" \
      "FLEXMPI_HOSTFILE=${hosts}" "FLEXMPI_TRACE=${work}/trace.jsonl"
    intact "${hosts}" "${work}/hosts.copy"
    ;;
  trace-is-profile)  # the input work profile was truncated to 0 lines
    flex "a trace to profile" zero "collective_calls all: done" "FLEXMPI_TRACE=${work}/profile.jsonl"
    cp "${work}/profile.jsonl" "${work}/profile.copy"
    flex "FLEXMPI_TRACE=<the work profile>" nonzero "FLEXMPI_TRACE='${work}/profile.jsonl' is the file of FLEXMPI_PROFILE" \
      "FLEXMPI_PROFILE=${work}/profile.jsonl" "FLEXMPI_TRACE=${work}/profile.jsonl"
    intact "${work}/profile.jsonl" "${work}/profile.copy"
    ;;
  trace-is-report)  # the report overwrote the trace
    flex "FLEXMPI_TRACE and FLEXMPI_REPORT on one path" nonzero "FLEXMPI_REPORT='${work}/./out.json' and FLEXMPI_TRACE='${work}/out.json' are the same file" \
      "FLEXMPI_TRACE=${work}/out.json" "FLEXMPI_REPORT=${work}/./out.json"
    [[ -e ${work}/out.json ]] && fail "${work}/out.json was written"
    ;;
  trace-is-link)  # the link was followed and what it led to truncated
    cp "${hosts}" "${work}/precious.txt"
    ln -s "${work}/precious.txt" "${work}/trace.jsonl"
    flex "FLEXMPI_TRACE=<a symbolic link>" nonzero "FLEXMPI_TRACE='${work}/trace.jsonl' is a symbolic link \(to '${work}/precious.txt'\)" \
      "FLEXMPI_TRACE=${work}/trace.jsonl"
    intact "${work}/precious.txt" "${hosts}"
    ;;
  calibrate-output)  # measured every phase, then said only "cannot write"
    run "flexmpi-calibrate -o /no/such/dir/m.json" nonzero "^flexmpi-calibrate: --output='/no/such/dir/m.json': cannot open for writing \(No such file or directory\) in its directory '/no/such/dir'" \
      -- "${mpiexec}" -n 2 "${calibrate}" --quick --only=network -o /no/such/dir/m.json
    printf '{}\n' >"${work}/links.json"
    run "flexmpi-calibrate -o <its --link-from>" nonzero "--output='${work}/links.json' is the file of --link-from" \
      -- "${mpiexec}" -n 2 "${calibrate}" --quick --only=network --link-from "${work}/links.json" -o "${work}/links.json"
    ;;
  *)
    fail "unknown case ${case_name}"
    ;;
esac
exit ${failed}
