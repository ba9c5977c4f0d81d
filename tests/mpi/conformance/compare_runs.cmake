# Runs the conformance program bare, preloaded (if PRELOAD is set) and
# linked with flexmpi; each must exit 0, and all must print the same digests.
#   -DMPIEXEC=mpiexec|-n|N  -DBARE=...  -DPROFILE=...  -DPRELOAD=libflexmpi.so or ""
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" mpiexec "${MPIEXEC}")

function(run_variant name)
  execute_process(COMMAND ${mpiexec} ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 100)
  message("---- ${name}: exit status ${status}\n${out}${err}")
  if(NOT status STREQUAL "0")
    message(FATAL_ERROR "${name}: expected exit status 0, got '${status}'")
  endif()
  string(REGEX MATCHALL "digest rank [0-9]+: [0-9a-f]+" digests "${out}")
  list(SORT digests)
  if(digests STREQUAL "")
    message(FATAL_ERROR "${name}: printed no digest")
  endif()
  set(digests_${name} "${digests}" PARENT_SCOPE)
endfunction()

run_variant(bare ${BARE})
run_variant(profile ${PROFILE})
if(NOT "${digests_profile}" STREQUAL "${digests_bare}")
  message(FATAL_ERROR "linked with flexmpi the program received other data:\n"
                      "  bare:    ${digests_bare}\n  profile: ${digests_profile}")
endif()
if(PRELOAD)
  run_variant(preloaded env LD_PRELOAD=${PRELOAD} ${BARE})
  if(NOT "${digests_preloaded}" STREQUAL "${digests_bare}")
    message(FATAL_ERROR "with flexmpi preloaded the program received other data:\n"
                        "  bare:      ${digests_bare}\n  preloaded: ${digests_preloaded}")
  endif()
endif()
