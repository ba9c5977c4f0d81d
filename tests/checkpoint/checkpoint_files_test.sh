#!/usr/bin/env bash
# Checkpoints through real files: every kind of structure written on 3
# processes and read back on 1, 2 and 4; then the files a restart must refuse
# (truncated, bit-flipped, another program's, a newer format, other sizes, a
# directory) and the places a checkpoint cannot be written (no permission,
# a full disk), each with its message, a non-zero exit, and the earlier
# checkpoint intact (the previous one is used where the latest is damaged).
#
#   checkpoint_files_test.sh ROUNDTRIP_PROGRAM JACOBI_PROGRAM MPIEXEC
set -uo pipefail
roundtrip=$1 jacobi=$2 mpiexec=$3
work=$(mktemp -d /tmp/flexmpi-checkpoint-test.XXXXXX)
mounted=""
cleanup() {
  [[ -n "${mounted}" ]] && umount "${mounted}" 2>/dev/null
  rm -rf "${work}"
}
trap cleanup EXIT
python=/usr/bin/python3  # Debian's, with h5py (python3-h5py)
rows=97
source "$(dirname "${BASH_SOURCE[0]}")/../support/run_under_timeout.sh"

write() {  # write FILE ITERATION [ROWS]
  run "write $1 at $2" 0 "write on 3 processes: ok" FLEXMPI_CHECKPOINT="$1" -- \
    "${mpiexec}" -n 3 "${roundtrip}" write "${3:-${rows}}" "$2"
}

# ---- every structure, 3 writers, 1, 2 and 4 readers -------------------------------
file=${work}/state.h5
write "${file}" 5
for np in 1 2 4; do
  run "read on ${np}" 0 "read on ${np} processes: ok" FLEXMPI_RESTART="${file}" -- \
    "${mpiexec}" -n "${np}" "${roundtrip}" read "${rows}" 5
done
command -v h5dump >/dev/null && { h5dump -H "${file}" >/dev/null || fail "h5dump cannot read ${file}"; }
"${python}" - "${file}" <<'PY' || fail "h5py: the datasets are not indexed by global row"
import json, sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    meta = json.loads(f["metadata"][()])
    assert meta["format"] == "flexmpi checkpoint" and meta["next_iteration"] == 5
    assert [b[0] for b in meta["blocks"]] == [16, 32, 49], meta["blocks"]
    vector = f["structures/0/data"][:]
    assert all(vector[i] == i * 0.5 for i in range(len(vector)))
    dense = f["structures/4/data"]
    assert dense.shape == (97, 97) and dense[10, 3] == 13.0
    offsets = f["structures/7/row_offsets"][:]
    assert offsets[0] == 0 and offsets[-1] == len(f["structures/7/values"])
    assert list(f["records/history"][:4]) == [0.0, 1.5, 3.0, 4.5]
PY

# ---- refused before any data is touched ----------------------------------------------
run "other sizes" 0 "refused: invalid argument.*97 rows, this run's has 60" \
  FLEXMPI_RESTART="${file}" -- "${mpiexec}" -n 2 "${roundtrip}" refuse 60 5
run "a directory to restart from" nonzero "${work}: not a regular file" \
  FLEXMPI_RESTART="${work}" -- "${mpiexec}" -n 2 "${roundtrip}" read "${rows}" 5
run "a directory to write" nonzero "is not a regular file" \
  FLEXMPI_CHECKPOINT="${work}" -- "${mpiexec}" -n 2 "${roundtrip}" write "${rows}" 5
run "no such file" nonzero "${work}/none.h5: No such file" \
  FLEXMPI_RESTART="${work}/none.h5" -- "${mpiexec}" -n 2 "${roundtrip}" read "${rows}" 5

jacobi_file=${work}/jacobi.h5
run "jacobi checkpoint" 0 "checksum" FLEXMPI_CHECKPOINT="${jacobi_file}" \
  FLEXMPI_CHECKPOINT_EVERY=3 -- "${mpiexec}" -n 2 "${jacobi}" --size 97 --iterations 4 --quiet
run "another program's checkpoint" nonzero "written by flexmpi-jacobi, not by this program" \
  FLEXMPI_RESTART="${jacobi_file}" -- "${mpiexec}" -n 2 "${roundtrip}" read "${rows}" 5

newer=${work}/newer.h5
cp "${file}" "${newer}"
"${python}" - "${newer}" <<'PY'
import json, sys, h5py, numpy
with h5py.File(sys.argv[1], "r+") as f:
    meta = json.loads(f["metadata"][()])
    meta["format_version"] = 99
    del f["metadata"]
    f["metadata"] = numpy.bytes_(json.dumps(meta))
