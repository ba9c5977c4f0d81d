#!/usr/bin/env bash
# Four processes of different emulated speeds (2:3:1:2 for 400 rows: the
# balanced blocks are about 100/150/50/100). Rebalancing changes some
# processes' blocks while others keep theirs, so an application that
# refreshed its table of blocks only when its own block changed would skip a
# collective the others enter and hang. flexmpi-jacobi and flexmpi-cg must
# finish, and Jacobi's result must be the static run's, bit for bit.
# usage: uneven_partition_test.sh MPIEXEC FLEXMPI_JACOBI FLEXMPI_CG
set -euo pipefail
mpiexec=$1 jacobi=$2 cg=$3
export FLEXMPI_EMULATE_SPEED=0.5,0.75,0.25,0.5 FLEXMPI_SAMPLING_INTERVAL=2
run() {  # a hang is a failure, not a CTest timeout of the whole script
  timeout 60 "$mpiexec" -n 4 "$@" || { echo "failed or hung (exit $?): $*" >&2; exit 1; }
}
balanced=$(run "$jacobi" --size 400 --iterations 120 --quiet)
static=$(run "$jacobi" --size 400 --iterations 120 --quiet --static)
echo "balanced: $balanced"
echo "static:   $static"
[[ ${balanced##*checksum=} == "${static##*checksum=}" ]] || { echo "checksums differ" >&2; exit 1; }
cg_out=$(run "$cg" --generate 2000 --iterations 200 --quiet)
echo "cg: $cg_out"
[[ $cg_out == *"mode=balanced"* ]] || { echo "no CG summary" >&2; exit 1; }
