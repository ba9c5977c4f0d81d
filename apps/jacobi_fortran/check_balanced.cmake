# PROGRAM (flexmpi-jacobi-fortran) on 2 processes, rank 1 emulated at half
# speed (FLEXMPI_EMULATE_SPEED=1.0,0.5) in sleep mode with a fixed time per
# row (FLEXMPI_EMULATE_UNIT_SECONDS): the same imbalance on a busy machine.
# Static, then balanced with a trace: the balanced run must move rows to
# rank 0 (its first "rebalance" record gives rank 0 more) and end with the
# static run's checksum, bit for bit: the Fortran pointers followed the moved
# arrays. x is still converging after 6 iterations.
set(arguments --size 1000 --iterations 6 --sampling-interval 1 --quiet)

function(run label)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env FLEXMPI_EMULATE_SPEED=1.0,0.5
                          FLEXMPI_EMULATE_MODE=sleep FLEXMPI_EMULATE_UNIT_SECONDS=0.00005
                          ${MPIEXEC} -n 2 ${PROGRAM} ${arguments} ${ARGN}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code EQUAL 0 OR NOT out MATCHES "checksum=([^ \n]+)")
    message(FATAL_ERROR "${label} run failed (${code}):\n${out}${err}")
  endif()
  message(STATUS "${label}: ${out}")
  set(checksum "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

run(static --static)
set(expected "${checksum}")
file(REMOVE "${TRACE}")
run(balanced --trace ${TRACE})
if(NOT checksum STREQUAL expected)
  message(FATAL_ERROR "balanced checksum ${checksum} != static ${expected}")
endif()
file(STRINGS "${TRACE}" moves REGEX "\"decision\":\"rebalance\"")
if(NOT moves)
  message(FATAL_ERROR "no rebalance in ${TRACE}")
endif()
list(GET moves 0 move)
if(NOT move MATCHES "\"partition\":\\[([0-9]+),([0-9]+)\\]" OR NOT CMAKE_MATCH_1 GREATER CMAKE_MATCH_2)
  message(FATAL_ERROR "the rebalance does not give the faster rank 0 more rows:\n${move}")
endif()
message(STATUS "same checksum; rows moved to ${CMAKE_MATCH_1},${CMAKE_MATCH_2}")
