#!/usr/bin/env bash
# A stand-in for a flexmpi program with checkpoint/restart, for
# slurm_checkpoint_test.sh until the library has it: the same contract, each
# rank a bash process under mpiexec.
#   FLEXMPI_CHECKPOINT=FILE      SIGUSR1 (and SIGTERM if FLEXMPI_CHECKPOINT_SIGNALS
#                                lists TERM) writes FILE at the end of the current
#                                iteration (rank 0; a temporary name, then renamed)
#                                and every rank exits with status 75
#   FLEXMPI_RESTART=FILE         resume from FILE's iteration, on any number of ranks
# At the end rank 0 prints one line in flexmpi-jacobi --quiet's form, whose
# checksum depends on every iteration:
#   program=checkpoint-standin iterations=N procs=P time=T checksum=C
#
#   mpiexec -n P checkpoint_standin.sh [--iterations N] [--delay SECONDS]
set -u
iterations=400 delay=0.05
while (($# > 0)); do
  case "$1" in
    --iterations) iterations=$2 && shift 2 ;;
    --delay) delay=$2 && shift 2 ;;
    --quiet) shift ;;
    *) echo "checkpoint_standin: unknown argument '$1'" >&2 && exit 2 ;;
  esac
done
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
procs=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-1}}
started=$(date +%s.%N)

it=0 checksum=1
if [[ -n ${FLEXMPI_RESTART:-} ]]; then
  read -r it checksum <"${FLEXMPI_RESTART}" && [[ ${it} =~ ^[0-9]+$ && ${checksum} =~ ^[0-9]+$ ]] || {
    echo "checkpoint_standin: cannot read the checkpoint ${FLEXMPI_RESTART}" >&2
    exit 1
  }
  ((rank == 0)) && echo "checkpoint_standin: restarted at iteration ${it} on ${procs} processes" >&2
fi

stop=""
if [[ -n ${FLEXMPI_CHECKPOINT:-} ]]; then
  trap 'stop=USR1' USR1
  [[ ",${FLEXMPI_CHECKPOINT_SIGNALS:-USR1}," == *,TERM,* ]] && trap 'stop=TERM' TERM
fi

while ((it < iterations)); do
  checksum=$(((checksum * 31 + it * it + 7) % 1000000007))
  it=$((it + 1))
  if [[ -n ${stop} ]]; then  # the end of an iteration: checkpoint, "requeue me"
    if ((rank == 0)); then
      echo "${it} ${checksum}" >"${FLEXMPI_CHECKPOINT}.tmp" &&
        mv -f "${FLEXMPI_CHECKPOINT}.tmp" "${FLEXMPI_CHECKPOINT}" || exit 1
      echo "checkpoint_standin: SIG${stop}: checkpoint of iteration ${it} in ${FLEXMPI_CHECKPOINT}" >&2
    fi
    exit 75
  fi
  sleep "${delay}"
done
if ((rank == 0)); then
  printf 'program=checkpoint-standin iterations=%d procs=%d time=%.3f checksum=%d\n' \
    "${iterations}" "${procs}" "$(awk -v a="${started}" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')" "${checksum}"
fi
