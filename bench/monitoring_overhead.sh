#!/usr/bin/env bash
# Monitoring overhead (thesis 4.2): flexmpi-jacobi against jacobi-bare, the same
# source without flexmpi, on the same system and process count. Runs come in
# pairs, interleaved, alternating which program goes first, so the slow drifts
# of a shared machine hit both alike; the figures are medians.
#
#   bench/monitoring_overhead.sh [--build-dir DIR] [--pairs N] [--np N]
#                                [--size N] [--iterations N]
# The build dir must hold the bench-programs target (make bench-programs).
set -euo pipefail

build_dir=build
pairs=7
np=2
size=4000       # ~3 s per run on the 2-core machine of docs/results.md
iterations=500

die() { echo "monitoring_overhead.sh: $*" >&2; exit 2; }
whole_number() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 '$2' is invalid: expected a whole number >= 1"; }
while (($#)); do
  case $1 in
    --build-dir) build_dir=${2:?--build-dir needs a value}; shift 2 ;;
    --pairs) whole_number "$1" "${2-}"; pairs=$2; shift 2 ;;
    --np) whole_number "$1" "${2-}"; np=$2; shift 2 ;;
    --size) whole_number "$1" "${2-}"; size=$2; shift 2 ;;
    --iterations) whole_number "$1" "${2-}"; iterations=$2; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

flexmpi_program=$build_dir/apps/jacobi/flexmpi-jacobi
bare_program=$build_dir/apps/jacobi/jacobi-bare
for program in "$flexmpi_program" "$bare_program"; do
  [[ -x $program ]] || die "$program not found: build it with 'make -C $build_dir bench-programs'"
done

# Open MPI as root, more ranks than cores allowed, idle ranks yield.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
# Measure monitoring alone: no adaptation policy acts (it would change the
# partition), whatever policies exist when this is run.
export FLEXMPI_POLICY=none

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# run PROGRAM -> "loop_seconds process_seconds checksum"
run() {
  local start end line
  start=$(date +%s%N)
  if ! line=$(mpiexec.openmpi -n "$np" "$1" --size "$size" --iterations "$iterations" --quiet \
    2>"$log"); then
    cat "$log" >&2
    die "$1 failed"
  fi
  end=$(date +%s%N)
  [[ $line =~ time=([0-9.]+).*checksum=([^ ]+) ]] || die "no summary line from $1: $line"
  echo "${BASH_REMATCH[1]} $(((end - start) / 1000000)) ${BASH_REMATCH[2]}"  # ms
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "monitoring overhead: flexmpi-jacobi vs jacobi-bare, $np ranks, n=$size, $iterations iterations,"
echo "$pairs interleaved pairs ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-12s %31s   %23s\n' "" "iterations: s, max over ranks" "whole mpiexec: s"
printf '%-4s %-7s %10s %10s %9s   %11s %11s\n' pair first flexmpi bare ratio flexmpi bare
flex_loop=() bare_loop=() flex_wall=() bare_wall=() ratios=() checksum=""
for ((p = 1; p <= pairs; ++p)); do
  # $(...) and not < <(...): a failed run must stop the script (set -e).
  if ((p % 2)); then
    flexmpi_run=$(run "$flexmpi_program")
    bare_run=$(run "$bare_program")
    first=flexmpi
  else
    bare_run=$(run "$bare_program")
    flexmpi_run=$(run "$flexmpi_program")
    first=bare
  fi
  read -r fl fw fc <<<"$flexmpi_run"
  read -r bl bw bc <<<"$bare_run"
  # Same system, same arithmetic: a different x means a broken comparison.
  [[ -z $checksum ]] && checksum=$fc
  [[ $fc == "$checksum" && $bc == "$checksum" ]] || die "checksums differ: $fc $bc $checksum"
  ratio=$(awk -v a="$fl" -v b="$bl" 'BEGIN {printf "%.4f", a / b}')
  flex_loop+=("$fl") bare_loop+=("$bl") flex_wall+=("$fw") bare_wall+=("$bw") ratios+=("$ratio")
  printf '%-4d %-7s %10.3f %10.3f %9.4f   %11.3f %11.3f\n' "$p" "$first" "$fl" "$bl" "$ratio" \
    "$(awk -v v="$fw" 'BEGIN {print v / 1000}')" "$(awk -v v="$bw" 'BEGIN {print v / 1000}')"
done

m_fl=$(printf '%s\n' "${flex_loop[@]}" | median)
m_bl=$(printf '%s\n' "${bare_loop[@]}" | median)
m_fw=$(printf '%s\n' "${flex_wall[@]}" | median)
m_bw=$(printf '%s\n' "${bare_wall[@]}" | median)
m_ratio=$(printf '%s\n' "${ratios[@]}" | median)
printf '%-12s %10.3f %10.3f %9.4f   %11.3f %11.3f\n' median "$m_fl" "$m_bl" "$m_ratio" \
  "$(awk -v v="$m_fw" 'BEGIN {print v / 1000}')" "$(awk -v v="$m_bw" 'BEGIN {print v / 1000}')"
# The fastest run is the least disturbed one on a shared machine: shown beside the medians.
minimum() { sort -g | head -n 1; }
n_fl=$(printf '%s\n' "${flex_loop[@]}" | minimum)
n_bl=$(printf '%s\n' "${bare_loop[@]}" | minimum)
n_fw=$(printf '%s\n' "${flex_wall[@]}" | minimum)
n_bw=$(printf '%s\n' "${bare_wall[@]}" | minimum)
printf '%-12s %10.3f %10.3f %9.4f   %11.3f %11.3f\n' min "$n_fl" "$n_bl" \
  "$(awk -v a="$n_fl" -v b="$n_bl" 'BEGIN {print a / b}')" \
  "$(awk -v v="$n_fw" 'BEGIN {print v / 1000}')" "$(awk -v v="$n_bw" 'BEGIN {print v / 1000}')"
awk -v fl="$m_fl" -v bl="$m_bl" -v r="$m_ratio" -v fw="$m_fw" -v bw="$m_bw" 'BEGIN {
  printf "overhead, iterations: ratio of medians %.4f (%+.2f %%), median of paired ratios %.4f (%+.2f %%)\n",
    fl / bl, 100 * (fl / bl - 1), r, 100 * (r - 1)
  printf "overhead, whole mpiexec (start-up and finalize included): ratio of medians %.4f (%+.2f %%)\n",
    fw / bw, 100 * (fw / bw - 1)
}'
