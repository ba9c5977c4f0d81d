# Sourced: "hosts" on this one machine as network namespaces joined by a
# switch (a bridge in a namespace of its own; the machine's own network is not
# touched). Used by tests/process/netns_hosts.sh (MPI across hosts) and
# scripts/slurm-local.sh --netns (a Slurm cluster whose nodes are hosts).
# Each function returns non-zero with a message in ${netns_error} on failure.

# netns_switch_create SWITCH: the switch's namespace and its bridge br0.
netns_switch_create() {
  netns_error=""
  ip netns add "$1" 2>/dev/null || { netns_error="ip netns add $1 failed"; return 1; }
  ip -n "$1" link add br0 type bridge && ip -n "$1" link set br0 up ||
    { netns_error="cannot create a bridge in $1"; return 1; }
}

# netns_host_create SWITCH NAMESPACE LINK_SUFFIX ADDRESS/PREFIX [RATE]: a host
# namespace plugged into the switch (veth vhLINK_SUFFIX - vsLINK_SUFFIX) with
# ADDRESS; a RATE (tc's units) shapes both directions of its link.
netns_host_create() {
  local switch=$1 ns=$2 host_end=vh$3 switch_end=vs$3 address=$4 rate=${5:-}
  netns_error=""
  ip netns add "${ns}" 2>/dev/null || { netns_error="ip netns add ${ns} failed"; return 1; }
  ip link add "${host_end}" type veth peer name "${switch_end}" 2>/dev/null ||
    { netns_error="cannot create a veth pair"; return 1; }
  ip link set "${host_end}" netns "${ns}" && ip link set "${switch_end}" netns "${switch}" &&
    ip -n "${switch}" link set "${switch_end}" master br0 &&
    ip -n "${switch}" link set "${switch_end}" up &&
    ip -n "${ns}" addr add "${address}" dev "${host_end}" &&
    ip -n "${ns}" link set "${host_end}" up && ip -n "${ns}" link set lo up ||
    { netns_error="cannot configure ${ns}'s link"; return 1; }
  if [[ -n ${rate} && ${rate} != - ]]; then
    local end where device
    for end in "${ns} ${host_end}" "${switch} ${switch_end}"; do
      read -r where device <<<"${end}"
      tc -n "${where}" qdisc add dev "${device}" root tbf rate "${rate}" burst 32kbit \
        latency 400ms || { netns_error="cannot shape ${ns}'s link to '${rate}'"; return 2; }
    done
  fi
}

# netns_hosts_file NAMESPACE CONTENT: the /etc/hosts processes in NAMESPACE see
# (ip netns exec mounts /etc/netns/NAMESPACE/hosts over it).
netns_hosts_file() {
  mkdir -p "/etc/netns/$1" && printf '%b' "$2" >"/etc/netns/$1/hosts"
}

# netns_delete NAMESPACE...: the namespaces and their /etc/netns entries.
netns_delete() {
  local ns
  for ns in "$@"; do
    ip netns del "${ns}" 2>/dev/null
    rm -rf "/etc/netns/${ns}"
  done
}
