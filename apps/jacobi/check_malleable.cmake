# A malleable run gives the same solution as a static one: PROGRAM under the
# smp policy on an emulated cluster (ENV: FLEXMPI_* settings, |-separated)
# spawns and removes processes while it iterates; the checksum of x must be
# the static 2-process run's, bit for bit (x is still converging after 7
# iterations, so the last digits are significant), and the process count
# must have changed (the trace says how).
string(REPLACE "|" ";" settings "${ENV}")

function(run label)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ARGN}
                          bash ${SPAWN_RUNNER} 60 3 ${MPIEXEC} -n 2 ${PROGRAM} --size 301
                          --iterations 7 --quiet
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
run(malleable ${settings} FLEXMPI_TRACE=${TRACE})
if(NOT checksum STREQUAL expected)
  message(FATAL_ERROR "malleable checksum ${checksum} != static ${expected}")
endif()
file(STRINGS "${TRACE}" records REGEX "\"action\":\"(spawn|remove)\"")
list(LENGTH records reconfigured)
if(reconfigured LESS 2)
  message(FATAL_ERROR "the trace shows ${reconfigured} reconfigurations, expected a spawn and a removal")
endif()
message(STATUS "same checksum; ${reconfigured} intervals with a reconfiguration; ended on ${procs} processes")
