#include <algorithm>

#include "balancing/drum/drum_partitioner.hpp"
#include "balancing/fpm_akima/fpm_akima_partitioner.hpp"
#include "balancing/fpm_geometric/fpm_geometric_partitioner.hpp"
#include "balancing/partitioner.hpp"
#include "balancing/rcp/rcp_partitioner.hpp"
#include "balancing/ull/ull_partitioner.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {

const std::vector<PartitionerDescriptor>& partitioners() {
  static const std::vector<PartitionerDescriptor> all = {
      {"rcp", "share proportional to the relative computing power measured (FLEX-MPI, thesis 5.2)",
       [] { return std::make_unique<RcpPartitioner>(); }},
      {"ull",
       "RP = rows / time of the last iteration (ULL calibrate library, Galindo et al. sec. 4)",
       [] { return std::make_unique<UllPartitioner>(); }},
      {"fpm-akima",
       "speed functions of the partition size from the measurement history, Akima splines, "
       "root of the balance equations by HYBRJ (Rychkov et al. sec. 3)",
       [] { return std::make_unique<FpmAkimaPartitioner>(); }},
      {"fpm-geometric",
       "shape-restricted piecewise-linear speed functions, bisection between lines through the "
       "origin (Rychkov et al. sec. 2)",
       [] { return std::make_unique<FpmGeometricPartitioner>(); }},
      {"drum",
       "DRUM node power: rate per CPU-second x (CPU got + idle CPU of the node), mixed with the "
       "node's available bandwidth by FLEXMPI_DRUM_COMM_WEIGHT (Faik, DRUM thesis 3.1.2)",
       [] { return std::make_unique<DrumPartitioner>(); }},
  };
  return all;
}

std::string partitioner_names() {
  std::string names;
  for (const auto& p : partitioners()) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

std::unique_ptr<Partitioner> make_partitioner(std::string_view name) {
  const auto& all = partitioners();
  const auto found = std::find_if(all.begin(), all.end(),
                                  [&](const PartitionerDescriptor& d) { return d.name == name; });
  if (found == all.end()) {
    throw Error(Errc::bad_config, "partitioner '" + std::string(name) +
                                      "' does not exist (available: " + partitioner_names() + ")");
  }
  return found->create();
}

}  // namespace flexmpi
