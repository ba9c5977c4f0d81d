// GSL's default error handler aborts the process; inside the library a GSL
// failure must become a return code or a fallback instead (never a crash).
#pragma once

#include <gsl/gsl_errno.h>

namespace flexmpi {

/// Turns GSL's error handler off for its lifetime, then restores the caller's.
class GslErrorsOff {
 public:
  GslErrorsOff() : previous_(gsl_set_error_handler_off()) {}
  ~GslErrorsOff() { gsl_set_error_handler(previous_); }
  GslErrorsOff(const GslErrorsOff&) = delete;
  GslErrorsOff& operator=(const GslErrorsOff&) = delete;

 private:
  gsl_error_handler_t* previous_;
};

}  // namespace flexmpi
