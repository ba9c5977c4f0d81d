#!/usr/bin/env bash
# Validation of the communication model (thesis 6.3.2, Figs. 6.9-6.12; issue 12):
# calibrate once on 2 processes, then predicted vs measured Send/Recv, Bcast,
# Gather, Allreduce and Alltoallv for 8 B .. 8 MiB on 2, 3 and 4 processes, and
# the median relative error per routine (Markdown on stdout, CSV in OUT).
#
#   bash bench/comm_model/run.sh BUILD_DIR [OUT_DIR] [PROCS...]
#
# BUILD_DIR holds tools/flexmpi-calibrate and bench/comm_model/bench-comm-model
# (cmake --build BUILD_DIR --target flexmpi-calibrate bench-comm-model).
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR [OUT_DIR] [PROCS...]}
out=${2:-$build/comm_model_results}
shift $(( $# >= 2 ? 2 : 1 ))
procs=("$@")
[ ${#procs[@]} -gt 0 ] || procs=(2 3 4)
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
mpiexec=${MPIEXEC:-mpiexec}

echo "calibrating (2 processes) -> $out/profile.json" >&2
"$mpiexec" -n 2 "$build/tools/flexmpi-calibrate" --only=network --output "$out/profile.json" \
  2> "$out/calibrate.log"
for p in "${procs[@]}"; do
  echo "measuring on $p processes" >&2
  "$mpiexec" -n "$p" "$build/bench/comm_model/bench-comm-model" --profile "$out/profile.json" \
    > "$out/np$p.csv"
done

python3 - "$out" "${procs[@]}" <<'EOF'
import csv, statistics, sys
out, procs = sys.argv[1], sys.argv[2:]
rows = []
for p in procs:
    with open(f"{out}/np{p}.csv") as f:
        rows += list(csv.DictReader(f))
def err(row, key):
    m = float(row["measured"])
    return abs(float(row[key]) - m) / m * 100
routines = []
for r in rows:
    if r["routine"] not in routines:
        routines.append(r["routine"])
print("| routine | processes | median rel. error, Hockney only | median rel. error, with fit |")
print("|---|---|---|---|")
for routine in routines:
    for p in procs:
        sel = [r for r in rows if r["routine"] == routine and r["processes"] == p]
        if routine == "MPI_Send" and p != procs[0]:
            continue  # point to point: always ranks 0 and 1
        print(f"| {routine} | {p if routine != 'MPI_Send' else 2} | "
              f"{statistics.median(err(r, 'hockney') for r in sel):.0f} % | "
              f"{statistics.median(err(r, 'fitted') for r in sel):.0f} % |")
print()
print("| routine | all sizes and process counts: median rel. error, Hockney | with fit |")
print("|---|---|---|")
for routine in routines:
    sel = [r for r in rows if r["routine"] == routine]
    print(f"| {routine} | {statistics.median(err(r, 'hockney') for r in sel):.0f} % | "
          f"{statistics.median(err(r, 'fitted') for r in sel):.0f} % |")
print()
print("| p | routine | bytes | algorithm | measured us | predicted (fit) us |")
print("|---|---|---|---|---|---|")
for r in rows:
    if r["processes"] == procs[-1] or r["routine"] == "MPI_Send" and r["processes"] == procs[0]:
        print(f"| {r['processes']} | {r['routine']} | {r['bytes']} | {r['algorithm']} | "
              f"{float(r['measured'])*1e6:.1f} | {float(r['fitted'])*1e6:.1f} |")
EOF
