// The one place where C++ failures become C return codes: every extern "C"
// function of flexmpi.h, ull_calibrate.h and flexmpi/drum.h runs its body
// through guarded(), so no exception crosses the C boundary. flexmpi.h's
// codes are XMPI_ERR_* (the ULL layer uses the same values) with the message
// kept for *_Last_error_message(); DRUM's are DRUM_* (capi/drum_c.cpp).
#pragma once

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "flexmpi/error.hpp"

namespace flexmpi::capi {

/// Message of the last failed call on this thread ("" after a success).
inline std::string& last_error() {
  thread_local std::string message;
  return message;
}

/// Runs `body` and turns any exception into `on_failure(code, message)`,
/// whose result is returned instead: each C layer maps failures to its own
/// codes (flexmpi.h's XMPI_ERR_*, DRUM's DRUM_*), none lets one through.
template <class Body, class OnFailure>
auto guarded(Body&& body, OnFailure&& on_failure) noexcept -> decltype(body()) {
  try {
    return body();
  } catch (const Error& e) {
    return on_failure(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return on_failure(Errc::out_of_memory, "out of memory");
  } catch (const std::exception& e) {
    return on_failure(Errc::internal, e.what());
  } catch (...) {
    return on_failure(Errc::internal, "unknown failure");
  }
}

/// flexmpi.h's and ull_calibrate.h's form: the code is the Errc value and
/// the message is kept for *_Last_error_message().
template <class Body>
int guarded(Body&& body) noexcept {
  last_error().clear();
  return guarded([&]() -> int { return std::forward<Body>(body)(); },
                 [](Errc code, const char* message) {
                   last_error() = message;
                   return static_cast<int>(code);
                 });
}

}  // namespace flexmpi::capi
