#!/usr/bin/env bash
# Runs an MPI job and interrupts it once it has written a checkpoint, for the
# restart tests (check_restart.cmake):
#
#   interrupt_run.sh SIGNAL CHECKPOINT PROGRAM MPIEXEC [ARGS...]
#
# Starts MPIEXEC ARGS... (FLEXMPI_CHECKPOINT=CHECKPOINT in the environment),
# waits (at most 60 s) for CHECKPOINT to exist, then
#   KILL: sends SIGKILL to one of the job's processes of PROGRAM, found among
#         mpiexec's descendants (Open MPI starts them itself, MPICH under
#         hydra_pmi_proxy): a process that dies as on a node failure;
#   USR1: sends SIGUSR1 to mpiexec, which passes it on to every process (Open
#         MPI and MPICH both do): what Slurm's --signal does to a job step.
# and exits with mpiexec's status. A job that ends before the signal is an
# error (exit status 124 and a message), as is one still running 60 s after.
set -u
signal=$1 checkpoint=$2 program=$3
shift 3
[[ "${signal}" == KILL || "${signal}" == USR1 ]] || {
  echo "interrupt_run: SIGNAL '${signal}': expected KILL or USR1" >&2
  exit 2
}
program=$(readlink -f "${program}")

# Its own session, so that a job left running can be ended as a whole.
setsid "$@" &
job=$!
finish() {  # the job's status, after at most 60 s more
  local deadline=$((SECONDS + 60))
  while kill -0 "${job}" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  if kill -0 "${job}" 2>/dev/null; then
    echo "interrupt_run: the job still runs 60 s after SIG${signal}; killed" >&2
    kill -9 -- "-${job}" 2>/dev/null
    wait "${job}" 2>/dev/null
    exit 124
  fi
  wait "${job}"
  exit $?
}

deadline=$((SECONDS + 60))
while [[ ! -f "${checkpoint}" ]]; do
  if ! kill -0 "${job}" 2>/dev/null; then
    wait "${job}"
    echo "interrupt_run: the job ended (status $?) before it wrote ${checkpoint}" >&2
    exit 124
  fi
  if ((SECONDS >= deadline)); then
    echo "interrupt_run: no ${checkpoint} after 60 s" >&2
    kill -9 -- "-${job}" 2>/dev/null
    wait "${job}" 2>/dev/null
    exit 124
  fi
  sleep 0.01
done

if [[ "${signal}" == USR1 ]]; then
  kill -USR1 "${job}"
  echo "interrupt_run: SIGUSR1 sent to mpiexec (pid ${job})" >&2
  finish
fi

descendants() {
  local child
  for child in $(pgrep -P "$1"); do
    echo "${child}"
    descendants "${child}"
  done
}
victim=""
for pid in $(descendants "${job}"); do
  if [[ "$(readlink -f "/proc/${pid}/exe" 2>/dev/null)" == "${program}" ]]; then victim=${pid}; fi
done
if [[ -z "${victim}" ]]; then
  if ! kill -0 "${job}" 2>/dev/null; then
    wait "${job}"
    echo "interrupt_run: the job ended (status $?) before SIGKILL" >&2
  else
    echo "interrupt_run: no process of ${program} under mpiexec (pid ${job})" >&2
    kill -9 -- "-${job}" 2>/dev/null
    wait "${job}" 2>/dev/null
  fi
  exit 124
fi
kill -KILL "${victim}"
echo "interrupt_run: SIGKILL sent to process ${victim} of ${program}" >&2
finish
