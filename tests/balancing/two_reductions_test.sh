#!/usr/bin/env bash
# An emulated slow core is slow where it computes: a loop
# with two reductions per iteration (two_reductions.c) at emulated speeds
# 1.0/0.5, static then balanced. Padded once at the end of the iteration, the
# slow rank's wait landed before the first reduction whatever its rows, and
# balancing gained ~1.2x of the 1.5x its speeds allow; padded per stretch of
# computation it must gain at least 1.3x.
# usage: two_reductions_test.sh MPIEXEC TWO_REDUCTIONS
set -euo pipefail
mpiexec=$1 program=$2
run() {
  FLEXMPI_EMULATE_SPEED=1.0,0.5 FLEXMPI_SAMPLING_INTERVAL=20 OMPI_MCA_mpi_yield_when_idle=0 \
    "$mpiexec" -n 2 --bind-to core --map-by core "$program" --rows 20000 --iterations 600 "$@" |
    sed -n 's/^time=\([0-9.]*\).*/\1/p'
}
static=$(run --static)
balanced=$(run)
echo "static ${static} s, balanced ${balanced} s"
awk -v s="$static" -v b="$balanced" 'BEGIN {
  ratio = s / b
  printf "static / balanced = %.2f (ideal 1.5)\n", ratio
  exit !(ratio >= 1.3)
}'
