#!/usr/bin/env bash
# Validation of the communication model (thesis 6.3.2, Figs. 6.9-6.12):
# calibrate the links on 2 processes and the collective fits on 2 .. the largest
# count (flexmpi-calibrate --link-from), then predicted vs measured Send/Recv, Bcast,
# Gather, Allreduce and Alltoallv on each process count, at the calibrated sizes
# (8 B .. 8 MiB, x4: "grid") and between them (12 B .. 3 MiB, x4: "offset"),
# and the median relative error per routine (Markdown on stdout, CSV in OUT).
#
#   bash bench/comm_model/run.sh BUILD_DIR [OUT_DIR] [PROCS...]
#
# BUILD_DIR holds tools/flexmpi-calibrate and bench/comm_model/bench-comm-model
# (cmake --build BUILD_DIR --target flexmpi-calibrate bench-comm-model).
# MPIEXEC=mpiexec.mpich for an MPICH build. Plots per routine (Figs. 6.9-6.12):
# python3 bench/comm_model/plot.py OUT.png OUT_DIR [OTHER_OUT_DIR...] (matplotlib).
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR [OUT_DIR] [PROCS...]}
out=${2:-$build/comm_model_results}
shift $(( $# >= 2 ? 2 : 1 ))
procs=("$@")
[ ${#procs[@]} -gt 0 ] || procs=(2 3 4)
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
mpiexec=${MPIEXEC:-mpiexec}
cores=$(nproc)
# Waiting ranks yield only when they outnumber the cores: a rank
# that yields on a core of its own gives it away at every poll, and Open MPI's
# small Alltoallv came out bimodal (1 or 6 us) that way.
yield_for() { if [ "$1" -gt "$cores" ]; then echo 1; else echo 0; fi; }
calibrate="$build/tools/flexmpi-calibrate"
[ -x "$calibrate" ] || calibrate="$build/tools/flexmpi-calibrate/flexmpi-calibrate"

most=$(printf '%s\n' "${procs[@]}" | sort -n | tail -1)
echo "calibrating (2 processes) -> $out/profile.json" >&2
OMPI_MCA_mpi_yield_when_idle=$(yield_for 2) "$mpiexec" -n 2 "$calibrate" --only=network --output "$out/profile.json" 2> "$out/calibrate.log"
if [ "$most" -gt 2 ]; then
  echo "calibrating the collective fits on 2 .. $most processes -> $out/profile.json" >&2
  cp "$out/profile.json" "$out/profile-np2.json"
  OMPI_MCA_mpi_yield_when_idle=$(yield_for "$most") \
    "$mpiexec" -n "$most" "$calibrate" --only=network --link-from "$out/profile-np2.json" \
    --output "$out/profile.json" 2>> "$out/calibrate.log"
fi
for p in "${procs[@]}"; do
  for sizes in grid offset; do
    echo "measuring on $p processes, $sizes sizes" >&2
    OMPI_MCA_mpi_yield_when_idle=$(yield_for "$p") \
      "$mpiexec" -n "$p" "$build/bench/comm_model/bench-comm-model" --profile "$out/profile.json" \
      --sizes "$sizes" > "$out/np$p-$sizes.csv"
  done
done

python3 - "$out" "${procs[@]}" <<'PY'
import csv, statistics, sys
out, procs = sys.argv[1], sys.argv[2:]
rows = []
for p in procs:
    for sizes in ("grid", "offset"):
        with open(f"{out}/np{p}-{sizes}.csv") as f:
            rows += [dict(r, sizes=sizes) for r in csv.DictReader(f)]
def err(row, key):
    m = float(row["measured"])
    return abs(float(row[key]) - m) / m * 100
def med(sel, f):
    return statistics.median(f(r) for r in sel) if sel else float("nan")
routines = list(dict.fromkeys(r["routine"] for r in rows))
print("| routine | p | sizes | median rel. error, Hockney (thesis) | median rel. error, bands + fit "
      "| median spread of the measurement |")
print("|---|---|---|---|---|---|")
for routine in routines:
    for p in procs:
        if routine == "MPI_Send" and p != procs[0]:
            continue  # point to point: always ranks 0 and 1
        for sizes in ("grid", "offset"):
            sel = [r for r in rows if r["routine"] == routine and r["processes"] == p
                   and r["sizes"] == sizes]
            print(f"| {routine} | {p} | {sizes} | {med(sel, lambda r: err(r, 'hockney')):.0f} % | "
                  f"{med(sel, lambda r: err(r, 'predicted')):.0f} % | "
                  f"{med(sel, lambda r: 100 * float(r['spread'])):.0f} % |")
PY
