#!/usr/bin/env bash
# Measures the cost of creating and removing a dynamic process (docs/results.md,
# "Process creation and removal") with bench-spawn-cost, in RUNS separate mpiexec
# runs of REPEAT repetitions each, their samples gathered in one JSON file.
#
#   bench/spawn_cost/run.sh [--runs N] [--repeat R] [--batch K] [--tuned] [--output FILE]
#
# --tuned runs with OMPI_MCA_pml=ob1 PMIX_MCA_gds=hash (see docs/results.md).
# Open MPI 4.1 with PMIx 4 sometimes hangs in MPI_Comm_spawn (openpmix#2735): a
# run still going after 120 s is killed (its process group) and run again; the
# number of such runs is printed at the end.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-${root}/build}
runs=5 repeat=2 batch=4 output=spawn_cost.json
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    --tuned) export OMPI_MCA_pml=ob1 PMIX_MCA_gds=hash; shift ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
tool=${build}/bench/spawn_cost/bench-spawn-cost
[[ -x ${tool} ]] || { echo "run.sh: build ${tool} first (make bench-spawn-cost)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
mpiexec=$(command -v mpiexec.openmpi || command -v mpiexec)
rm -f "${output}"
hung=0 done_runs=0
while ((done_runs < runs)); do
  setsid "${mpiexec}" -n 2 "${tool}" --repeat "${repeat}" --batch "${batch}" \
    --output "${output}" --append > "${output}.log" 2>&1 &
  pid=$!
  deadline=$((SECONDS + 120))
  while kill -0 "${pid}" 2> /dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "${pid}" 2> /dev/null; then
    kill -9 -- "-${pid}" 2> /dev/null || true
    wait "${pid}" 2> /dev/null || true
    hung=$((hung + 1))
    echo "run $((done_runs + 1)): hung in MPI_Comm_spawn (openpmix#2735), run again" >&2
    ((hung < 10)) || { echo "run.sh: 10 runs hung, giving up" >&2; exit 1; }
    continue
  fi
  wait "${pid}" || { cat "${output}.log" >&2; exit 1; }
  done_runs=$((done_runs + 1))
done
grep -v '^\[flexmpi' "${output}.log"
rm -f "${output}.log"
echo "runs that hung and were run again: ${hung}"
