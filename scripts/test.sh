#!/usr/bin/env bash
# The test command of flexmpi (README.md): installs what is missing, then
# builds and tests three configurations, stopping at the first failure.
#
#   1. openmpi  build/        Open MPI (reference MPI), RelWithDebInfo: scripts/lint.sh (format,
#                             function size, MPI_COMM_WORLD, layering), then the whole CTest suite
#   2. mpich    build-mpich/  MPICH, Release: everything but the "spawn" and "openmpi-only"
#                             labels (Debian's MPICH cannot spawn processes: docs/reference/behaviour.md)
#   3. asan     build-asan/   AddressSanitizer + UBSan, Open MPI, Debug: the "unit" tests, then
#                             the "mpi" tests with leak detection off (Open MPI's own
#                             allocations look like leaks)
#
#   bash scripts/test.sh                        # all stages
#   bash scripts/test.sh openmpi asan           # only these stages
#   bash scripts/test.sh --no-setup mpich       # without running scripts/setup.sh
#
# Environment: JOBS (build parallelism, default: cores), CTEST_JOBS (default 2).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

all_stages=(openmpi mpich asan)
stages=()
run_setup=1
for argument in "$@"; do
  case "${argument}" in
    openmpi | mpich | asan) stages+=("${argument}") ;;
    --no-setup) run_setup=0 ;;
    *)
      echo "test.sh: unknown argument '${argument}'" \
        "(expected --no-setup or stages: ${all_stages[*]})" >&2
      exit 2
      ;;
  esac
