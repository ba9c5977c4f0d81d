// The one place where C++ failures become C return codes (STYLE 2): every
// extern "C" function of flexmpi.h and ull_calibrate.h runs its body through
// guarded(), which keeps the message for *_Last_error_message() and never
// lets an exception cross the C boundary. The codes are XMPI_ERR_* (the ULL
// layer uses the same values).
#pragma once

#include <exception>
#include <new>
#include <string>

#include "flexmpi/error.hpp"

namespace flexmpi::capi {

/// Message of the last failed call on this thread ("" after a success).
inline std::string& last_error() {
  thread_local std::string message;
  return message;
}

template <class Body>
int guarded(Body&& body) noexcept {
  try {
    last_error().clear();
    return body();
  } catch (const Error& e) {
    last_error() = e.what();
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    last_error() = "out of memory";
    return static_cast<int>(Errc::out_of_memory);
  } catch (const std::exception& e) {
    last_error() = e.what();
    return static_cast<int>(Errc::internal);
  } catch (...) {
    last_error() = "unknown failure";
    return static_cast<int>(Errc::internal);
  }
}

}  // namespace flexmpi::capi
