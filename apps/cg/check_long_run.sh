#!/usr/bin/env bash
# flexmpi-cg run far past convergence (generated SPD matrix, emulated speeds
# 1.0/0.5, balanced): the result must stay converged, a number, not NaN (after
# convergence CG must stop updating: r would reach denormals and 0/0).
# usage: check_long_run.sh MPIEXEC FLEXMPI_CG
set -euo pipefail
mpiexec=$1 cg=$2
out=$(FLEXMPI_EMULATE_SPEED=1.0,0.5 "$mpiexec" -n 2 "$cg" --generate 2000 --iterations 3000 \
        --sampling-interval 100 --quiet)
echo "$out"
residual=$(sed -n 's/.*relative_residual=\([^ ]*\).*/\1/p' <<< "$out")
python3 -c "import math,sys; r=float(sys.argv[1]); sys.exit(0 if math.isfinite(r) and r < 1e-10 else 1)" \
  "$residual" || { echo "relative residual '$residual' is not a number below 1e-10" >&2; exit 1; }
