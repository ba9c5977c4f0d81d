# Runs each of PROGRAMS (comma-separated) with ARGS (|-separated) on 1, 2 and
# 3 processes; the first group of the regular expression RESULT (where @NP@
# stands for the process count) must be the same string in every run: the row
# partition must not change the arithmetic. With CONVERGED_ARGS, each program
# then runs on 2 processes with those arguments and its output must match
# CONVERGED (e.g. a residual below a bound).
#   cmake -DMPIEXEC=... -DPROGRAMS=a,b -DARGS=... -DRESULT=... [-DCONVERGED_ARGS=... -DCONVERGED=...] -P
cmake_minimum_required(VERSION 3.25)
string(REPLACE "," ";" programs "${PROGRAMS}")

function(run program np arguments)
  string(REPLACE "|" ";" arguments "${arguments}")
  execute_process(COMMAND ${MPIEXEC} -n ${np} ${program} ${arguments}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code TIMEOUT 90)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${program} on ${np} processes failed (${code}):\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

set(expected "")
foreach(program IN LISTS programs)
  foreach(np 1 2 3)
    run(${program} ${np} "${ARGS}")
    string(REPLACE "@NP@" "${np}" pattern "${RESULT}")
    if(NOT out MATCHES "${pattern}")
      message(FATAL_ERROR "${program} on ${np} processes: no line matching '${pattern}' in:\n${out}")
    endif()
    message(STATUS "${program}, ${np} processes: ${CMAKE_MATCH_1}")
    if(expected STREQUAL "")
      set(expected "${CMAKE_MATCH_1}")
    elseif(NOT CMAKE_MATCH_1 STREQUAL expected)
      message(FATAL_ERROR "${program} on ${np} processes: ${CMAKE_MATCH_1}, expected ${expected}")
    endif()
  endforeach()
  if(DEFINED CONVERGED_ARGS)
    run(${program} 2 "${CONVERGED_ARGS}")
    if(NOT out MATCHES "${CONVERGED}")
      message(FATAL_ERROR "${program} on 2 processes (${CONVERGED_ARGS}): no match for '${CONVERGED}' in:\n${out}")
    endif()
  endif()
endforeach()
