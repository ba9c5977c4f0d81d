// Counter-based random numbers for flexmpi-epigraph. EpiGraph is a
// deterministic simulator (thesis 6.1.1.3); here every random number is a
// pure function of (seed, purpose, keys) -- the individual, the contact, the
// time step -- in the manner of Random123's counter-based generators, so the
// result cannot depend on which process owns an individual, on the number of
// processes or on any data movement.
#pragma once

#include <cstdint>

namespace epigraph {

/// What a random number is for: the same keys never draw twice for two purposes.
enum class Purpose : std::uint64_t {
  household_size = 1,
  work_group,
  degree_target,
  community_stubs,
  community_contact,
  index_cases,
  transmission,
  transition,
  duration,
  trip,  // transportation.hpp
  trip_exposure,
  trip_meeting,
  trip_transmission,
};

/// SplitMix64's finalizer (Steele, Lea, Flood, "Fast splittable pseudorandom
/// number generators", OOPSLA 2014): a bijective 64-bit mixer.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// A uniform number in [0, 1) keyed by (seed, purpose, a, b, c).
constexpr double uniform(std::uint64_t seed, Purpose purpose, std::uint64_t a, std::uint64_t b = 0,
                         std::uint64_t c = 0) {
  std::uint64_t h = mix64(seed ^ mix64(static_cast<std::uint64_t>(purpose)));
  h = mix64(h ^ a);
  h = mix64(h ^ (b + 0x632BE59BD9B4E019ULL));
  h = mix64(h ^ (c + 0x8CB92BA72F3D8DD7ULL));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace epigraph
