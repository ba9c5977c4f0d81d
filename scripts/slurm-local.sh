#!/usr/bin/env bash
# A real Slurm cluster of 4 nodes on this one machine, for the slurm tests and
# demos: its own munged, one slurmctld and one slurmd per node
# (`slurmd -N nK`, every node is localhost on its own port). Everything --
# configuration, keys, state, spool, logs, sockets -- lives under one
# directory, so the machine's own munge or Slurm (if any) is not touched.
#
#   bash scripts/slurm-local.sh start    # install if needed, start, wait until 4 nodes are idle
#   bash scripts/slurm-local.sh status   # sinfo of the local cluster (exit 1 if it is not up)
#   bash scripts/slurm-local.sh stop     # stop every daemon it started, remove the directory
#   eval "$(bash scripts/slurm-local.sh env)"   # SLURM_CONF for sinfo, srun, salloc, ...
#   bash scripts/slurm-local.sh on NODE CMD...   # CMD "on" a node (see --netns)
#
# start --netns: every node is a host of its own, a network namespace with
# its own name (a UTS namespace) and address (10.78.0.K, scripts/netns-lib.sh);
# slurmd -N nK runs in nK's namespace, slurmctld in n1's. The machine's
# network is not touched, so Slurm is reachable only from a node: run its
# commands with `slurm-local.sh on n1 ...` (without --netns, `on` just runs them).
#
# start and stop are idempotent. Exit code 77 (CTest's "skipped") with a
# message when Slurm cannot run here (not root, packages not installable,
# a daemon that does not come up).
#   FLEXMPI_SLURM_DIR      the directory (default /tmp/flexmpi-slurm)
#   FLEXMPI_SLURM_PORT     slurmctld's port, the nodes' follow it (default 17000)
#   FLEXMPI_SLURM_TIMEOUT  seconds to wait for idle nodes (default 60)
set -uo pipefail

dir=${FLEXMPI_SLURM_DIR:-/tmp/flexmpi-slurm}
timeout=${FLEXMPI_SLURM_TIMEOUT:-60}
nodes=(n1 n2 n3 n4)
controller_port=${FLEXMPI_SLURM_PORT:-17000}
first_node_port=$((controller_port + 1))
packages=(munge slurmctld slurmd slurm-client)
export SLURM_CONF="${dir}/etc/slurm.conf"
source "$(dirname "${BASH_SOURCE[0]}")/netns-lib.sh"
namespace_prefix=fxsl${controller_port}
netns_mode() { [[ -f "${dir}/netns" ]]; }
node_address() { echo "10.78.0.${1#n}"; }

# on NODE CMD...: CMD in NODE's namespace under NODE's host name (--netns), else
# here. With on_exec=exec, CMD replaces this script (every step execs), so a
# signal to the script's pid reaches CMD.
on() {
  local node=$1
  shift
  if netns_mode; then
    # Not `ip netns exec`: it mounts a sysfs of the namespace over /sys, where
    # slurmd then finds no cgroup file system and does not start.
    ${on_exec:-} nsenter --net="/run/netns/${namespace_prefix}${node}" unshare --uts --mount \
      sh -c 'mount --bind "$1" /etc/hosts && hostname "$0" && shift && exec "$@"' \
      "${node}" "/etc/netns/${namespace_prefix}${node}/hosts" "$@"
  else
    ${on_exec:-} "$@"
  fi
}

starting=""
skip() {  # skip MESSAGE: Slurm cannot run here (what start started is stopped)
  echo "slurm-local: cannot start Slurm here: $1" >&2
  [[ -z "${starting}" ]] || stop >/dev/null 2>&1
  exit 77
}

