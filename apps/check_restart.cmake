# A job interrupted after a checkpoint and restarted from it on another number
# of processes ends with the uninterrupted job's result (FLEXMPI_CHECKPOINT,
# FLEXMPI_RESTART, XMPI_Resume):
#   1. PROGRAM ARGS on 3 processes, uninterrupted: the expected summary line
#      (and output file);
#   2. PROGRAM CHECKPOINT_ARGS (default ARGS) on 3 processes with
#      FLEXMPI_CHECKPOINT_EVERY=EVERY, interrupted as INTERRUPT says:
#        none  it ends by itself (CHECKPOINT_ARGS stop it before ARGS would),
#              its last checkpoint is of iteration RESUMED_AT;
#        KILL  one process gets SIGKILL once a checkpoint exists; the job
#              fails (interrupt_run.sh);
#        USR1  mpiexec gets SIGUSR1 once a checkpoint exists: every process
#              checkpoints at the next iteration end and the job exits with
#              status 75 (XMPI_CHECKPOINTED_EXIT_STATUS);
#   3. PROGRAM ARGS restarted from that checkpoint on each of RESTART_PROCS
#      (default 1|2|4) processes: each must say it resumed at the
#      checkpoint's iteration and print the same summary line (the first line
#      that starts with SUMMARY), except the fields IGNORE (name=value fields
#      whose value may differ: process counts, times) and the field CLOSE, whose
#      number (fixed-point, as printed) must agree to RELATIVE_DIGITS
#      significant digits, |a - b| <= |a| 10^-RELATIVE_DIGITS; with
#      OUTPUT_OPTION each run writes a file there, which must be the same.
# Lists are |-separated. Variables: MPIEXEC, PROGRAM, WORK_DIR, ARGS,
# CHECKPOINT_ARGS, EVERY, INTERRUPT, RESUMED_AT, RESTART_PROCS, SUMMARY,
# IGNORE, CLOSE, RELATIVE_DIGITS, OUTPUT_OPTION, ENV (VAR=value|... for every
# run), INTERRUPT_RUNNER (apps/interrupt_run.sh).
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" arguments "${ARGS}")
if(DEFINED CHECKPOINT_ARGS)
  string(REPLACE "|" ";" checkpoint_arguments "${CHECKPOINT_ARGS}")
else()
  set(checkpoint_arguments "${arguments}")
endif()
if(NOT DEFINED RESTART_PROCS)
  set(RESTART_PROCS "1|2|4")
endif()
string(REPLACE "|" ";" restart_procs "${RESTART_PROCS}")
string(REPLACE "|" ";" ignored "${IGNORE}")
string(REPLACE "|" ";" settings "${ENV}")
if(NOT DEFINED INTERRUPT)
  set(INTERRUPT none)
endif()
set(checkpoint ${WORK_DIR}/checkpoint.h5)
# The file's name in a regular expression.
string(REGEX REPLACE "([][+.*?()^$|\\])" "\\\\\\1" checkpoint_regex "${checkpoint}")
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
# No checkpoint setting from the caller's environment: each run sets its own.
set(clean_env --unset=FLEXMPI_CHECKPOINT --unset=FLEXMPI_CHECKPOINT_EVERY
              --unset=FLEXMPI_CHECKPOINT_SIGNALS --unset=FLEXMPI_CHECKPOINT_ON_SIGNAL
              --unset=FLEXMPI_CHECKPOINT_LATENCY --unset=FLEXMPI_RESTART)

# run(label np "arguments" [VAR=value...]): runs PROGRAM on np processes with
# these settings (the interrupted run through INTERRUPT_RUNNER); sets `out`,
# `err` and `code` in the caller.
function(run label np args)
  set(command ${MPIEXEC} -n ${np} ${PROGRAM} ${args})
  if(OUTPUT_OPTION)
    list(APPEND command ${OUTPUT_OPTION} ${WORK_DIR}/${label}.out)
  endif()
  set(runner "")
  if(label STREQUAL "interrupted" AND NOT INTERRUPT STREQUAL "none")
    set(runner bash ${INTERRUPT_RUNNER} ${INTERRUPT} ${checkpoint} ${PROGRAM})
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${clean_env} ${settings} ${ARGN}
                          ${runner} ${command}
                  OUTPUT_VARIABLE output ERROR_VARIABLE errors RESULT_VARIABLE status
                  TIMEOUT 180)
  message(STATUS "${label} (-n ${np}): exit status ${status}")
  set(out "${output}" PARENT_SCOPE)
  set(err "${errors}" PARENT_SCOPE)
  set(code "${status}" PARENT_SCOPE)
