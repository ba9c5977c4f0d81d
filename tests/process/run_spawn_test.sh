#!/usr/bin/env bash
# Runs one spawn test, retrying a run that hangs.
#
#   run_spawn_test.sh ATTEMPT_SECONDS ATTEMPTS COMMAND...
#
# Open MPI 4.1 with an external PMIx 4 (Debian's build) hangs now and then in
# MPI_Comm_spawn: the new process never leaves PMIx_Init, its parent waits in
# PMIx_Lookup (openpmix issue #2735; reproduced here with plain MPI programs,
# more often when processes also terminate). A run still going after
# ATTEMPT_SECONDS (a normal one takes a few seconds) is that hang: its process
# group is killed and the run is retried, up to ATTEMPTS runs. Any other
# failure fails at once. The output says every time it retried.
set -u
attempt_seconds=$1
attempts=$2
shift 2
for ((attempt = 1; attempt <= attempts; ++attempt)); do
  setsid "$@" &
  pid=$!
  deadline=$((SECONDS + attempt_seconds))
  while kill -0 "${pid}" 2> /dev/null && ((SECONDS < deadline)); do
    sleep 0.2
  done
  if kill -0 "${pid}" 2> /dev/null; then
    kill -9 -- "-${pid}" 2> /dev/null
    wait "${pid}" 2> /dev/null
    echo "run_spawn_test: attempt ${attempt} still running after ${attempt_seconds} s:" \
      "the Open MPI spawn hang (openpmix#2735); killed" >&2
    continue
  fi
  wait "${pid}"
  exit $?
done
echo "run_spawn_test: all ${attempts} attempts hung" >&2
exit 1