ensure_packages() {
  local missing=()
  for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "${package}" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("${package}")
  done
  ((${#missing[@]} == 0)) && return 0
  echo "slurm-local: installing ${missing[*]}"
  env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" \
    </dev/null >"${dir}/log/apt.log" 2>&1 ||
    skip "apt-get install ${missing[*]} failed (${dir}/log/apt.log)"
}

# The nodes: all localhost on ports of their own, or (--netns) hosts.
node_lines() {
  if netns_mode; then
    for node in "${nodes[@]}"; do
      echo "NodeName=${node} NodeAddr=$(node_address "${node}") NodeHostname=${node}" \
        "Port=${first_node_port} CPUs=1 State=UNKNOWN"
    done
  else
    echo "NodeName=n[1-${#nodes[@]}] NodeHostname=localhost" \
      "Port=${first_node_port}-$((first_node_port + ${#nodes[@]} - 1)) CPUs=1 State=UNKNOWN"
  fi
}

write_config() {
  local controller=localhost
  netns_mode && controller="localhost($(node_address n1))"
  cat >"${SLURM_CONF}" <<EOF
# Written by scripts/slurm-local.sh: ${#nodes[@]} nodes on this machine.
ClusterName=flexmpi
SlurmctldHost=${controller}
SlurmctldPort=${controller_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# cred_expire: a requeued job may start again cred_expire + 1 s later (default 120).
AuthInfo=socket=${dir}/munge/munge.socket,cred_expire=10
CredType=cred/munge
StateSaveLocation=${dir}/state
SlurmdSpoolDir=${dir}/spool/%n
SlurmctldPidFile=${dir}/run/slurmctld.pid
SlurmdPidFile=${dir}/run/slurmd-%n.pid
SlurmctldLogFile=${dir}/log/slurmctld.log
SlurmdLogFile=${dir}/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SwitchType=switch/none
# Whole nodes: a node is idle or held by one job, as the resource manager sees it.
SelectType=select/linear
# A job may grow (a job with --dependency=expand:<id>) and shrink (scontrol update NumNodes).
# bf_interval: a job whose begin time has passed (a requeued job) starts within 5 s, not 30.
SchedulerParameters=permit_job_expansion,bf_interval=5
# Priorities comparable between jobs: small by default (age), raised with sbatch --priority.
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityMaxAge=1-0
SchedulerType=sched/backfill
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
# Preemption (tests/resources/slurm_checkpoint_test.sh): a job of partition
# urgent (PriorityTier 2) requeues jobs of flex on the nodes it needs, after
# GraceTime seconds in which they get their --signal (or SIGTERM) to checkpoint.
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
SlurmctldParameters=preempt_send_user_signal
$(node_lines)
PartitionName=flex Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1 GraceTime=30
PartitionName=urgent Nodes=ALL MaxTime=INFINITE State=UP PriorityTier=2 PreemptMode=OFF
EOF
}

start_munge() {
  [[ -S "${dir}/munge/munge.socket" ]] && munge -S "${dir}/munge/munge.socket" -n >/dev/null 2>&1 &&
    return 0
  if [[ ! -f "${dir}/munge/munge.key" ]]; then
    mungekey --create --keyfile="${dir}/munge/munge.key" >/dev/null 2>&1 ||
      dd if=/dev/urandom of="${dir}/munge/munge.key" bs=1024 count=1 status=none
    chmod 0400 "${dir}/munge/munge.key"
  fi
  munged --key-file="${dir}/munge/munge.key" --socket="${dir}/munge/munge.socket" \
    --pid-file="${dir}/run/munged.pid" --log-file="${dir}/log/munged.log" \
    --seed-file="${dir}/munge/munged.seed" >>"${dir}/log/munged.log" 2>&1 ||
    skip "munged did not start (${dir}/log/munged.log)"
}

running() {  # running PIDFILE: the daemon of that pid file is alive
  [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null
}

# The namespaces of --netns: a switch and one host per node.
create_hosts() {
  ip netns list | grep -q "^${namespace_prefix}n1\b" && return 0
  netns_switch_create "${namespace_prefix}sw" || skip "${netns_error}"
  local hosts="127.0.0.1 localhost\n" node
  for node in "${nodes[@]}"; do hosts+="$(node_address "${node}") ${node}\n"; done
  for node in "${nodes[@]}"; do
    netns_host_create "${namespace_prefix}sw" "${namespace_prefix}${node}" \
      "${controller_port}${node#n}" "$(node_address "${node}")/24" || skip "${netns_error}"
    netns_hosts_file "${namespace_prefix}${node}" "${hosts}" || skip "cannot write /etc/netns"
  done
}

start_slurm() {
  running "${dir}/run/slurmctld.pid" || on n1 slurmctld -f "${SLURM_CONF}" ||
    skip "slurmctld did not start (${dir}/log/slurmctld.log)"
  for node in "${nodes[@]}"; do
    running "${dir}/run/slurmd-${node}.pid" || on "${node}" slurmd -f "${SLURM_CONF}" -N "${node}" ||
      skip "slurmd -N ${node} did not start (${dir}/log/slurmd-${node}.log)"
  done
}

idle_nodes() {
  on n1 sinfo -h -N -p flex -t idle -o '%N' 2>/dev/null | sort -u | wc -l
}

wait_until_idle() {
  local deadline=$((SECONDS + timeout))
  until (($(idle_nodes) == ${#nodes[@]})); do
    if ((SECONDS >= deadline)); then
      on n1 sinfo -N >&2
      skip "the ${#nodes[@]} nodes were not idle after ${timeout} s (logs in ${dir}/log)"
    fi
    sleep 0.5
  done
}

start() {
  ((EUID == 0)) || skip "the daemons run as root (this is uid ${EUID})"
  [[ -d "${dir}" ]] || starting=1  # a cluster already up stays up if this start fails
  # Daemons of an earlier cluster in this directory whose files were removed
  # under them (two runs sharing it) still hold the ports: without their
  # pid files nothing else stops them, and no new slurmd could start.
  if [[ -n "${starting}" ]]; then
    pkill -f "(^|/)(slurmctld|slurmd|munged) .*(-f ${SLURM_CONF}|${dir}/munge/)" 2>/dev/null && sleep 1
  fi
  mkdir -p "${dir}"/{etc,state,spool,run,log,munge}
  chmod 0755 "${dir}"
  chmod 0755 "${dir}/munge"  # munged: the socket's directory open to all, the key 0400
  ensure_packages
  if [[ ${1:-} == --netns ]]; then
    for tool in ip unshare nsenter; do command -v "${tool}" >/dev/null || skip "${tool} is not installed"; done
    touch "${dir}/netns"
    create_hosts
  fi
  write_config
  start_munge
  start_slurm
  wait_until_idle
  echo "slurm-local: ${#nodes[@]} nodes idle in partition flex (SLURM_CONF=${SLURM_CONF})"
}

stop_daemons() {  # stop_daemons PIDFILE...: TERM to all, KILL to those alive after 5 s
  local pids=()
  for file in "$@"; do
    running "${file}" && pids+=("$(cat "${file}")")
  done
  ((${#pids[@]} == 0)) && return 0
  kill "${pids[@]}" 2>/dev/null
  for _ in $(seq 50); do
    kill -0 "${pids[@]}" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null
}

stop() {
  [[ -d "${dir}" ]] || return 0
  if running "${dir}/run/slurmctld.pid"; then
    # Jobs end first, so that no slurmstepd or job process outlives its node.
    on n1 scancel --quiet --user="$(id -un)" 2>/dev/null
    for _ in $(seq 50); do
      [[ -z "$(on n1 squeue -h 2>/dev/null)" ]] && break
      sleep 0.1
    done
  fi
  local pid_files=("${dir}/run/slurmctld.pid")
  for node in "${nodes[@]}"; do pid_files+=("${dir}/run/slurmd-${node}.pid"); done
  stop_daemons "${pid_files[@]}"
  stop_daemons "${dir}/run/munged.pid"
  if netns_mode; then
    for node in "${nodes[@]}"; do netns_delete "${namespace_prefix}${node}"; done
    netns_delete "${namespace_prefix}sw"
  fi
  rm -rf "${dir}"
  echo "slurm-local: stopped"
}

status() {
  running "${dir}/run/slurmctld.pid" || {
    echo "slurm-local: not running" >&2
    return 1
  }
  on n1 sinfo -N -p flex
}

case "${1:-}" in
  start) start "${2:-}" ;;
  stop) stop ;;
  status) status ;;
  env) echo "export SLURM_CONF=${SLURM_CONF}" ;;
  on)
    [[ $# -ge 3 ]] || { echo "usage: $0 on NODE COMMAND..." >&2; exit 2; }
    shift
    on_exec=exec on "$@"
    ;;
  *)
    echo "usage: $0 start [--netns]|stop|status|env|on NODE COMMAND..." >&2
    exit 2
    ;;
esac
