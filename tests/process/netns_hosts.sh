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

id=$$
letters=(a b c d e f g h)
switch=fxs${id}
work=$(mktemp -d /tmp/flexmpi_netns_hosts.XXXXXX)
namespace() { echo "fx${letters[$1]}${id}"; }
cleanup() {
  for ((h = 0; h < hosts; ++h)); do
    ip netns del "$(namespace "${h}")" 2> /dev/null
    rm -rf "/etc/netns/$(namespace "${h}")"
  done
  ip netns del "${switch}" 2> /dev/null
  rm -rf "${work}"
}
trap cleanup EXIT

ip netns add "${switch}" 2> "${work}/err" || skip "ip netns add failed: $(cat "${work}/err")"
ip -n "${switch}" link add br0 type bridge && ip -n "${switch}" link set br0 up ||
  skip "cannot create a bridge"
host_names=() etc_hosts="127.0.0.1 localhost\n"
for ((h = 0; h < hosts; ++h)); do
  host_names+=("fxhost${letters[h]}")
  etc_hosts+="10.77.0.$((h + 1)) fxhost${letters[h]}\n"
done
for ((h = 0; h < hosts; ++h)); do
  ns=$(namespace "${h}") host_end=vh${letters[h]}${id} switch_end=vs${letters[h]}${id}
  ip netns add "${ns}" || skip "ip netns add failed"
  ip link add "${host_end}" type veth peer name "${switch_end}" 2> "${work}/err" ||
    skip "cannot create a veth pair: $(cat "${work}/err")"
  ip link set "${host_end}" netns "${ns}" && ip link set "${switch_end}" netns "${switch}" &&
    ip -n "${switch}" link set "${switch_end}" master br0 &&
    ip -n "${switch}" link set "${switch_end}" up &&
    ip -n "${ns}" addr add "10.77.0.$((h + 1))/24" dev "${host_end}" &&
    ip -n "${ns}" link set "${host_end}" up && ip -n "${ns}" link set lo up ||
    skip "cannot configure host ${host_names[h]}'s link"
  rate=${rates[h]:-}
  if [[ -n ${rate} && ${rate} != - ]]; then
    for end in "${ns} ${host_end}" "${switch} ${switch_end}"; do
      read -r where device <<< "${end}"
      tc -n "${where}" qdisc add dev "${device}" root tbf rate "${rate}" burst 32kbit latency 400ms ||
        { echo "netns_hosts.sh: cannot shape ${host_names[h]}'s link to '${rate}'" >&2; exit 2; }
    done
  fi
  mkdir -p "/etc/netns/${ns}" || skip "cannot write /etc/netns"
  printf "${etc_hosts}" > "/etc/netns/${ns}/hosts"
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
