#!/usr/bin/env bash
# Static checks of the tree:
#   format      clang-format reports no difference in any C/C++ file git tracks
#   size        no function in src/ longer than 80 lines (clang-tidy
#               readability-function-size; needs a build's compile_commands.json)
#   comm-world  MPI_COMM_WORLD appears in the library only where it starts up:
#               everything after start-up works on the runtime's communicators,
#               which change when processes are spawned or removed
#   layering    no folder of src/ includes a header of a folder above it
#               (scripts/layers.txt)
#   strategy-names  a partitioner, policy or resource-manager backend is
#               named only in its own folder, its parent's add_subdirectory
#               line and the files scripts/strategy_names_allowed.txt still lists
#   self-contained  the repository explains itself: no reference to a
#               specification outside it (SPEC), no issue numbers (the
#               tracker's history is in git), no absolute path of one machine
#
#   bash scripts/lint.sh [BUILD_DIR]     # all checks; BUILD_DIR defaults to build
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build}
[[ "${build}" = /* ]] || build="${root}/${build}"
cd "${root}"
failed=0

report() {  # report NAME STATUS
  if (($2 == 0)); then echo "lint: $1: ok"; else echo "lint: $1: FAILED" >&2; failed=1; fi
}

mapfile -t sources < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')

# ---- format ----
clang-format --dry-run --Werror "${sources[@]}"
report "format (clang-format --dry-run; fix with clang-format -i)" $?

# ---- size ----
if [[ -f "${build}/compile_commands.json" ]]; then
  mapfile -t library_sources < <(git ls-files 'src/*.cpp')
  # Only the library's own files: compile_commands.json knows the flags.
  output=$(printf '%s\n' "${library_sources[@]}" | xargs -P "$(nproc)" -n 8 clang-tidy -p "${build}" \
    --quiet --checks='-*,readability-function-size' --warnings-as-errors='*' \
    --config='{CheckOptions: [{key: readability-function-size.LineThreshold, value: 80}]}' 2>/dev/null)
  status=$?
  grep -E 'warning|error|note: [0-9]+ lines' <<<"${output}"
  report "size (functions of at most 80 lines)" "${status}"
else
  echo "lint: size: no ${build}/compile_commands.json (build first)" >&2
  failed=1
fi

# ---- comm-world ----
# Comment lines (C/C++ // and *, Fortran !) may name it.
# Beyond start-up: MPI_UNIVERSE_SIZE is an attribute of MPI_COMM_WORLD only,
# and the abort after a failed spawn ends mpiexec's own job (its world).
allowed='^src/core/runtime\.(c|h)pp:|^src/process/join\.cpp:.*(PMPI_Comm_dup\(MPI_COMM_WORLD, &siblings\)|PMPI_Comm_connect\(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD)|^src/process/resource_view\.cpp:.*PMPI_Comm_get_attr\(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE|^src/process/process_manager\.cpp:.*PMPI_Abort\(MPI_COMM_WORLD, kSpawnFailureAbortCode\)'
uses=$(git grep -nE '(^|[^X_])MPI_COMM_WORLD' -- src | grep -vE '^[^:]+:[0-9]+:\s*(//|\*|!)' |
  grep -vE "${allowed}")
if [[ -n "${uses}" ]]; then
  echo "${uses}"
  echo "lint: use the runtime's communicators (Context), not MPI_COMM_WORLD" >&2
fi
report "comm-world (MPI_COMM_WORLD only at start-up)" "$([[ -z "${uses}" ]]; echo $?)"

# ---- layering ----
python3 scripts/check_layering.py scripts/layers.txt src
report "layering (scripts/layers.txt)" $?

# ---- strategy-names ----
python3 scripts/check_strategy_names.py . scripts/strategy_names_allowed.txt
report "strategy-names (a strategy is named only in its folder)" $?

# ---- self-contained ----
# Only this script and scripts/check_docs.py, which spell the patterns out,
# are exempt. An upstream project's issue is cited as "issue #N".
self_contained=(src include tools tests bench scripts docs apps examples cmake README.md
                CMakeLists.txt ':!scripts/lint.sh' ':!scripts/check_docs.py')
found=$(git grep -nE '\bSPEC\b|[Ii]ssues? [0-9]|(/work|/home|/root)/' -- "${self_contained[@]}")
if [[ -n "${found}" ]]; then
  echo "${found}"
  echo "lint: cite docs/reference/ or the thesis, say what is and why, use relative paths" >&2
fi
report "self-contained (no SPEC, issue numbers or machine paths)" "$([[ -z "${found}" ]]; echo $?)"

exit "${failed}"