done
if ((${#stages[@]} == 0)); then
  stages=("${all_stages[@]}")
fi

# The tests choose their own flexmpi settings: none may leak in from the caller
# (and flexmpi rejects unknown FLEXMPI_* names).
while read -r variable; do
  unset "${variable}"
done < <(compgen -e | grep '^FLEXMPI_' || true)

jobs=${JOBS:-$(nproc)}
ctest_jobs=${CTEST_JOBS:-2}
summary=()
started=${SECONDS}

print_summary() {
  local status=$?
  echo
  echo "==================== flexmpi test summary ===================="
  local line
  for line in "${summary[@]}"; do
    echo "  ${line}"
  done
  if ((status == 0)); then
    echo "  ALL PASSED in $((SECONDS - started)) s"
  else
    echo "  FAILED (exit ${status}) after $((SECONDS - started)) s; see the output above"
  fi
  echo "=============================================================="
}
trap print_summary EXIT

# step NAME COMMAND...: runs one step, records its result and time.
step() {
  local name=$1
  shift
  local begin=${SECONDS}
  echo
  echo "---- ${name}: $*"
  if "$@"; then
    summary+=("ok      ${name} ($((SECONDS - begin)) s)")
  else
    local status=$?
    summary+=("FAILED  ${name} ($((SECONDS - begin)) s)")
    exit "${status}"
  fi
}

# The names of the tests the last ctest run in BUILD_DIR failed.
failed_tests() {
  sed -n 's/^[0-9]*://p' "$1/Testing/Temporary/LastTestsFailed.log" 2>/dev/null
}

# True if the last ctest run in BUILD_DIR failed only tests labelled "timing".
only_timing_tests_failed() {
  local failed timing
  failed=$(failed_tests "$1")
  [[ -n "${failed}" ]] || return 1
  timing=$(cd "$1" && ctest -N -L timing | sed -n 's/^ *Test *#[0-9]*: //p')
  local test
  for test in ${failed}; do
    grep -qxF "${test}" <<<"${timing}" || return 1
  done
}

# run_ctest NAME BUILD_DIR CTEST_ARGS...: ctest with its output kept in BUILD_DIR/ctest.log;
# the summary line gets the test count.
run_ctest() {
  local name=$1 dir=$2
  shift 2
  local begin=${SECONDS} status=0
  echo
  echo "---- ${name}: ctest $*"
  (cd "${dir}" && ctest --output-on-failure --timeout 600 "$@") 2>&1 | tee "${dir}/ctest.log" ||
    status=$?
  local counts rerun=""
  counts=$(grep -Eo '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "${dir}/ctest.log" |
    tail -1 || true)
  if ((status != 0)) && only_timing_tests_failed "${dir}"; then
    # Tests labelled "timing" compare measured speeds of emulated slow cores
    # over a few short intervals on this shared 2-core machine, where at busy
    # times half the runs misjudge a speed (ull_api_test_np2: 13 of 20 runs
    # failed at 60dba28, 11 of 20 at 9d4b7b3, one after the other, nothing else
    # running; 1 of 10 an hour earlier); those that failed
    # run again, alone, up to four more times, and the summary says so.
    rerun=$(failed_tests "${dir}" | tr '\n' ' ')
    echo "---- ${name}: only timing tests failed (${rerun% }); running them again"
    status=0
    (cd "${dir}" && ctest --output-on-failure --timeout 600 --rerun-failed \
      --repeat until-pass:4) 2>&1 | tee -a "${dir}/ctest.log" || status=$?
    rerun="; timing tests passed when run again: ${rerun% }"
  fi
  if ((status == 0)) && [[ -n "${counts}" ]]; then
    summary+=("ok      ${name}: ${counts}${rerun} ($((SECONDS - begin)) s)")
  else
    summary+=("FAILED  ${name}: ${counts:-ctest did not run} ($((SECONDS - begin)) s)")
    exit $((status == 0 ? 1 : status))
  fi
}

# configure_and_build DIR BUILD_TYPE CMAKE_ARGS...
configure_and_build() {
  local dir=$1 build_type=$2
  shift 2
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "${root}" -B "${dir}" -DCMAKE_BUILD_TYPE="${build_type}" -DFLEXMPI_BUILD_TESTS=ON \
    "${launcher[@]}" "$@" &&
    cmake --build "${dir}" -j "${jobs}"
}

if ((run_setup)); then
  step "setup (scripts/setup.sh)" bash scripts/setup.sh
fi

# The MPI tests run as root in CI and with more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1

for stage in "${stages[@]}"; do
  case "${stage}" in
    openmpi)
      step "openmpi: build (build/)" configure_and_build build RelWithDebInfo -DFLEXMPI_MPI=openmpi
      # Format, function size, MPI_COMM_WORLD, layering (needs build/compile_commands.json).
      step "openmpi: lint (scripts/lint.sh)" bash scripts/lint.sh build
      run_ctest "openmpi: all tests" build -j "${ctest_jobs}"
      ;;
    mpich)
      # The Open MPI build of this run, if any, is installed beside MPICH's (tools_install-two-mpis).
      other_build=""
      [[ " ${stages[*]} " == *" openmpi "* ]] && other_build="${root}/build"
      step "mpich: build (build-mpich/)" configure_and_build build-mpich Release \
        -DFLEXMPI_MPI=mpich -DFLEXMPI_BUILD_BENCHMARKS=OFF -DFLEXMPI_OTHER_MPI_BUILD="${other_build}"
      # "slow": the strategy-copy build, which the Open MPI stage already makes.
      run_ctest "mpich: all but spawn, openmpi-only, slow" build-mpich -j "${ctest_jobs}" \
        -LE 'spawn|openmpi-only|slow'
      ;;
    asan)
      # Debug (-O0 -g): with the sanitizers, -O2 makes compiling several times slower.
      step "asan: build (build-asan/)" configure_and_build build-asan Debug \
        -DFLEXMPI_MPI=openmpi -DFLEXMPI_SANITIZE=address,undefined -DFLEXMPI_BUILD_BENCHMARKS=OFF
      # UBSan only reports by default: make any finding fail the test. A failed
      # malloc returns NULL as without ASan (tests check out-of-memory handling).
      export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
      export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
      run_ctest "asan: unit tests" build-asan -j "${ctest_jobs}" -L unit
      export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1
      # Timing-ratio tests ("timing") mean nothing at sanitizer speed.
      run_ctest "asan: mpi tests (no leak check)" build-asan -j "${ctest_jobs}" -L mpi -LE 'unit|timing'
      ;;
  esac
done