PY
run "a newer format" nonzero "format version 99; this flexmpi reads versions 1 to 1" \
  FLEXMPI_RESTART="${newer}" -- "${mpiexec}" -n 2 "${roundtrip}" read "${rows}" 5

# ---- damaged files: alone refused, with a previous one that one is used -------------------
alone=${work}/alone.h5
write "${alone}" 5
truncate -s 30000 "${alone}"
run "truncated" nonzero "checkpoint ${alone}: (not an HDF5 file|.*truncated)" \
  FLEXMPI_RESTART="${alone}" -- "${mpiexec}" -n 2 "${roundtrip}" read "${rows}" 5

flip() {  # flip FILE DATASET: one bit in the middle of a dataset's stored bytes
  "${python}" - "$1" "$2" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    dataset = f[sys.argv[2]]
    where = dataset.id.get_offset() + dataset.id.get_storage_size() // 2
with open(sys.argv[1], "r+b") as stream:
    stream.seek(where)
    byte = stream.read(1)[0]
    stream.seek(where)
    stream.write(bytes([byte ^ 0x10]))
PY
}
flipped=${work}/flipped.h5
write "${flipped}" 5
flip "${flipped}" structures/4/data
run "a flipped bit" nonzero "structure 4's data does not match its checksum" \
  FLEXMPI_RESTART="${flipped}" -- "${mpiexec}" -n 2 "${roundtrip}" read "${rows}" 5

pair=${work}/pair.h5
write "${pair}" 5
write "${pair}" 9  # pair.h5 at 9, pair.h5.prev at 5
[[ -f "${pair}.prev" ]] || fail "the previous checkpoint was not kept as ${pair}.prev"
flip "${pair}" structures/7/values
run "a flipped bit, previous kept" 0 "does not match its checksum.*restarting from the previous checkpoint ${pair}.prev \(iteration 5\)" \
  FLEXMPI_RESTART="${pair}" -- "${mpiexec}" -n 3 "${roundtrip}" read "${rows}" 5
truncate -s 20000 "${pair}"
run "truncated, previous kept" 0 "restarting from the previous checkpoint ${pair}.prev" \
  FLEXMPI_RESTART="${pair}" -- "${mpiexec}" -n 4 "${roundtrip}" read "${rows}" 5

# ---- killed in the middle of writing: the last whole checkpoint restarts ----------------
killed=${work}/killed.h5
FLEXMPI_CHECKPOINT="${killed}" "${mpiexec}" -n 3 "${roundtrip}" write-forever 700 1 \
  >"${work}/forever.log" 2>&1 &
launcher=$!
for _ in $(seq 600); do  # a whole checkpoint, then the next one under way
  [[ -f "${killed}" && -f "${killed}.partial" ]] && break
  sleep 0.05
done
pkill -KILL -f "checkpoint_roundtrip write-forever" 2>/dev/null
wait "${launcher}" 2>/dev/null
if [[ -f "${killed}" ]]; then
  at=$("${python}" -c "import json, sys, h5py; print(json.loads(h5py.File(sys.argv[1], 'r')['metadata'][()])['next_iteration'])" "${killed}")
  run "killed while writing: restart from the last whole one (iteration ${at})" 0 "read on 2 processes: ok" \
    FLEXMPI_RESTART="${killed}" -- "${mpiexec}" -n 2 "${roundtrip}" read 700 "${at}"
else
  fail "killed while writing: no checkpoint was written"
fi

# ---- where a checkpoint cannot be written: the earlier one stays whole ------------------
run "no permission" nonzero "cannot write the checkpoint /proc/flexmpi-checkpoint.h5.partial" \
  FLEXMPI_CHECKPOINT=/proc/flexmpi-checkpoint.h5 -- "${mpiexec}" -n 2 "${roundtrip}" write "${rows}" 5
full=${work}/full
mkdir -p "${full}"
if mount -t tmpfs -o size=1m tmpfs "${full}" 2>/dev/null; then
  mounted=${full}
  write "${full}/state.h5" 5 40  # 40 rows fit in 1 MiB, 400 do not
  run "disk full" nonzero "cannot write the checkpoint ${full}/state.h5.partial" \
    FLEXMPI_CHECKPOINT="${full}/state.h5" -- "${mpiexec}" -n 3 "${roundtrip}" write 400 9
  [[ ! -e "${full}/state.h5.partial" ]] || fail "disk full: the partial file was left behind"
  run "disk full: the earlier checkpoint is whole" 0 "read on 2 processes: ok" \
    FLEXMPI_RESTART="${full}/state.h5" -- "${mpiexec}" -n 2 "${roundtrip}" read 40 5
else
  echo "skipped: disk full (cannot mount a small tmpfs here)"
fi

exit "${failed}"
