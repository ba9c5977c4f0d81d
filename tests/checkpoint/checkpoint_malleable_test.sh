#!/usr/bin/env bash
# Checkpoints of a malleable job (Open MPI: spawning): flexmpi-jacobi under
# smp grows from 2 to 3 processes; SIGUSR1 to the spawned process alone makes
# all three checkpoint together and exit with status 75; the job restarts on
# 2 processes from the iteration it left and ends with the uninterrupted
# run's result.
#
#   checkpoint_malleable_test.sh JACOBI MPIEXEC
set -uo pipefail
jacobi=$1 mpiexec=$2
work=$(mktemp -d /tmp/flexmpi-checkpoint-malleable.XXXXXX)
trap 'rm -rf "${work}"' EXIT
cd "${work}" || exit 1
printf '40 spawn 1\n' >schedule.txt
arguments=(--size 300 --iterations 6000 --quiet)
fail() {
  echo "FAILED: $*"
  exit 1
}
result() { grep 'checksum=' "$1" | tail -1 | sed -E 's/ (procs|time)=[^ ]*//g'; }

"${mpiexec}" -n 2 "${jacobi}" "${arguments[@]}" >reference.out 2>&1 || fail "uninterrupted run"

FLEXMPI_POLICY=smp FLEXMPI_SCHEDULE=schedule.txt FLEXMPI_SAMPLING_INTERVAL=10 FLEXMPI_MAX_PROCS=3 \
  FLEXMPI_CHECKPOINT="${work}/run.h5" FLEXMPI_CHECKPOINT_LATENCY=0.2 \
  "${mpiexec}" -n 2 "${jacobi}" "${arguments[@]}" >first.out 2>&1 &
launcher=$!
spawned=""
for _ in $(seq 300); do  # the third process, the one flexmpi spawned
  mapfile -t ranks < <(pgrep -f "^${jacobi} --size 300")
  ((${#ranks[@]} == 3)) && spawned=$(printf '%s\n' "${ranks[@]}" | sort -n | tail -1) && break
  sleep 0.05
done
[[ -n ${spawned} ]] || { kill "${launcher}"; fail "no process was spawned: $(cat first.out)"; }
sleep 0.1
kill -USR1 "${spawned}"
wait "${launcher}"
status=$?
((status == 75)) || fail "exit status ${status} after SIGUSR1, expected 75: $(tail -5 first.out)"
grep -q "checkpoint of iteration [0-9]* written to .*signal" first.out ||
  fail "no signal checkpoint: $(tail -5 first.out)"
processes=$(/usr/bin/python3 -c "import json, sys, h5py; print(json.loads(h5py.File(sys.argv[1], 'r')['metadata'][()])['processes'])" run.h5)
((processes == 3)) || fail "the checkpoint was written by ${processes} processes, expected 3"

FLEXMPI_RESTART="${work}/run.h5" "${mpiexec}" -n 2 "${jacobi}" "${arguments[@]}" >second.out 2>&1 ||
  fail "restart: $(tail -5 second.out)"
grep -q "restarted from .* on 2 processes (written by 3)" second.out || fail "restart: $(cat second.out)"
[[ $(result second.out) == "$(result reference.out)" ]] ||
  fail "result '$(result second.out)', uninterrupted '$(result reference.out)'"
echo "ok: spawned to 3, SIGUSR1 to the spawned process, checkpoint by 3, restart on 2:" \
  "$(grep -o 'restarted from .*' second.out)"
