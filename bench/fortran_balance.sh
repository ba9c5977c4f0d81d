#!/usr/bin/env bash
# The Fortran Jacobi (apps/jacobi_fortran, module flexmpi_f08) beside the C
# one (apps/jacobi) on the demo's emulated pair (scripts/demo.sh: two
# processes, rank 1 at half speed, FLEXMPI_EMULATE_SPEED=1.0,0.5), static
# (--static) and balanced. Rounds run the four configurations interleaved, in
# a rotating order, so the drifts of a shared machine hit all alike; the
# figures are medians of the loop times (time= of the --quiet line).
#
#   bench/fortran_balance.sh [--build-dir DIR] [--mpiexec LAUNCHER] [--rounds N] [--size N]
#                            [--iterations N]
# The build dir must hold flexmpi-jacobi and flexmpi-jacobi-fortran; the
# launcher is its MPI's (mpiexec.openmpi, the default, or mpiexec.mpich).
set -euo pipefail

build_dir=build
mpiexec=mpiexec.openmpi
rounds=5
size=2000        # the demo's problem
iterations=800

die() { echo "fortran_balance.sh: $*" >&2; exit 2; }
whole_number() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 '$2' is invalid: expected a whole number >= 1"; }
while (($#)); do
  case $1 in
    --build-dir) build_dir=${2:?--build-dir needs a value}; shift 2 ;;
    --mpiexec) mpiexec=${2:?--mpiexec needs a value}; shift 2 ;;
    --rounds) whole_number "$1" "${2-}"; rounds=$2; shift 2 ;;
    --size) whole_number "$1" "${2-}"; size=$2; shift 2 ;;
    --iterations) whole_number "$1" "${2-}"; iterations=$2; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

declare -A programs=([c]=$build_dir/apps/jacobi/flexmpi-jacobi
                     [fortran]=$build_dir/apps/jacobi_fortran/flexmpi-jacobi-fortran)
for program in "${programs[@]}"; do
  [[ -x $program ]] || die "$program not found: build it in $build_dir"
done

# As scripts/demo.sh: Open MPI as root, two ranks on two cores, polling waits.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=0
export FLEXMPI_EMULATE_SPEED=1.0,0.5

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
configurations=(c:static fortran:static c:balanced fortran:balanced)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "each run: FLEXMPI_EMULATE_SPEED=$FLEXMPI_EMULATE_SPEED $mpiexec -n 2 PROGRAM" \
     "--size $size --iterations $iterations --sampling-interval 25 --quiet [--static]"
for ((round = 0; round < rounds; ++round)); do
  for ((k = 0; k < ${#configurations[@]}; ++k)); do
    configuration=${configurations[(k + round) % ${#configurations[@]}]}
    language=${configuration%%:*} mode=${configuration##*:}
    flag=()
    [[ $mode == static ]] && flag=(--static)
    line=$("$mpiexec" -n 2 "${programs[$language]}" --size "$size" --iterations "$iterations" \
      --sampling-interval 25 --quiet "${flag[@]}")
    echo "$configuration $line" | tee -a "$work/runs.txt"
  done
done

/usr/bin/python3 - "$work/runs.txt" <<'PY'
import re, statistics, sys
times, sums = {}, {}
for line in open(sys.argv[1]):
    configuration = line.split()[0]
    times.setdefault(configuration, []).append(float(re.search(r" time=(\S+)", line).group(1)))
    sums.setdefault(configuration, set()).add(re.search(r"checksum=(\S+)", line).group(1))
median = {c: statistics.median(t) for c, t in times.items()}
print(f"{'program':8} {'static s':>9} {'balanced s':>11} {'static/balanced':>16}  checksums")
for language in ("c", "fortran"):
    static, balanced = median[f"{language}:static"], median[f"{language}:balanced"]
    checksums = sums[f"{language}:static"] | sums[f"{language}:balanced"]
    print(f"{language:8} {static:9.3f} {balanced:11.3f} {static / balanced:16.2f}  {' '.join(sorted(checksums))}")
print(f"fortran/c: static {median['fortran:static'] / median['c:static']:.2f}, "
      f"balanced {median['fortran:balanced'] / median['c:balanced']:.2f}")
PY
