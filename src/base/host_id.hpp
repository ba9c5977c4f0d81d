// A host's identity as the interval exchange carries it: a 52-bit hash of its
// name (MPI_Get_processor_name), exact in a double. Processes on one host
// share it; a machine model names its hosts, and this matches them.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace flexmpi {

inline double host_id_of(std::string_view host_name) {
  return static_cast<double>(std::hash<std::string_view>{}(host_name) &
                             ((std::uint64_t{1} << 52) - 1));
}

}  // namespace flexmpi
