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

work=""
cleanup() { [[ -z "${work}" ]] || rm -rf "${work}"; }

start_local_cluster() {
  bash "${cluster}" start
  local status=$?
  ((status == 77)) && exit 77
  ((status == 0)) || fail "slurm-local.sh start failed (exit status ${status})"
  work=$(mktemp -d)
  trap 'cleanup; bash "${cluster}" stop' EXIT
  eval "$(bash "${cluster}" env)"
}
