# The epidemic curve of flexmpi-epigraph must be bit-identical whatever the
# processes and the balancing ("the correctness test of every
# redistribution on irregular data"). RUNS: semicolon-separated list of
# "NAME|NP|LB_MODEL|EMULATE_SPEED|EXTRA_ARGS" (EMULATE_SPEED "-" for none,
# EXTRA_ARGS comma-separated; an item FLEXMPI_NAME=VALUE sets the
# environment instead); each run's CSV must equal the first's.
# MIN_MOVES: the balanced runs together must have moved rows at least this
# often, or the test would prove nothing about redistribution.
# PEAK_PROCESSES (optional): the largest process count every run that sets
# FLEXMPI_SCHEDULE must reach, so that its spawns are known to have happened.
# RUNNER (optional, comma-separated): a command that runs each mpiexec line,
# e.g. tests/process/run_spawn_test.sh, which retries Open MPI's spawn hang.
# Variables: MPIEXEC, PROGRAM, WORK_DIR, RUNS, MIN_MOVES, RUNNER.
cmake_policy(SET CMP0007 NEW)  # keep the empty EXTRA_ARGS field
string(REPLACE "!" ";" runs "${RUNS}")
set(common --class small --days 30 --step-minutes 30 --quiet)
string(REPLACE "," ";" runner "${RUNNER}")
set(expected "")
set(moves 0)
foreach(run IN LISTS runs)
  string(REPLACE "|" ";" fields "${run}")
  list(GET fields 0 name)
  list(GET fields 1 np)
  list(GET fields 2 model)
  list(GET fields 3 speed)
  list(GET fields 4 extra)
  string(REPLACE "," ";" items "${extra}")
  set(env FLEXMPI_SAMPLING_INTERVAL=4 FLEXMPI_LOG_LEVEL=warn)
  set(extra "")
  foreach(item IN LISTS items)
    if(item MATCHES "^FLEXMPI_[A-Z_]+=")
      list(APPEND env "${item}")
    else()
      list(APPEND extra "${item}")
    endif()
  endforeach()
  if(NOT speed STREQUAL "-")
    list(APPEND env FLEXMPI_EMULATE_SPEED=${speed})
  endif()
  set(csv ${WORK_DIR}/epigraph_curve_${name}.csv)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} ${runner} ${MPIEXEC} -n ${np} ${PROGRAM} ${common}
                          --lb-model ${model} --output ${csv} ${extra}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${name} (-n ${np}) failed (${code}):\n${out}${err}")
  endif()
  if(NOT out MATCHES "processes=([0-9]+) peak_processes=([0-9]+) .* moves=([0-9]+)")
    message(FATAL_ERROR "${name}: no summary line in:\n${out}")
  endif()
  set(final ${CMAKE_MATCH_1})
  set(peak ${CMAKE_MATCH_2})
  set(run_moves ${CMAKE_MATCH_3})
  if(DEFINED PEAK_PROCESSES AND env MATCHES "FLEXMPI_SCHEDULE" AND
     NOT peak EQUAL PEAK_PROCESSES)
    message(FATAL_ERROR "${name}: peak of ${peak} processes, expected ${PEAK_PROCESSES}")
  endif()
  math(EXPR moves "${moves} + ${run_moves}")
  message(STATUS "${name}: -n ${np} lb_model=${model} speeds=${speed} ${extra}: "
                 "moves=${run_moves}, processes at the end=${final}, peak=${peak}")
  file(READ ${csv} curve)
  if(expected STREQUAL "")
    set(expected "${curve}")
    set(first ${name})
  elseif(NOT curve STREQUAL expected)
    message(FATAL_ERROR "${name}: curve ${csv} differs from ${first}'s")
  endif()
endforeach()
if(moves LESS MIN_MOVES)
  message(FATAL_ERROR "the balanced runs moved rows ${moves} times, expected at least ${MIN_MOVES}")
endif()
