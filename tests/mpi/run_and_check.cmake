# Runs a command and checks its exit status and output; a CTest test with
# both conditions (PASS_REGULAR_EXPRESSION alone would ignore the exit code).
#   -DCOMMAND=a;b;c          the command (a CMake list; pass it with | instead of ;)
#   -DEXPECT_EXIT=zero|nonzero
#   -DEXPECT_STDERR=regex    must match standard error
#   -DEXPECT_STDERR_COUNT=n  ... exactly n times (optional)
#   -DEXPECT_STDERR_ALSO=regex  another that must match standard error (optional)
#   -DEXPECT_STDOUT=regex    must match standard output (optional)
#   -DREJECT_STDOUT=regex    must not match standard output (optional)
#   -DREJECT_STDERR=regex    must not match standard error (optional)
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" command "${COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 60)
message("exit status: ${status}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")

if(EXPECT_EXIT STREQUAL "zero" AND NOT status STREQUAL "0")
  message(FATAL_ERROR "expected exit status 0, got '${status}'")
elseif(EXPECT_EXIT STREQUAL "nonzero" AND (status STREQUAL "0" OR NOT status MATCHES "^[0-9]+$"))
  message(FATAL_ERROR "expected a non-zero exit status, got '${status}'")
endif()
if(DEFINED EXPECT_STDERR)
  # A ; in a match would split the list of matches: count on the text without them
  # (a regex cannot hold one anyway: the test's arguments are a CMake list).
  string(REPLACE ";" "," err_without_semicolons "${err}")
  string(REGEX MATCHALL "${EXPECT_STDERR}" matches "${err_without_semicolons}")
  list(LENGTH matches found)
  if(found EQUAL 0)
    message(FATAL_ERROR "standard error does not match '${EXPECT_STDERR}'")
  endif()
  if(DEFINED EXPECT_STDERR_COUNT AND NOT found EQUAL EXPECT_STDERR_COUNT)
    message(FATAL_ERROR "'${EXPECT_STDERR}' appears ${found} times on standard error, "
                        "expected ${EXPECT_STDERR_COUNT}")
  endif()
endif()
if(DEFINED EXPECT_STDERR_ALSO AND NOT err MATCHES "${EXPECT_STDERR_ALSO}")
  message(FATAL_ERROR "standard error does not match '${EXPECT_STDERR_ALSO}'")
endif()
if(DEFINED EXPECT_STDOUT AND NOT out MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "standard output does not match '${EXPECT_STDOUT}'")
endif()
if(DEFINED REJECT_STDOUT AND out MATCHES "${REJECT_STDOUT}")
  message(FATAL_ERROR "standard output matches '${REJECT_STDOUT}'")
endif()
if(DEFINED REJECT_STDERR AND err MATCHES "${REJECT_STDERR}")
  message(FATAL_ERROR "standard error matches '${REJECT_STDERR}'")
endif()
