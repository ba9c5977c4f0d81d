#!/usr/bin/env bash
# CTest "drum_comm_two_hosts": flexmpi-jacobi on two network-namespace hosts
# (tests/process/two_hosts.sh, one rank each), rank 1 emulated at half speed,
# balanced by the drum partitioner with communication weight 0.5. Each host
# measures its own veth link (/proc/net/dev and /sys/class/net of its
# namespace), and the equal links pull the shares towards equal: rank 1 must
# get 0.25 + 0.5 x p_1 / (p_0 + p_1), about 0.42 of the rows, where the
# processing power alone gives it about 0.33. Exit code 77 (skipped) where
# network namespaces cannot be made.
#   bash drum_two_hosts_test.sh TWO_HOSTS_SH MPIEXEC JACOBI
set -uo pipefail
two_hosts=$1 mpiexec=$2 jacobi=$3
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
# Each host's orted would bind its rank to "its" core 0, the same core for
# both: two_hosts.sh launches with --bind-to none (docs/architecture.md, "DRUM").
FLEXMPI_PARTITIONER=drum FLEXMPI_DRUM_COMM_WEIGHT=0.5 FLEXMPI_EMULATE_SPEED=1,0.5 \
  FLEXMPI_TRACE="${work}/trace.jsonl" TWO_HOSTS_MPIEXEC_ARGS="--map-by node" \
  bash "${two_hosts}" "${mpiexec}" "${jacobi}" --size 800 --iterations 600 --sampling-interval 25 \
  > "${work}/out" 2>&1
status=$?
((status == 77)) && { cat "${work}/out"; exit 77; }
((status == 0)) || { echo "the run failed (${status}): $(cat "${work}/out")" >&2; exit 1; }
python3 - "${work}/trace.jsonl" << 'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
power = records[-1]["node_communication_power"]
# A veth link reports 10000 Mbit/s: 1.25e9 octets/s, less the little traffic.
if not all(1.0e9 < c <= 1.25e9 for c in power):
    sys.exit(f"communication power per node {power}: expected ~1.25e9 octets/s on both veth hosts")
partitions = [r["partition"] for r in records if r.get("partition")]
if not partitions:
    sys.exit("the drum partitioner never balanced")
share = partitions[-1][1] / sum(partitions[-1])
if not 0.37 <= share <= 0.47:
    sys.exit(f"rank 1 holds {share:.3f} of the rows; with w_comm = 0.5 expected about 0.42 "
             f"(0.33 without the communication term)")
print(f"drum_comm_two_hosts: c_n {power}, rank 1 holds {share:.3f} of the rows")
PY
