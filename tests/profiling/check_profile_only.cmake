# Runs profile_only.c under mpiexec with libflexmpi preloaded and
# FLEXMPI_PROFILE=<PROFILE>, then checks the JSON profile holds the 2
# processes and exactly the calls and bytes the program made.
#   -DCOMMAND=...  the mpiexec command line (| separates arguments)
#   -DPROFILE=...  the JSON file the command writes
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../support/profile_json.cmake)
flexmpi_run_for_profile()

set(failures "")
macro(expect what actual expected)
  if(NOT "${actual}" STREQUAL "${expected}")
    string(APPEND failures "  ${what}: got '${actual}', expected '${expected}'\n")
  endif()
endmacro()

string(JSON nprocs GET "${json}" nprocs)
expect("nprocs" "${nprocs}" 2)
string(JSON processes LENGTH "${json}" processes)
expect("number of processes" "${processes}" 2)

# rank: calls sent received (Send/Recv 80, Allreduce 16+16, Bcast 64 from rank 0)
set(process_0 "5;160;16")
set(process_1 "5;16;160")
foreach(p 0 1)
  string(JSON rank GET "${json}" processes ${p} rank)
  expect("processes[${p}].rank" "${rank}" ${p})
  list(GET process_${p} 0 calls)
  list(GET process_${p} 1 sent)
  list(GET process_${p} 2 received)
  foreach(field mpi_calls bytes_sent bytes_received)
    string(JSON value GET "${json}" processes ${p} ${field})
    string(REGEX REPLACE "\\.0*$" "" value "${value}")  # doubles in the JSON
    if(field STREQUAL "mpi_calls")
      expect("processes[${p}].${field}" "${value}" ${calls})
    elseif(field STREQUAL "bytes_sent")
      expect("processes[${p}].${field}" "${value}" ${sent})
    else()
      expect("processes[${p}].${field}" "${value}" ${received})
    endif()
  endforeach()
endforeach()

# operation:comm size:calls:bytes sent:bytes received (summed over processes)
flexmpi_read_profile_rows()
flexmpi_expect_rows("MPI_Send:2:1:80:0;MPI_Recv:2:1:0:80;MPI_Allreduce:2:2:32:32;MPI_Bcast:2:2:64:64;MPI_Barrier:2:4:0:0")

if(failures)
  message(FATAL_ERROR "profile ${PROFILE} differs from what profile_only.c did:\n${failures}")
endif()
