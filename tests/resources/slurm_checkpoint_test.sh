#!/usr/bin/env bash
# CTests "slurm_checkpoint_preempt" and "slurm_checkpoint_timelimit": the
# whole checkpoint/requeue cycle of examples/slurm/checkpoint_requeue.sbatch
# on the local cluster (scripts/slurm-local.sh). The job's first run is on 3
# nodes (3 processes); it gets Slurm's SIGUSR1, the program checkpoints and
# exits with 75, the batch script requeues the job, and the second run
# resumes from the checkpoint (FLEXMPI_RESTART) on the 2 nodes left to it and
# completes. Its result line (procs= and time= aside) must be that of an
# uninterrupted run on 3 processes (run meanwhile, outside Slurm).
# MODE preempt: a job of partition urgent (PriorityTier 2) asking for 2
#   nodes preempts it (GraceTime; preempt_send_user_signal sends the --signal).
# MODE timelimit: --time=1: the warning of --signal=B:USR1@60 comes at
#   slurmctld's first time-limit check (every 30 s); a job of 2 nodes of the
#   same partition, waiting meanwhile, takes 2 of the 3 nodes it frees. The
#   requeued job's time limit is raised (as an administrator can), else its
#   second run too would get the warning within 30 s.
# A requeued job waits AuthInfo's cred_expire + 1 s (11 s here) and then a
# scheduler pass (bf_interval, 5 s here) before it starts again.
# Exit code 77 (skipped) where Slurm cannot start.
#   bash slurm_checkpoint_test.sh SLURM_LOCAL_SH EXAMPLE MPIEXEC MODE PROGRAM [ARGS...]
# PROGRAM: a flexmpi program (FLEXMPI_CHECKPOINT, FLEXMPI_RESTART) that
# prints a line with checksum= (and flexmpi's log lines "checkpoint of
# iteration N written to FILE", "restarted from FILE at iteration N on P
# processes"), e.g. flexmpi-jacobi --size 600 --iterations
# 20000 --quiet. It must run longer
# than PREEMPT_AFTER (default 6) s in MODE preempt, 35 s in MODE timelimit.
set -uo pipefail
mode=$4
source "$(dirname "$0")/slurm_test_lib.sh" "slurm_checkpoint_${mode}" "$(realpath "$1")"
example=$(realpath "$2") mpiexec=$3
shift 4
program=("$@")
[[ ${program[0]:-} == */* ]] && program[0]=$(realpath "${program[0]}")
[[ ${mode} == preempt || ${mode} == timelimit ]] || fail "MODE must be preempt or timelimit"
((${#program[@]} > 0)) || fail "no PROGRAM"
start_local_cluster
cd "${work}" || fail "cannot enter ${work}"
began=${SECONDS}
jobs=() reference_pid=""
trap '((${#jobs[@]} == 0)) || scancel "${jobs[@]}" 2>/dev/null
  [[ -z "${reference_pid}" ]] || kill "${reference_pid}" 2>/dev/null
  cd / && cleanup; bash "${cluster}" stop' EXIT
# The cluster script's own variables are not flexmpi settings (flexmpi refuses
# unknown FLEXMPI_ variables).
clean=(env -u FLEXMPI_SLURM_DIR -u FLEXMPI_SLURM_PORT)
elapsed() { echo "$((SECONDS - began)) s"; }

# The uninterrupted run, meanwhile.
"${clean[@]}" "${mpiexec}" -n 3 "${program[@]}" >reference.out 2>reference.err &
reference_pid=$!

time_limit=10
[[ ${mode} == timelimit ]] && time_limit=1
id=$("${clean[@]}" MPIEXEC="${mpiexec}" sbatch --parsable --time="${time_limit}" "${example}" \
  "${program[@]}") || fail "sbatch failed"
jobs+=("${id}")
out="${work}/flexmpi-checkpoint-${id}.out"

job_field() {  # job_field NAME: NAME=VALUE of scontrol show job
  scontrol show job "${id}" 2>/dev/null | grep -oE "(^| )$1=[^ ]*" | head -1 | cut -d= -f2
}
# wait_for WHAT SECONDS COMMAND...: until COMMAND succeeds, else fail.
wait_for() {
  local what=$1 deadline=$((SECONDS + $2))
  shift 2
  until "$@"; do
    ((SECONDS < deadline)) || fail "no ${what} after $(elapsed) (job ${id} $(job_field JobState)): $(cat "${out}" 2>/dev/null)"
    sleep 0.5
  done
}
ran() { grep -q "checkpoint_requeue: job ${id} run $1 at" "${out}" 2>/dev/null; }
requeued() { [[ $(job_field Restarts) -ge 1 || $(job_field JobState) =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT)$ ]]; }
ended() { [[ $(job_field JobState) =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)$ ]]; }

wait_for "first run" 30 ran 1
grep -q "run 1 at .* on 3 nodes" "${out}" || fail "the first run is not on 3 nodes: $(cat "${out}")"
echo "slurm_checkpoint_${mode}: job ${id} runs on 3 nodes ($(elapsed))"
if [[ ${mode} == preempt ]]; then
  sleep "${PREEMPT_AFTER:-6}"
  other=$(sbatch --parsable -p urgent -N2 --time=10 -o urgent.out --wrap 'sleep 600') ||
    fail "sbatch -p urgent failed"
  echo "slurm_checkpoint_${mode}: job ${other} of partition urgent submitted ($(elapsed))"
else
  other=$(sbatch --parsable -p flex -N2 --time=10 -o other.out --wrap 'sleep 600') ||
    fail "sbatch of the other job failed"
fi
jobs+=("${other}")

wait_for "requeue" 60 requeued
[[ $(job_field Restarts) == 1 ]] ||
  fail "job ${id} ended (or more) instead of being requeued once: $(job_field JobState), $(cat "${out}")"
echo "slurm_checkpoint_${mode}: requeued ($(elapsed)): $(grep -E 'SIG(USR1|TERM) at' "${out}")"
if [[ ${mode} == timelimit ]]; then
  scontrol update jobid="${id}" TimeLimit=10 || fail "cannot raise the time limit of job ${id}"
fi
for expected in "checkpoint_requeue: SIGUSR1 at" "exited with status 75" "requeueing job ${id}"; do
  grep -qF "${expected}" "${out}" || fail "the first run's output lacks '${expected}': $(cat "${out}")"
done

wait_for "second run" 60 ran 2
echo "slurm_checkpoint_${mode}: restarted ($(elapsed)): $(grep "run 2 at" "${out}")"
checkpoint=$(sed -n "s/.*run 2 at .*FLEXMPI_RESTART=//p" "${out}")
[[ -n ${checkpoint} && -e ${checkpoint} ]] || fail "the second run has no checkpoint: $(cat "${out}")"
grep -q "run 2 at .* on 2 nodes" "${out}" || fail "the second run is not on 2 nodes: $(cat "${out}")"

# The program's log (flexmpi's, or the stand-in's in its words): the second
# run resumed where the first one's checkpoint left off (a converged result
# alone would not tell a restart from iteration 0).
wait_for "restart message" 60 grep -q "restarted from .* at iteration" "${out}"
saved=$(sed -n "1,/run 2 at/s/.*checkpoint of iteration \([0-9]*\) written to .*/\1/p" "${out}" | tail -1)
resumed=$(sed -n "s/.*restarted from .* at iteration \([0-9]*\) on \([0-9]*\) processes.*/\1 \2/p" "${out}" |
  tail -1)
((${saved:-0} > 0)) || fail "no 'checkpoint of iteration N written to' before the requeue: $(cat "${out}")"
[[ ${resumed} == "${saved} 2" ]] ||
  fail "the second run did not resume at iteration ${saved} on 2 processes: $(cat "${out}")"

wait_for "end of the job" 300 ended
[[ $(job_field JobState) == COMPLETED && $(job_field ExitCode) == 0:0 ]] ||
  fail "job ${id}: $(job_field JobState), exit code $(job_field ExitCode): $(cat "${out}")"
[[ $(job_field Restarts) == 1 ]] || fail "job ${id} was requeued $(job_field Restarts) times"

wait "${reference_pid}" || fail "the uninterrupted run failed: $(cat reference.out reference.err)"
reference_pid=""
result() {  # result FILE: the last result line, without procs= and time=
  grep 'checksum=' "$1" | tail -1 | sed -E 's/ (procs|time)=[^ ]*//g'
}
expected=$(result reference.out) got=$(result "${out}")
[[ -n ${expected} ]] || fail "the uninterrupted run printed no result: $(cat reference.out reference.err)"
[[ ${got} == "${expected}" ]] ||
  fail "result '${got}' after the restart, '${expected}' uninterrupted: $(cat "${out}")"
if grep 'checksum=' "${out}" | tail -1 | grep -q 'procs='; then
  grep 'checksum=' "${out}" | tail -1 | grep -q ' procs=2 ' || fail "the result is not from 2 processes"
fi
echo "slurm_checkpoint_${mode}: job ${id}: 3 processes, checkpoint of iteration ${saved}, requeue," \
  "2 processes; result as uninterrupted (${got}) in $(elapsed)"
