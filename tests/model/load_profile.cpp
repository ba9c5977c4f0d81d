// Loads the machine profile that flexmpi-calibrate --quick wrote (the argument)
// and checks that it is complete and plausible for this machine.
#include <cstdio>
#include <exception>

#include "model/machine_profile.hpp"
#include "model/reconfiguration_cost.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PROFILE.json\n", argv[0]);
    return 2;
  }
  try {
    const flexmpi::MachineProfile profile = flexmpi::load_machine_profile(argv[1]);
    const flexmpi::Hockney h = profile.network(false);
    std::printf(
        "alpha %.3g s, beta %.3g s/B, gamma %.3g s/B, spawn %.3g s, remove %.3g s, "
        "redistribution %.3g s + %.3g s/B, %zu collective fits\n",
        h.alpha, h.beta, h.gamma, flexmpi::spawn_cost(profile, 1), flexmpi::remove_cost(profile, 1),
        profile.redistribution_latency, profile.redistribution_seconds_per_byte,
        profile.collectives.size());
    // Plausible on any machine: latency between 10 ns and 10 ms, bandwidth above 1 MB/s.
    if (!(h.alpha > 1e-8 && h.alpha < 1e-2 && h.beta > 0 && h.beta < 1e-6)) {
      std::fprintf(stderr, "implausible network parameters\n");
      return 1;
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}
