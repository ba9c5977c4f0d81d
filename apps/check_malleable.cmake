# A malleable run gives the same solution as a static one: PROGRAM (ARGS,
# |-separated; x must still be converging at the end so that the last digits
# of its checksum are significant; CHECKSUM_DIGITS, if set, compares only the
# checksum's first characters, for a program whose dot products round
# differently on another process count) under a malleability policy on an emulated
# cluster (ENV: FLEXMPI_* settings, |-separated) spawns, and maybe removes,
# processes while it iterates; the checksum of x must be the static
# 2-process run's, bit for bit, and the trace must show at least MIN_SPAWNS
# intervals with a spawn and MIN_REMOVALS with a removal. Optionally, the
# first trace record matching RECORD must contain every regex of
# RECORD_FIELDS (|-separated): what the policy decided and why.
string(REPLACE "|" ";" settings "${ENV}")
string(REPLACE "|" ";" arguments "${ARGS}")
string(REPLACE "|" ";" record_fields "${RECORD_FIELDS}")

function(run label)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ARGN}
                          bash ${SPAWN_RUNNER} 60 3 ${MPIEXEC} -n 2 ${PROGRAM} ${arguments} --quiet
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code EQUAL 0 OR NOT out MATCHES "procs=([0-9]+) .*checksum=([^ \n]+)")
    message(FATAL_ERROR "${label} run failed (${code}):\n${out}${err}")
  endif()
  message(STATUS "${label}: ${out}")
  set(procs "${CMAKE_MATCH_1}" PARENT_SCOPE)
  set(sum "${CMAKE_MATCH_2}")
  if(DEFINED CHECKSUM_DIGITS)
    string(SUBSTRING "${sum}" 0 ${CHECKSUM_DIGITS} sum)
  endif()
  set(checksum "${sum}" PARENT_SCOPE)
endfunction()

# The number of trace records whose reconfigurations include `action`.
function(count_actions action result)
  file(STRINGS "${TRACE}" records REGEX "\"action\":\"${action}\"")
  list(LENGTH records found)
  set(${result} ${found} PARENT_SCOPE)
endfunction()

run(static FLEXMPI_POLICY=none)
set(expected "${checksum}")
file(REMOVE "${TRACE}")
run(malleable ${settings} FLEXMPI_TRACE=${TRACE})
if(NOT checksum STREQUAL expected)
  message(FATAL_ERROR "malleable checksum ${checksum} != static ${expected}")
endif()
count_actions(spawn spawns)
count_actions(remove removals)
if(spawns LESS MIN_SPAWNS OR removals LESS MIN_REMOVALS)
  message(FATAL_ERROR "the trace shows ${spawns} spawns and ${removals} removals, expected at "
                      "least ${MIN_SPAWNS} and ${MIN_REMOVALS}")
endif()
if(DEFINED RECORD)
  file(STRINGS "${TRACE}" decided REGEX "${RECORD}")
  if(NOT decided)
    message(FATAL_ERROR "no record of ${TRACE} matches ${RECORD}")
  endif()
  list(GET decided 0 first)
  foreach(field IN LISTS record_fields)
    if(NOT first MATCHES "${field}")
      message(FATAL_ERROR "the decision lacks ${field}:\n${first}")
    endif()
  endforeach()
endif()
message(STATUS "same checksum; ${spawns} spawns, ${removals} removals; ended on ${procs} processes")
