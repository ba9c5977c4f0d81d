#!/usr/bin/env bash
# CTest "drum_comm_two_hosts": flexmpi-jacobi on two network-namespace hosts
# (tests/process/netns_hosts.sh, one rank each), balanced by the drum
# partitioner with communication weight 0.5. Each host measures its own link
# (/proc/net/dev, /sys/class/net and the link's tc shaping rate, in its
# namespace). Two cases; exit code 77 (skipped) where network namespaces
# cannot be made.
#  1. Equal links, rank 1 emulated at half speed: the links pull the shares
#     towards equal, so rank 1 must get 0.25 + 0.5 x p_1 / (p_0 + p_1), about
#     0.42 of the rows, where the processing power alone gives it about 0.33.
#  2. Equal speeds, host b behind a 10 Mbit/s link (a token bucket filter):
#     its c_n must be read as at most 1.25e6 octets/s, host a's as ~1.25e9,
#     and rank 1 must get about 0.5 x 0.001 + 0.5 x 0.5 = 0.25 of the rows.
#   bash drum_two_hosts_test.sh NETNS_HOSTS_SH MPIEXEC JACOBI
set -uo pipefail
netns_hosts=$1 mpiexec=$2 jacobi=$3
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT

# run NAME SPEEDS RATES: one run, its trace in ${work}/NAME.jsonl.
run() {
  FLEXMPI_PARTITIONER=drum FLEXMPI_DRUM_COMM_WEIGHT=0.5 FLEXMPI_EMULATE_SPEED=$2 \
    FLEXMPI_TRACE="${work}/$1.jsonl" NETNS_MPIEXEC_ARGS="--map-by node" NETNS_HOST_RATES=$3 \
    bash "${netns_hosts}" "${mpiexec}" "${jacobi}" --size 800 --iterations 600 \
    --sampling-interval 25 > "${work}/$1.out" 2>&1
  local status=$?
  ((status == 77)) && { cat "${work}/$1.out"; exit 77; }
  ((status == 0)) || { echo "run $1 failed (${status}): $(cat "${work}/$1.out")" >&2; exit 1; }
}
run equal_links 1,0.5 ""
run slow_link 1,1 "-,10mbit"
python3 - "${work}" << 'PY'
import json, sys
def last_share_and_power(name):
    records = [json.loads(line) for line in open(f"{sys.argv[1]}/{name}.jsonl")]
    partitions = [r["partition"] for r in records if r.get("partition")]
    if not partitions:
        sys.exit(f"{name}: the drum partitioner never balanced")
    return partitions[-1][1] / sum(partitions[-1]), records[-1]["node_communication_power"]
failures = []
share, power = last_share_and_power("equal_links")
# A veth link reports 10000 Mbit/s: 1.25e9 octets/s, less the little traffic.
if not all(1.0e9 < c <= 1.25e9 for c in power):
    failures.append(f"equal links: c_n {power}, expected ~1.25e9 octets/s on both veth hosts")
if not 0.37 <= share <= 0.47:
    failures.append(f"equal links: rank 1 holds {share:.3f} of the rows; with w_comm = 0.5 "
                    "expected about 0.42 (0.33 without the communication term)")
print(f"equal links: c_n {power}, rank 1 holds {share:.3f} of the rows")
slow_share, slow_power = last_share_and_power("slow_link")
if not (1.0e9 < slow_power[0] <= 1.25e9 and 0 <= slow_power[1] <= 1.25e6):
    failures.append(f"slow link: c_n {slow_power}, expected ~1.25e9 and <= 1.25e6 octets/s")
if not 0.20 <= slow_share <= 0.31:
    failures.append(f"slow link: rank 1 holds {slow_share:.3f} of the rows, expected about 0.25")
print(f"host b behind 10 Mbit/s: c_n {slow_power}, rank 1 holds {slow_share:.3f} of the rows")
if failures:
    sys.exit("drum_comm_two_hosts: " + "; ".join(failures))
PY
