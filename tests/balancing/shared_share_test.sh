#!/usr/bin/env bash
# The share of a shared PE (thesis 5.2.1): each case runs Jacobi on
# 2 ranks, 1 per core, with real outside load (tools/flexmpi-load).
#   pinned-one: one busy process on rank 1's core. On the equal blocks of the
#     first interval rank 1 must be seen as slower by the share of its core it
#     lost: effective time ratio ~ rank 1's wall/cpu.
#   both-loaded: two busy processes on each core, rank 1 also emulated at half
#     speed. Both PEs are shared; the landed balancer saw their wall times
#     (equal) and never moved. Rank 1 must end with fewer rows.
#   pinned-fast: one busy process on rank 0's core, rank 1 emulated at half
#     speed: each gets half a core, the equal blocks are balanced. Rank 0
#     polls in its waits and the scheduler often runs its computation almost
#     alone and takes the core during the wait: its computation time alone
#     read it 1.8x faster and the balancer moved rows to it and back. At the
#     share of the whole interval (share_correction) both are seen alike.
# Ranks that wait poll (yield_when_idle 0) unless a case says otherwise.
# usage: shared_share_test.sh CASE MPIEXEC FLEXMPI_JACOBI FLEXMPI_LOAD PYTHON WORKDIR
set -euo pipefail
case=$1 mpiexec=$2 jacobi=$3 load=$4 python=$5 workdir=$6
trace="$workdir/shared_share_${case}.jsonl"
rm -f "$trace"
case $case in
  pinned-one) "$load" --cores 1 --schedule on:300 > /dev/null & ;;
  pinned-fast) "$load" --cores 0 --schedule on:300 > /dev/null &
    export FLEXMPI_EMULATE_SPEED=1.0,0.5 ;;
  both-loaded) "$load" --cores 0 1 --per-core 2 --schedule on:300 > /dev/null &
    # Waiting ranks yield (more busy processes than cores): their CPU time
    # falls below their computation time, where the landed share correction
    # made every rank's time its wall time.
    export FLEXMPI_EMULATE_SPEED=1.0,0.5 yield_when_idle=1 ;;
  *) echo "unknown case $case" >&2; exit 2 ;;
esac
loader=$!
trap 'kill $loader 2>/dev/null || true; wait $loader 2>/dev/null || true' EXIT
OMPI_MCA_mpi_yield_when_idle=${yield_when_idle:-0} FLEXMPI_K=2 "$mpiexec" -n 2 --bind-to core --map-by core "$jacobi" \
  --size 2000 --iterations 400 --sampling-interval 25 --trace "$trace" --quiet
"$python" - "$case" "$trace" <<'PY'
import json, sys
case, path = sys.argv[1], sys.argv[2]
records = [json.loads(line) for line in open(path)]
moves = [r for r in records if r["decision"] == "rebalance"]
first = records[0]
ratio = first["effective_time"][1] / first["effective_time"][0]
print(f"{case}: {len(records)} intervals, {len(moves)} rebalances, first interval effective "
      f"{first['effective_time']} (ratio {ratio:.2f}), wall {first['wall_time']}, cpu "
      f"{first['cpu_time']}, final partition {records[-1].get('partition')}")
final = records[-1]["partition"]
if case == "pinned-one":
    assert first["shared"][1], "rank 1's PE was not seen as shared under the outside load"
    lost = first["wall_time"][1] / first["cpu_time"][1]  # 1 / the share rank 1 got
    assert 0.7 * lost <= ratio <= 1.4 * lost, \
        f"rank 1 should be seen {lost:.2f}x slower (its share), seen {ratio:.2f}x"
elif case == "pinned-fast":
    assert first["shared"][0], "rank 0's PE was not seen as shared under the outside load"
    equal = [r for r in records if (r.get("partition_before") or r["partition"]) == [1000, 1000]]
    ratios = sorted(r["effective_time"][0] / r["effective_time"][1] for r in equal)
    middle = ratios[len(ratios) // 2]
    print(f"pinned-fast: rank 0 / rank 1 effective time on the equal blocks, median {middle:.2f}")
    assert 0.7 <= middle <= 1.4, \
        f"both ranks get half a core: they should be seen alike, rank 0 seen {1 / middle:.2f}x faster"
    assert 800 <= final[0] <= 1250, f"the blocks should stay near equal: {final}"
else:
    assert all(first["shared"]), "both PEs carry outside load: both must be seen as shared"
    assert ratio > 1.3, f"rank 1 computes at half speed on a shared PE, seen {ratio:.2f}x slower"
    assert moves, "the imbalance between two shared PEs never triggered a rebalance"
if case != "pinned-fast":
    assert final[1] < 0.8 * final[0], f"rank 1 should end with fewer rows: {final}"
PY
