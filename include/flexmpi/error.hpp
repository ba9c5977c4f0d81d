// flexmpi/error.hpp - errors of the C++ API.
//
// Inside the library every failure is a flexmpi::Error carrying the code the
// C API returns (docs/reference/api.md); the C shims turn it into that code and keep
// the message for XMPI_Last_error_message(). Nothing throws across extern "C".
#pragma once

#include <stdexcept>
#include <string>

namespace flexmpi {

/// Error codes, equal to the XMPI_ERR_* values of flexmpi.h.
enum class Errc : int {
  invalid_argument = -1,
  bad_state = -2,
  unsupported = -3,
  event_unavailable = -4,
  mpi_failure = -5,
  out_of_memory = -6,
  bad_config = -7,
  internal = -8,
  io_failure = -9,
};

/// The one exception type of flexmpi: a code plus a message naming what was wrong.
class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& message) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

}  // namespace flexmpi