endfunction()

# The summary line of `text` without its IGNORE and CLOSE fields, in
# `line_variable`, and the CLOSE field's value in `close_variable`.
function(summary label text line_variable close_variable)
  if(text MATCHES "(^|\n)(${SUMMARY}[^\n]*)")
    set(line "${CMAKE_MATCH_2}")
  else()
    message(FATAL_ERROR "${label}: no summary line (${SUMMARY}) in:\n${text}")
  endif()
  set(value "")
  if(CLOSE)
    if(NOT line MATCHES "(^| )${CLOSE}=([^ ]+)")
      message(FATAL_ERROR "${label}: no ${CLOSE}= in: ${line}")
    endif()
    set(value "${CMAKE_MATCH_2}")
    list(APPEND ignored ${CLOSE})
  endif()
  foreach(field IN LISTS ignored)
    string(REGEX REPLACE "(^| )${field}=[^ ]+" "\\1${field}=*" line "${line}")
  endforeach()
  set(${line_variable} "${line}" PARENT_SCOPE)
  set(${close_variable} "${value}" PARENT_SCOPE)
endfunction()

# Whether two fixed-point numbers printed alike (same decimals) agree to
# RELATIVE_DIGITS significant digits, in integers (CMake has no floating point).
function(agree a b result)
  foreach(name a b)
    if(NOT "${${name}}" MATCHES "^(-?)([0-9]+)\\.([0-9]+)$")
      message(FATAL_ERROR "${CLOSE}=${${name}}: not a fixed-point number")
    endif()
    set(${name}_sign "${CMAKE_MATCH_1}")
    set(${name}_decimals "${CMAKE_MATCH_3}")
    string(REGEX REPLACE "^0+([0-9])" "\\1" ${name}_units "${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
  endforeach()
  string(LENGTH "${a_decimals}" a_length)
  string(LENGTH "${b_decimals}" b_length)
  string(LENGTH "${a_units}" units_length)
  if(NOT a_length EQUAL b_length OR units_length GREATER 18)
    message(FATAL_ERROR "${CLOSE}: cannot compare ${a} and ${b} in 64-bit integers")
  endif()
  math(EXPR difference "${a_sign}${a_units} - (${b_sign}${b_units})")
  if(difference LESS 0)
    math(EXPR difference "-(${difference})")
  endif()
  set(limit "${a_units}")
  foreach(digit RANGE 1 ${RELATIVE_DIGITS})
    math(EXPR limit "${limit} / 10")
  endforeach()
  if(difference GREATER limit)
    set(${result} FALSE PARENT_SCOPE)
  else()
    set(${result} TRUE PARENT_SCOPE)
  endif()
endfunction()

# 1. Uninterrupted.
run(uninterrupted 3 "${arguments}")
if(NOT code EQUAL 0)
  message(FATAL_ERROR "uninterrupted run failed (${code}):\n${out}${err}")
endif()
summary(uninterrupted "${out}" expected expected_close)
message(STATUS "uninterrupted: ${out}")

# 2. Checkpointed and interrupted.
set(checkpoint_env FLEXMPI_CHECKPOINT=${checkpoint} FLEXMPI_CHECKPOINT_EVERY=${EVERY})
if(INTERRUPT STREQUAL "USR1")
  # Polled about every 0.05 s instead of 5 s (one small allreduce each time).
  list(APPEND checkpoint_env FLEXMPI_CHECKPOINT_LATENCY=0.1)
endif()
run(interrupted 3 "${checkpoint_arguments}" ${checkpoint_env})
string(REGEX MATCHALL "(checkpoint of iteration [0-9]+ written to|interrupt_run:) [^\n]*" written
       "${err}")
string(REPLACE ";" "\n  " written_lines "${written}")
message(STATUS "interrupted run's checkpoints and signal:\n  ${written_lines}")
if(INTERRUPT STREQUAL "none")
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "the checkpointing run failed (${code}):\n${out}${err}")
  endif()
