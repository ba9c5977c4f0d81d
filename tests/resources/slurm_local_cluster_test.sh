#!/usr/bin/env bash
# CTest "slurm_local_cluster": scripts/slurm-local.sh starts 4 idle nodes,
# srun and sbatch run a job on them, and the cluster is stopped again (also
# when a step fails). Exit code 77 (skipped) where Slurm cannot start.
#   bash slurm_local_cluster_test.sh PATH/TO/slurm-local.sh
set -uo pipefail
started=$SECONDS
source "$(dirname "$0")/slurm_test_lib.sh" slurm_local_cluster "$1"
start_local_cluster

idle=$(timeout 20 sinfo -h -N -p flex -t idle -o '%N' | sort -u | wc -l)
((idle == 4)) || fail "sinfo shows ${idle} idle nodes, expected 4"

host=$(timeout 30 srun -N1 -p flex hostname) || fail "srun -N1 hostname failed"
[[ "${host}" == "$(hostname)" ]] || fail "srun -N1 hostname printed '${host}', expected $(hostname)"

output=$(mktemp)
job=$(timeout 20 sbatch --parsable -N2 -p flex -o "${output}" --wrap 'srun hostname') ||
  fail "sbatch failed"
for _ in $(seq 60); do
  [[ -z "$(squeue -h -j "${job}" 2>/dev/null)" ]] && break
  sleep 0.5
done
lines=$(wc -l <"${output}")
rm -f "${output}"
((lines == 2)) || fail "the sbatch job of 2 nodes printed ${lines} lines, expected 2"
echo "slurm_local_cluster: 4 idle nodes, srun and sbatch ran ($((SECONDS - started)) s)"
