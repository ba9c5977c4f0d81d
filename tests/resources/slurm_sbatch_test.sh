#!/usr/bin/env bash
# CTest "slurm_sbatch_example": examples/slurm/jacobi.sbatch submitted with
# `sbatch -W` to the local cluster (scripts/slurm-local.sh). Checks what
# flexrun read from the allocation (its --dry-run: FLEXMPI_RESOURCES=slurm,
# mpirun's Slurm launch off, -n 2), the run's result, and that no helper job
# is left. A job still running after 2 minutes is Open MPI's spawn hang
# (tests/process/run_spawn_test.sh): Slurm ends it and it is submitted once more.
# Exit code 77 (skipped) where Slurm cannot start.
#   bash slurm_sbatch_test.sh SLURM_LOCAL_SH EXAMPLE FLEXRUN JACOBI
set -uo pipefail
source "$(dirname "$0")/slurm_test_lib.sh" slurm_sbatch_example "$1"
example=$2 flexrun=$3 jacobi=$4
start_local_cluster
cd "${work}" || fail "cannot enter ${work}"

for attempt in 1 2; do
  # The cluster script's own variables are not flexmpi settings.
  id=$(env -u FLEXMPI_SLURM_DIR -u FLEXMPI_SLURM_PORT sbatch --parsable -W --time=2 \
    "${example}" "${flexrun}" "${jacobi}") || true
  out="${work}/flexmpi-jacobi-${id}.out"
  [[ -n "${id}" && -f "${out}" ]] || fail "sbatch gave no job or no output (attempt ${attempt})"
  grep -q "residual" "${out}" && break
  echo "slurm_sbatch_example: attempt ${attempt} failed: $(cat "${out}")" >&2
  ((attempt == 2)) && fail "the batch job failed twice"
done
for expected in "export FLEXMPI_RESOURCES=slurm" "export OMPI_MCA_plm='^slurm'" " -n 2 " \
  " --ompi-server file:ompi-server-${id}.uri "; do
  grep -qF -- "${expected}" "${out}" || fail "flexrun --dry-run lacks '${expected}': $(cat "${out}")"
done
residual=$(awk '/residual/ {print $NF}' "${out}")
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 1e-6 else 1)' "${residual}" ||
  fail "residual '${residual}', expected below 1e-6: $(cat "${out}")"
[[ -s "${work}/flexmpi-jacobi-${id}.jsonl" ]] || fail "no trace written"
sleep 1
left=$(squeue -h -o '%j' | grep -c '^flexmpi-helper-')
((left == 0)) || fail "${left} helper jobs left after the batch job"
echo "slurm_sbatch_example: job ${id} ran under flexrun inside sbatch, residual ${residual}"