elseif(INTERRUPT STREQUAL "KILL")
  if(code EQUAL 0 OR err MATCHES "interrupt_run: the job" OR out MATCHES "(^|\n)${SUMMARY}")
    message(FATAL_ERROR "the run was not killed (${code}):\n${out}${err}")
  endif()
elseif(INTERRUPT STREQUAL "USR1")
  if(NOT code EQUAL 75)
    message(FATAL_ERROR "after SIGUSR1: exit status ${code}, expected 75:\n${out}${err}")
  endif()
  if(NOT err MATCHES "checkpoint of iteration ([0-9]+) written to ${checkpoint_regex} [^\n]*, signal\\)")
    message(FATAL_ERROR "after SIGUSR1: no checkpoint for the signal:\n${err}")
  endif()
  set(RESUMED_AT "${CMAKE_MATCH_1}")
else()
  message(FATAL_ERROR "INTERRUPT='${INTERRUPT}': expected none, KILL or USR1")
endif()
if(NOT EXISTS ${checkpoint})
  message(FATAL_ERROR "no checkpoint ${checkpoint}:\n${out}${err}")
endif()

# 3. Restarted on other process counts.
set(resumed "")
foreach(np IN LISTS restart_procs)
  run(restart_np${np} ${np} "${arguments}" FLEXMPI_RESTART=${checkpoint})
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "restart on ${np} processes failed (${code}):\n${out}${err}")
  endif()
  if(NOT err MATCHES "restarted from ${checkpoint_regex} at iteration ([0-9]+) on ${np} processes")
    message(FATAL_ERROR "restart on ${np} processes: no 'restarted from ${checkpoint}':\n${err}")
  endif()
  set(at "${CMAKE_MATCH_1}")
  if(DEFINED RESUMED_AT AND NOT at EQUAL RESUMED_AT)
    message(FATAL_ERROR "restart on ${np} processes resumed at ${at}, expected ${RESUMED_AT}")
  endif()
  if(INTERRUPT STREQUAL "KILL")
    # A periodic checkpoint, after the first one, which interrupt_run.sh waited for.
    math(EXPR remainder "${at} % ${EVERY}")
    if(at LESS EVERY OR NOT remainder EQUAL 0)
      message(FATAL_ERROR "restart on ${np} processes resumed at ${at}: not a checkpoint of "
                          "every ${EVERY} iterations")
    endif()
  endif()
  summary("restart on ${np}" "${out}" line close)
  message(STATUS "restart on ${np} processes, resumed at ${at}: ${out}")
  if(NOT line STREQUAL expected)
    message(FATAL_ERROR "restart on ${np} processes:\n  ${line}\nuninterrupted:\n  ${expected}")
  endif()
  if(CLOSE)
    agree("${close}" "${expected_close}" same)
    if(NOT same)
      message(FATAL_ERROR "restart on ${np} processes: ${CLOSE}=${close}, uninterrupted "
                          "${expected_close}: not the same to ${RELATIVE_DIGITS} digits")
    endif()
  endif()
  if(OUTPUT_OPTION)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK_DIR}/restart_np${np}.out
                            ${WORK_DIR}/uninterrupted.out RESULT_VARIABLE differs)
    if(NOT differs EQUAL 0)
      message(FATAL_ERROR "restart on ${np} processes: ${WORK_DIR}/restart_np${np}.out differs "
                          "from ${WORK_DIR}/uninterrupted.out")
    endif()
  endif()
  list(APPEND resumed ${at})
endforeach()
message(STATUS "restarts on ${RESTART_PROCS} processes resumed at ${resumed}: same result")
