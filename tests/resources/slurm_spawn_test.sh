#!/usr/bin/env bash
# CTest "slurm_spawn_jacobi": flexmpi-jacobi inside `salloc -N2` of the local
# cluster (scripts/slurm-local.sh) with FLEXMPI_RESOURCES=slurm and the SMP
# policy's schedule: 2 processes are spawned at iteration 100 onto the
# partition's idle nodes, which helper jobs book, and removed at iteration
# 300, after which the helper jobs end. Checks: the run's result, 4
# processes in the trace, helper jobs allocated n3 and n4, none left after.
# MODE join (FLEXMPI_SLURM_JOIN): the helper jobs start the new processes,
# which join through ompi-server; each helper must have run its script.
# MODE join-hosts: the same on a cluster whose nodes are hosts of their own
# (slurm-local.sh start --netns): the job starts on n1 (salloc -N1 there, one
# process: n1 has one CPU), the
# new processes run on the helper jobs' nodes and must say so
# (MPI_Get_processor_name, the trace's processor_names).
# Exit code 77 (skipped) where Slurm cannot start.
#   bash slurm_spawn_test.sh SLURM_LOCAL_SH RUN_SPAWN_TEST_SH MPIEXEC JACOBI [spawn|join|join-hosts]
set -uo pipefail
mode=${5:-spawn}
source "$(dirname "$0")/slurm_test_lib.sh" "slurm_${mode}_jacobi" "$1"
runner=$2 mpiexec=$3 jacobi=$4
on=() allocation=(-N2) ranks=2 helper_nodes=(n3 n4)
if [[ ${mode} == join-hosts ]]; then
  start_local_cluster --netns
  on=(bash "${cluster}" on n1)  # Slurm and the job's processes live on n1
  allocation=(-N1 -w n1) ranks=1  # n1 has 1 CPU
else
  start_local_cluster
fi
join=() mpiexec_join=()
if [[ ${mode} == join* ]]; then
  start_ompi_server "${on[@]}"
  join=(FLEXMPI_SLURM_JOIN="${work}/ompi-server.uri" FLEXMPI_SLURM_MPIEXEC="${mpiexec}")
  mpiexec_join=(--ompi-server "file:${work}/ompi-server.uri")
fi

printf '100 spawn 2\n300 remove 2\n' >"${work}/schedule"
# The local cluster's nodes are not host names (all localhost): mpirun must
# not launch through Slurm, and flexmpi places the processes itself. The
# cluster script's own variables are not flexmpi settings (flexmpi refuses
# unknown FLEXMPI_ variables).
bash "${runner}" 90 3 "${on[@]}" salloc "${allocation[@]}" -p flex env -u FLEXMPI_SLURM_DIR -u FLEXMPI_SLURM_PORT \
  FLEXMPI_POLICY=smp \
  FLEXMPI_SCHEDULE="${work}/schedule" FLEXMPI_RESOURCES=slurm FLEXMPI_TRACE="${work}/trace.jsonl" \
  "${join[@]}" OMPI_MCA_ras=^slurm OMPI_MCA_plm=^slurm \
  "${mpiexec}" "${mpiexec_join[@]}" -n "${ranks}" -x SLURM_CONF "${jacobi}" --size 1000 --iterations 500 \
  --sampling-interval 50 >"${work}/out" 2>&1 ||
  fail "the run failed: $(cat "${work}/out")"
residual=$(awk '/residual/ {print $NF}' "${work}/out")
python3 - "${residual}" <<'PY' || fail "residual '${residual}', expected below 1e-6: $(cat "${work}/out")"
import sys
sys.exit(0 if float(sys.argv[1]) < 1e-6 else 1)
PY
peak=$(python3 -c 'import json,sys; print(max(json.loads(l)["nprocs"] for l in open(sys.argv[1])))' \
  "${work}/trace.jsonl")
((peak == ranks + 2)) || fail "at most ${peak} processes in the trace, expected $((ranks + 2))"
if [[ ${mode} == join-hosts ]]; then
  # Where the new processes said they ran: the nodes their helper jobs hold.
  read -r -a helper_nodes < <(python3 - "${work}/trace.jsonl" <<'PY'
import json, sys
names = [n for line in open(sys.argv[1]) for e in json.loads(line).get("reconfigurations", [])
         if e["action"] == "spawn" for n in e.get("processor_names", [])]
print(" ".join(names))
PY
  )
  [[ ${#helper_nodes[@]} == 2 ]] || fail "2 new processes expected in the trace, got '${helper_nodes[*]}'"
  for node in "${helper_nodes[@]}"; do
    [[ ${node} =~ ^n[234]$ ]] || fail "a new process ran on '${node}', not on an idle node n2-n4"
  done
  [[ ${helper_nodes[0]} != "${helper_nodes[1]}" ]] || fail "both new processes on ${helper_nodes[0]}"
fi
log="${FLEXMPI_SLURM_DIR:-/tmp/flexmpi-slurm}/log/slurmctld.log"
for node in "${helper_nodes[@]}"; do
  grep -Eq "Allocate JobId=[0-9]+ NodeList=${node} " "${log}" ||
    fail "no helper job was allocated ${node} (${log})"
done
left=$("${on[@]}" squeue -h -o '%j' | grep -c '^flexmpi-helper-')
((left == 0)) || fail "${left} helper jobs left after the run"
if [[ ${mode} == join* ]]; then
  for node in "${helper_nodes[@]}"; do
    ran=$(find "${work}" -path "*/flexmpi-join-*/${node}.*.sh.run" | head -1)
    [[ -n "${ran}" ]] || fail "the helper job on ${node} ran no process: $(ls -R "${work}")"
    grep -q "FLEXMPI_JOIN_PORT=" "${ran}" || fail "${ran} does not start a joining process"
  done
fi
echo "slurm_${mode}_jacobi: ${ranks} -> ${peak} -> ${ranks} processes, helper jobs on" \
  "${helper_nodes[*]}, released"
