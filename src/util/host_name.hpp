// What a host name can be (RFC 1035 2.3.4, RFC 1123 2.1): at most 253 bytes,
// labels of 1 to 63 letters, digits or '-' between dots. '_' is accepted too:
// cluster naming schemes use it although DNS does not.
#pragma once

#include <string>
#include <string_view>

namespace flexmpi {

/// Why `name` cannot be a host name, or "" if it can.
std::string host_name_problem(std::string_view name);

}  // namespace flexmpi
