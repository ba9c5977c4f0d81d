# HPMP (thesis 5.4.2, Alg. 7) on an emulated cluster with idle PEs of a fast
# and a slow class: PROGRAM under FLEXMPI_POLICY=hpmp (ENV: FLEXMPI_*
# settings, |-separated; ARGS: the program's, |-separated) must spawn, trace
# every candidate it predicted with its predicted time and the choice, and
# end with the checksum of the static 2-process run, bit for bit.
string(REPLACE "|" ";" settings "${ENV}")
string(REPLACE "|" ";" arguments "${ARGS}")

function(run label)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ARGN}
                          bash ${SPAWN_RUNNER} 60 3 ${MPIEXEC} -n 2 ${PROGRAM} ${arguments} --quiet
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code EQUAL 0 OR NOT out MATCHES "procs=([0-9]+) .*checksum=([^ \n]+)")
    message(FATAL_ERROR "${label} run failed (${code}):\n${out}${err}")
  endif()
  message(STATUS "${label}: ${out}")
  set(procs "${CMAKE_MATCH_1}" PARENT_SCOPE)
  set(checksum "${CMAKE_MATCH_2}" PARENT_SCOPE)
endfunction()

run(static FLEXMPI_POLICY=none)
set(expected "${checksum}")
file(REMOVE "${TRACE}")
run(hpmp ${settings} FLEXMPI_POLICY=hpmp FLEXMPI_TRACE=${TRACE})
if(NOT checksum STREQUAL expected)
  message(FATAL_ERROR "hpmp checksum ${checksum} != static ${expected}")
endif()
# The interval that decided the spawn: its candidates (s = 0, 1, 2 over the
# fast class first) with their predictions, and the reason.
file(STRINGS "${TRACE}" decided REGEX "\"reason\":\"hpmp: spawn [0-9]+ on the fastest")
list(LENGTH decided decisions)
if(decisions LESS 1)
  message(FATAL_ERROR "no interval of ${TRACE} shows HPMP deciding a spawn")
endif()
list(GET decided 0 first)
foreach(expected_text "\"considered\":\\[" "\"predicted_seconds\":" "\"delta\":\\[0,0\\]"
                      "\"delta\":\\[0,1\\]" "\"name\":\"C8\"" "\"name\":\"C1\"")
  if(NOT first MATCHES "${expected_text}")
    message(FATAL_ERROR "the HPMP decision lacks ${expected_text}:\n${first}")
  endif()
endforeach()
file(STRINGS "${TRACE}" spawned REGEX "\"action\":\"spawn\"")
list(LENGTH spawned spawns)
if(spawns LESS 1 OR procs LESS_EQUAL 2)
  message(FATAL_ERROR "HPMP decided a spawn but the trace shows ${spawns} spawns, ended on ${procs}")
endif()
message(STATUS "same checksum; ${decisions} HPMP spawn decisions; ended on ${procs} processes")
