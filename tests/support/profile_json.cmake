# What the checks of a JSON profile share (tests/profiling/check_profile_only.cmake,
# tests/mpi/check_profile_rows.cmake): the run that writes it and its rows.
# Macros: the variables they set are the including script's.
#
# flexmpi_run_for_profile()
#   runs COMMAND (| separates arguments), which must exit 0 and write PROFILE
#   (a stale one is removed first: it must not pass); sets `out` (its output)
#   and `json` (the profile), and prints both.
# flexmpi_read_profile_rows()
#   from `json`, for every row of "operations": got_NAME, the row as
#   "comm_size:calls:sent:received", and got_category_NAME (a second row of
#   one operation is named "NAME(second row)"); `seen`: the names, in order.
# flexmpi_expect_rows(ROWS)
#   ROWS: a list of "operation:comm_size:calls:sent:received", the only rows
#   the profile may hold; appends to `failures` each one missing or different
#   and each row the profile holds beyond them.

macro(flexmpi_run_for_profile)
  string(REPLACE "|" ";" command "${COMMAND}")
  file(REMOVE "${PROFILE}")
  execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 60)
  if(NOT status STREQUAL "0")
    message(FATAL_ERROR "exit status '${status}'\n${out}\n${err}")
  endif()
  if(NOT EXISTS "${PROFILE}")
    message(FATAL_ERROR "no profile written to ${PROFILE}\n${out}\n${err}")
  endif()
  file(READ "${PROFILE}" json)
  message("${out}\n${json}")
endmacro()

macro(flexmpi_read_profile_rows)
  string(JSON operations LENGTH "${json}" operations)
  set(seen "")
  if(operations GREATER 0)
    math(EXPR last "${operations} - 1")
    foreach(i RANGE 0 ${last})
      string(JSON name GET "${json}" operations ${i} operation)
      set(row "")
      foreach(field comm_size calls bytes_sent bytes_received)
        string(JSON value GET "${json}" operations ${i} ${field})
        list(APPEND row ${value})
      endforeach()
      string(REPLACE ";" ":" row "${row}")
      if(name IN_LIST seen)
        set(name "${name}(second row)")
      endif()
      list(APPEND seen ${name})
      set(got_${name} "${row}")
      string(JSON got_category_${name} ERROR_VARIABLE no_category GET "${json}" operations ${i}
             category)
    endforeach()
  endif()
endmacro()

macro(flexmpi_expect_rows rows)
  set(expected_names "")
  foreach(expected ${rows})
    string(REPLACE ":" ";" fields "${expected}")
    list(POP_FRONT fields name)
    string(REPLACE ";" ":" want "${fields}")
    list(APPEND expected_names ${name})
    if(NOT DEFINED got_${name})
      string(APPEND failures "  ${name} missing (expected ${want})\n")
    elseif(NOT got_${name} STREQUAL want)
      string(APPEND failures
             "  ${name}: got ${got_${name}}, expected ${want} (comm size:calls:sent:received)\n")
    endif()
  endforeach()
  foreach(name ${seen})
    if(NOT name IN_LIST expected_names)
      string(APPEND failures "  unexpected row ${name}: ${got_${name}}\n")
    endif()
  endforeach()
endmacro()
