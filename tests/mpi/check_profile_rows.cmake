# Runs a program under mpiexec with libflexmpi preloaded and FLEXMPI_REPORT
# set, then checks the JSON profile's rows are exactly the expected ones.
#   -DCOMMAND=...        the mpiexec command line (| separates arguments)
#   -DPROFILE=...        the JSON file the command writes
#   -DROWS=...           optional "operation:comm_size:calls:sent:received ..."
#                        (summed over processes), the only rows the profile may hold
#   -DCATEGORIES=...     optional "operation:category ..." to check too
#   -DEXPECT_STDOUT=...  optional regular expression, EXPECT_STDOUT_COUNT times
#   -DMIN_MPI_SECONDS=.. optional "rank:seconds": that process's MPI time at least
#   -DREQUIRE=...        optional command that must succeed first, else the
#                        test prints "SKIPPED: <REQUIRE_REASON>"
cmake_minimum_required(VERSION 3.25)
if(DEFINED REQUIRE)
  string(REPLACE "|" ";" require "${REQUIRE}")
  execute_process(COMMAND ${require} RESULT_VARIABLE status OUTPUT_QUIET ERROR_QUIET)
  if(NOT status STREQUAL "0")
    message("SKIPPED: ${REQUIRE_REASON}")
    return()
  endif()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/../support/profile_json.cmake)
flexmpi_run_for_profile()

set(failures "")
if(DEFINED EXPECT_STDOUT)
  string(REGEX MATCHALL "${EXPECT_STDOUT}" matches "${out}")
  list(LENGTH matches found)
  if(NOT found EQUAL EXPECT_STDOUT_COUNT)
    string(APPEND failures "  '${EXPECT_STDOUT}' ${found} times in the output, expected ${EXPECT_STDOUT_COUNT}\n")
  endif()
endif()

flexmpi_read_profile_rows()
if(DEFINED ROWS)
  separate_arguments(rows UNIX_COMMAND "${ROWS}")
  flexmpi_expect_rows("${rows}")
endif()

separate_arguments(categories UNIX_COMMAND "${CATEGORIES}")
foreach(expected ${categories})
  string(REPLACE ":" ";" fields "${expected}")
  list(GET fields 0 name)
  list(GET fields 1 want)
  if(NOT "${got_category_${name}}" STREQUAL want)
    string(APPEND failures "  ${name}: category '${got_category_${name}}', expected '${want}'\n")
  endif()
endforeach()

if(DEFINED MIN_MPI_SECONDS)
  string(REPLACE ":" ";" fields "${MIN_MPI_SECONDS}")
  list(GET fields 0 rank)
  list(GET fields 1 minimum)
  string(JSON seconds GET "${json}" processes ${rank} mpi_time)
  if(seconds LESS minimum)
    string(APPEND failures "  rank ${rank}'s MPI time ${seconds} s, expected at least ${minimum} s\n")
  endif()
endif()

if(failures)
  message(FATAL_ERROR "profile ${PROFILE} differs from what the program did:\n${failures}")
endif()
