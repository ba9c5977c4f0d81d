#!/usr/bin/env bash
# Runs an MPI program on several "hosts" of this machine: network namespaces,
# each with its own hostname (a UTS namespace) and /etc/hosts
# (/etc/netns/NAME/hosts), joined by a switch (a bridge in a namespace of its
# own; the machine's own network is not touched). mpiexec runs on the first
# host; Open MPI reaches the others through an rsh agent that enters their
# namespace (--mca plm_rsh_agent). Exits 77 (CTest: skipped) with the reason
# when the machine cannot do this (not root, no ip/unshare/tc, namespaces
# refused).
#
#   netns_hosts.sh MPIEXEC PROGRAM [ARGS...]
#
# NETNS_HOSTS       number of hosts, 2 to 8 (default 2): fxhosta, fxhostb, ...
#                   at 10.77.0.1, .2, ...; each has 2 slots and its own node class
# NETNS_HOST_RATES  comma-separated link rates, one per host, in tc's units
#                   (e.g. 10mbit,10mbit,100mbit,100mbit); "-" or empty leaves a
#                   link unshaped. A token bucket filter shapes both directions
#                   of the host's link, so the host is "behind" a slower link.
# NETNS_RANKS       mpiexec -n (default: NETNS_HOSTS)
# NETNS_MPIEXEC_ARGS  more mpiexec arguments (e.g. --map-by node)
# FLEXMPI_* variables of the environment reach the processes on every host.
# The processes are not bound: each host's orted would bind its first rank to
# its core 0, which is the same core for every host.
set -u
mpiexec=$1
shift
program="$*"
hosts=${NETNS_HOSTS:-2}
ranks=${NETNS_RANKS:-${hosts}}
IFS=, read -r -a rates <<< "${NETNS_HOST_RATES:-}"
exports=""
for name in $(env | sed -n 's/^\(FLEXMPI_[A-Z_]*\)=.*/\1/p'); do exports="${exports} -x ${name}"; done
skip() {
  echo "SKIPPED: $*"
  exit 77
}
[[ ${hosts} =~ ^[2-8]$ ]] || { echo "netns_hosts.sh: NETNS_HOSTS=${hosts}: expected 2 to 8" >&2; exit 2; }
[[ $(id -u) == 0 ]] || skip "creating network namespaces needs root"
for tool in ip unshare timeout tc; do
  command -v "${tool}" > /dev/null || skip "${tool} is not installed"
done

source "$(dirname "$0")/../../scripts/netns-lib.sh"
id=$$
letters=(a b c d e f g h)
switch=fxs${id}
work=$(mktemp -d /tmp/flexmpi_netns_hosts.XXXXXX)
namespace() { echo "fx${letters[$1]}${id}"; }
cleanup() {
  for ((h = 0; h < hosts; ++h)); do netns_delete "$(namespace "${h}")"; done
  netns_delete "${switch}"
  rm -rf "${work}"
}
trap cleanup EXIT

netns_switch_create "${switch}" || skip "${netns_error}"
host_names=() etc_hosts="127.0.0.1 localhost\n"
for ((h = 0; h < hosts; ++h)); do
  host_names+=("fxhost${letters[h]}")
  etc_hosts+="10.77.0.$((h + 1)) fxhost${letters[h]}\n"
done
for ((h = 0; h < hosts; ++h)); do
  netns_host_create "${switch}" "$(namespace "${h}")" "${letters[h]}${id}" \
    "10.77.0.$((h + 1))/24" "${rates[h]:-}"
  case $? in
    0) ;;
    2) echo "netns_hosts.sh: ${netns_error}" >&2; exit 2 ;;
    *) skip "${netns_error}" ;;
  esac
  netns_hosts_file "$(namespace "${h}")" "${etc_hosts}" || skip "cannot write /etc/netns"
done
ip netns exec "$(namespace 0)" unshare --uts true 2> "${work}/err" ||
  skip "cannot create a UTS namespace: $(cat "${work}/err")"

# The rsh agent: "HOST COMMAND..." runs COMMAND (one shell line, as ssh
# would) in HOST's namespace under HOST's name.
{
  echo '#!/bin/sh'
  echo 'host=$1; shift'
  echo 'case "$host" in'
  for ((h = 0; h < hosts; ++h)); do echo "  ${host_names[h]}) ns=$(namespace "${h}") ;;"; done
  echo '  *) echo "agent: unknown host $host" >&2; exit 1 ;;'
  echo 'esac'
  echo 'exec ip netns exec "$ns" unshare --uts sh -c "hostname $host; $*"'
} > "${work}/agent"
chmod +x "${work}/agent"
host_list=""
for ((h = 0; h < hosts; ++h)); do
  echo "${host_names[h]}:${letters[h]}:2" >> "${work}/hosts"
  host_list+="${host_list:+,}${host_names[h]}:2"
done

echo "${hosts} hosts: ${host_names[*]} (10.77.0.1-${hosts}), links: ${NETNS_HOST_RATES:-unshaped}"
# A run that hangs in Open MPI's MPI_Comm_spawn is retried (run_spawn_test.sh).
bash "$(dirname "$0")/run_spawn_test.sh" 60 3 \
  ip netns exec "$(namespace 0)" unshare --uts sh -c "hostname ${host_names[0]} && \
  FLEXMPI_HOSTFILE=${work}/hosts exec ${mpiexec} --mca plm_rsh_agent ${work}/agent \
  --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
  --host ${host_list} --bind-to none ${NETNS_MPIEXEC_ARGS:-} -x FLEXMPI_HOSTFILE ${exports} \
  -n ${ranks} ${program}"
