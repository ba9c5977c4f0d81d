# For each of PROGRAMS (comma-separated): after 4 iterations (x not yet
# converged, so every bit of it is significant) the checksum of x must be the
# same with 1, 2 and 3 processes and for both programs (the row partition must
# not change the arithmetic); after 60 iterations the residual must be below 1e-10.
string(REPLACE "," ";" programs "${PROGRAMS}")

function(run program np iterations)
  execute_process(COMMAND ${MPIEXEC} -n ${np} ${program} --size 301 --iterations ${iterations} --quiet
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${program} -n ${np} failed (${code}):\n${out}${err}")
  endif()
  if(NOT out MATCHES "residual=([^ ]+) checksum=([^ \n]+)")
    message(FATAL_ERROR "${program} -n ${np}: no summary line in:\n${out}")
  endif()
  message(STATUS "${program} -n ${np}, ${iterations} iterations: ${CMAKE_MATCH_0}")
  set(residual "${CMAKE_MATCH_1}" PARENT_SCOPE)
  set(checksum "${CMAKE_MATCH_2}" PARENT_SCOPE)
endfunction()

set(expected "")
foreach(program IN LISTS programs)
  foreach(np 1 2 3)
    run(${program} ${np} 4)
    if(expected STREQUAL "")
      set(expected "${checksum}")
    elseif(NOT checksum STREQUAL expected)
      message(FATAL_ERROR "${program} -n ${np}: checksum ${checksum} != ${expected}")
    endif()
  endforeach()
  run(${program} 2 60)
  if(NOT residual MATCHES "e-(1[0-9]|[2-9][0-9])$")
    message(FATAL_ERROR "${program} -n 2: residual ${residual} is not below 1e-10")
  endif()
endforeach()
