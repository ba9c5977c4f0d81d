// What a program sees of its thread's state across a call: the
// floating-point exception flags and errno. Code that runs inside the
// program's MPI calls and may change them (floating-point arithmetic, system
// calls) keeps them as it found them with a PreservedCallerState, on the
// paths where it runs: saving and restoring them costs more than the rest
// of a wrapped call, so the per-call path avoids changing them instead.
#pragma once

#include <cerrno>
#include <cfenv>

namespace flexmpi {

class PreservedCallerState {
 public:
  PreservedCallerState() noexcept : error_(errno) { fegetexceptflag(&flags_, FE_ALL_EXCEPT); }
  ~PreservedCallerState() {
    fesetexceptflag(&flags_, FE_ALL_EXCEPT);
    errno = error_;
  }
  PreservedCallerState(const PreservedCallerState&) = delete;
  PreservedCallerState& operator=(const PreservedCallerState&) = delete;

 private:
  fexcept_t flags_{};
  int error_;
};

}  // namespace flexmpi
