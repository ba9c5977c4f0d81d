// The rate a link is shaped to by the kernel's traffic control. A virtual
// interface (veth, the "hosts" of this project's emulated clusters) reports
// 10000 Mbit/s in /sys/class/net whatever `tc` limits it to, and a real NIC
// can be shaped below its speed too: DRUM's C_i (thesis 3.1.2.2, the
// available-bandwidth communication power) is what the link can carry, so a
// shaping rate counts as the link's capacity.
#pragma once

#include <optional>
#include <string>

namespace flexmpi::machine {

/// The rate, in octets per second, of the token bucket filter (`tc qdisc ...
/// root tbf rate R`) at the root of interface `name` in this process's network
/// namespace; nullopt when the interface has no root tbf or netlink cannot be
/// read. Other qdiscs (htb classes, netem) are not read.
std::optional<double> root_shaping_rate(const std::string& name);

/// C_i from the interface's speed (octets per second, 0 when unknown) and its
/// shaping rate: the smaller of the two that are known, 0 when neither is.
double link_capacity(double speed, std::optional<double> shaping_rate);

}  // namespace flexmpi::machine
