# The checked run of the shell tests that run a command and judge how it
# ends (tests/core/settings_files_test.sh, tests/checkpoint/checkpoint_files_test.sh).
# Sourced; it defines:
#
#   fail MESSAGE   prints "FAILED: MESSAGE" and marks the test failed (failed=1:
#                  the test ends with exit "${failed}")
#   run NAME EXPECTED PATTERN ENV... -- COMMAND...
#                  runs COMMAND with the variables ENV (NAME=value) added, killed
#                  after run_seconds (reported as a hang). EXPECTED: zero, nonzero
#                  or an exit status. PATTERN, an extended regular expression, must
#                  match the output (standard output and error): exactly once when
#                  run_pattern_once=1 (one message, not one per process), else at
#                  least once. A failed check prints the output's last 15 lines.
failed=0
run_seconds=120
run_pattern_once=0

fail() {
  echo "FAILED: $*"
  failed=1
}

run() {
  local name=$1 expected=$2 pattern=$3
  shift 3
  local environment=()
  while [[ $1 != "--" ]]; do
    environment+=("$1")
    shift
  done
  shift
  local started=${SECONDS} output status count
  output=$(env "${environment[@]}" timeout -k 5 "${run_seconds}" "$@" 2>&1)
  status=$?
  count=$(grep -cE -- "${pattern}" <<<"${output}")
  if ((status == 124 || status == 137)); then
    fail "${name}: did not end within ${run_seconds} s (a hang)"
  elif [[ ${expected} == zero && ${status} -ne 0 ]] || [[ ${expected} == nonzero && ${status} -eq 0 ]] ||
    [[ ${expected} =~ ^[0-9]+$ && ${status} -ne ${expected} ]]; then
    fail "${name}: exit status ${status}, expected ${expected}"
  elif ((run_pattern_once == 1 && count != 1)); then
    fail "${name}: '${pattern}' appears ${count} times, expected once"
  elif ((count == 0)); then
    fail "${name}: the output does not match '${pattern}'"
  else
    echo "ok: ${name} ($((SECONDS - started)) s)"
    return
  fi
  echo "${output}" | tail -15
}
