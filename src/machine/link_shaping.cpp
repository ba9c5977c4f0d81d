#include "machine/link_shaping.hpp"

#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/tbf.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace flexmpi::machine {

std::optional<double> root_shaping_rate(const std::string& name) {
  const unsigned index = if_nametoindex(name.c_str());
  if (index == 0) return std::nullopt;
  const std::unique_ptr<nl_sock, decltype(&nl_socket_free)> socket(nl_socket_alloc(),
                                                                   &nl_socket_free);
  if (!socket || nl_connect(socket.get(), NETLINK_ROUTE) < 0) return std::nullopt;
  nl_cache* raw_cache = nullptr;
  if (rtnl_qdisc_alloc_cache(socket.get(), &raw_cache) < 0) return std::nullopt;
  const std::unique_ptr<nl_cache, decltype(&nl_cache_free)> cache(raw_cache, &nl_cache_free);
  const std::unique_ptr<rtnl_qdisc, decltype(&rtnl_qdisc_put)> root(
      rtnl_qdisc_get_by_parent(cache.get(), static_cast<int>(index), TC_H_ROOT), &rtnl_qdisc_put);
  if (!root) return std::nullopt;
  const char* kind = rtnl_tc_get_kind(TC_CAST(root.get()));
  if (kind == nullptr || std::strcmp(kind, "tbf") != 0) return std::nullopt;
  const int rate = rtnl_qdisc_tbf_get_rate(root.get());  // octets per second
  if (rate <= 0) return std::nullopt;
  return static_cast<double>(rate);
}

double link_capacity(double speed, std::optional<double> shaping_rate) {
  if (!shaping_rate || *shaping_rate <= 0.0) return std::max(0.0, speed);
  return speed > 0.0 ? std::min(speed, *shaping_rate) : *shaping_rate;
}

}  // namespace flexmpi::machine
