# The contact graph of class small has the target degree statistics (mean
# 25, median 19, p90 54, p99 97, max 200), within tolerance, and equal row
# blocks hold unequal nonzeros as in the thesis. Variables: MPIEXEC, PROGRAM.
execute_process(COMMAND ${MPIEXEC} -n 2 ${PROGRAM} --class small --graph-stats
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "--graph-stats failed (${code}):\n${out}${err}")
endif()
message(STATUS "${out}")
# statistic, lowest, highest accepted
set(bounds degree_mean 23 27  degree_median 17 21  degree_p90 49 59  degree_p99 87 107
           degree_max 170 200  block_nnz_max_over_mean_np2 1.03 1.09
           block_nnz_max_over_mean_np4 1.15 1.25  block_nnz_max_over_mean_np8 1.40 1.60)
list(LENGTH bounds length)
math(EXPR last "${length} - 1")
foreach(i RANGE 0 ${last} 3)
  math(EXPR low_index "${i} + 1")
  math(EXPR high_index "${i} + 2")
  list(GET bounds ${i} name)
  list(GET bounds ${low_index} low)
  list(GET bounds ${high_index} high)
  if(NOT out MATCHES "${name}=([0-9.]+)")
    message(FATAL_ERROR "${name} missing from the statistics")
  endif()
  set(value ${CMAKE_MATCH_1})
  if(value LESS low OR value GREATER high)
    message(FATAL_ERROR "${name}=${value}: expected ${low} to ${high}")
  endif()
endforeach()
