#!/usr/bin/env bash
# Runs tests/process/two_hosts.cpp on two "hosts" of this machine: network
# namespaces joined by a veth pair, each with its own hostname (a UTS
# namespace) and /etc/hosts (/etc/netns/NAME/hosts). mpiexec runs in the first;
# Open MPI reaches the second through an rsh agent that enters its namespace
# (--mca plm_rsh_agent). Exits 77 (CTest: skipped) with the reason when the
# machine cannot do this (not root, no ip/unshare, namespaces refused).
#
#   two_hosts.sh MPIEXEC PROGRAM [ARGS...]
# FLEXMPI_* variables of the environment reach the processes on both hosts;
# TWO_HOSTS_MPIEXEC_ARGS adds mpiexec arguments (e.g. --map-by node). The
# processes are not bound: each host's orted would bind its first rank to
# its core 0, which is the same core for both hosts.
set -u
mpiexec=$1
shift
program="$*"
exports=""
for name in $(env | sed -n 's/^\(FLEXMPI_[A-Z_]*\)=.*/\1/p'); do exports="${exports} -x ${name}"; done
skip() {
  echo "SKIPPED: $*"
  exit 77
}
[[ $(id -u) == 0 ]] || skip "creating network namespaces needs root"
for tool in ip unshare timeout; do
  command -v "${tool}" > /dev/null || skip "${tool} is not installed"
done

id=$$
ns_a=fxa${id} ns_b=fxb${id}
work=$(mktemp -d /tmp/flexmpi_two_hosts.XXXXXX)
cleanup() {
  ip netns del "${ns_a}" 2> /dev/null
  ip netns del "${ns_b}" 2> /dev/null
  rm -rf "/etc/netns/${ns_a}" "/etc/netns/${ns_b}" "${work}"
}
trap cleanup EXIT

ip netns add "${ns_a}" 2> "${work}/err" || skip "ip netns add failed: $(cat "${work}/err")"
ip netns add "${ns_b}" || skip "ip netns add failed"
ip link add "va${id}" type veth peer name "vb${id}" 2> "${work}/err" ||
  skip "cannot create a veth pair: $(cat "${work}/err")"
ip link set "va${id}" netns "${ns_a}" && ip link set "vb${id}" netns "${ns_b}" &&
  ip -n "${ns_a}" addr add 10.77.0.1/24 dev "va${id}" &&
  ip -n "${ns_b}" addr add 10.77.0.2/24 dev "vb${id}" &&
  ip -n "${ns_a}" link set "va${id}" up && ip -n "${ns_b}" link set "vb${id}" up &&
  ip -n "${ns_a}" link set lo up && ip -n "${ns_b}" link set lo up ||
  skip "cannot configure the veth pair"
for ns in "${ns_a}" "${ns_b}"; do
  mkdir -p "/etc/netns/${ns}" || skip "cannot write /etc/netns"
  printf '127.0.0.1 localhost\n10.77.0.1 fxhosta\n10.77.0.2 fxhostb\n' > "/etc/netns/${ns}/hosts"
done
ip netns exec "${ns_a}" unshare --uts true 2> "${work}/err" ||
  skip "cannot create a UTS namespace: $(cat "${work}/err")"

# The rsh agent: "HOST COMMAND..." runs COMMAND (one shell line, as ssh
# would) in HOST's namespace under HOST's name.
cat > "${work}/agent" << AGENT
#!/bin/sh
host=\$1; shift
case "\$host" in
  fxhosta) ns=${ns_a} ;;
  fxhostb) ns=${ns_b} ;;
  *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$host; \$*"
AGENT
chmod +x "${work}/agent"
printf 'fxhosta:a:2\nfxhostb:b:2\n' > "${work}/hosts"

echo "two hosts: fxhosta (${ns_a}, 10.77.0.1) and fxhostb (${ns_b}, 10.77.0.2)"
# A run that hangs in Open MPI's MPI_Comm_spawn is retried (run_spawn_test.sh).
bash "$(dirname "$0")/run_spawn_test.sh" 60 3 \
  ip netns exec "${ns_a}" unshare --uts sh -c "hostname fxhosta && \
  FLEXMPI_HOSTFILE=${work}/hosts exec ${mpiexec} --mca plm_rsh_agent ${work}/agent \
  --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
  --host fxhosta:2,fxhostb:2 --bind-to none ${TWO_HOSTS_MPIEXEC_ARGS:-} -x FLEXMPI_HOSTFILE ${exports} \
  -n 2 ${program}"
