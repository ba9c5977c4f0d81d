# Sourced by the slurm CTests: `source slurm_test_lib.sh NAME SLURM_LOCAL_SH`.
# fail MESSAGE ends the test (exit 1) naming it; start_local_cluster makes
# the test's scratch directory ${work} (removed at exit), starts the local
# cluster (scripts/slurm-local.sh), exits 77 (skipped) where Slurm cannot
# start, stops it at exit and sets SLURM_CONF.
test_name=$1
cluster=$2

fail() {
  echo "${test_name}: $1" >&2
  exit 1
}

work="" server_pid=""
cleanup() {
  [[ -z "${server_pid}" ]] || kill "${server_pid}" 2>/dev/null
  [[ -z "${work}" ]] || rm -rf "${work}"
}

# start_ompi_server [PREFIX...]: Open MPI's rendezvous server for processes
# that join the job (FLEXMPI_SLURM_JOIN), run through PREFIX (e.g. on a node);
# its URI in ${work}/ompi-server.uri, stopped at exit.
start_ompi_server() {
  "$@" ompi-server --no-daemonize -r "${work}/ompi-server.uri" >"${work}/ompi-server.log" 2>&1 &
  server_pid=$!
  local tries
  for tries in $(seq 50); do
    [[ -s "${work}/ompi-server.uri" ]] && return 0
    sleep 0.1
  done
  fail "ompi-server wrote no URI: $(cat "${work}/ompi-server.log")"
}

start_local_cluster() {  # start_local_cluster [--netns]
  bash "${cluster}" start "$@"
  local status=$?
  ((status == 77)) && exit 77
  ((status == 0)) || fail "slurm-local.sh start failed (exit status ${status})"
  work=$(mktemp -d)
  trap 'cleanup; bash "${cluster}" stop' EXIT
  eval "$(bash "${cluster}" env)"
}
