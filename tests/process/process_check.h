/* A minimal check macro for the spawn tests: a spawned process runs the same
 * main as the initial ones, so these programs do not use GoogleTest's main
 * (whose test list every new process would run again). A failed check prints
 * "CHECK FAILED" (CTest fails on it) and makes the process exit non-zero. */
#ifndef FLEXMPI_TESTS_PROCESS_CHECK_H
#define FLEXMPI_TESTS_PROCESS_CHECK_H

#include <stdio.h>

static int process_check_failures = 0;

#define CHECK(condition, ...)                                                      \
  do {                                                                             \
    if (!(condition)) {                                                            \
      ++process_check_failures;                                                    \
      fprintf(stderr, "CHECK FAILED %s:%d: %s: ", __FILE__, __LINE__, #condition); \
      fprintf(stderr, __VA_ARGS__);                                                \
      fprintf(stderr, "\n");                                                       \
      fflush(stderr);                                                              \
    }                                                                              \
  } while (0)

/* Checks that an XMPI_* call returned `expected`, printing the library's message if not. */
#define CHECK_CODE(call, expected)                                                            \
  do {                                                                                        \
    const int check_code_result = (call);                                                     \
    CHECK(check_code_result == (expected), "%s returned %d (%s: %s), expected %d", #call,     \
          check_code_result, XMPI_Error_string(check_code_result), XMPI_Last_error_message(), \
          (int)(expected));                                                                   \
  } while (0)

#endif
