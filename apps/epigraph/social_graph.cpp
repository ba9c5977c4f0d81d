// Contact graph generator (thesis 6.1.1.3; EpiGraph's social model in Martín
// et al., 2011: households, workplaces/schools and other contacts). Three
// layers, streamed in a fixed order so that every process sees the same edges:
//   1. households: complete graphs of 1-6 consecutive individuals;
//   2. work/school: 80 % of each district belong to a group (schools of 15-30,
//      workplaces with Pareto sizes); inside a group a ring lattice links each
//      member to its h nearest members on both sides;
//   3. community: a Chung-Lu random graph on the remaining degree. Each
//      individual draws a target degree from a log-normal (times its
//      district's density); its community weight is the target minus its
//      household and work contacts; contacts go to partners chosen in
//      proportion to their weight, 80 % inside the district, 20 % anywhere.
// The log-normal (median 19.5, sigma 0.8, its tail above 70 compressed to a
// slope of 0.35) gives degree statistics near the targets (mean
// 25, median 19, p90 54, p99 97, max 200; see --graph-stats).
#include "social_graph.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "counter_rng.hpp"

namespace epigraph {
namespace {

constexpr double kDegreeMedian = 19.5;
constexpr double kDegreeSigma = 0.8;
constexpr double kTargetCap = 190;
// Above the knee a target grows at kTailSlope: the far tail is lighter than a log-normal's.
constexpr double kTailKnee = 70;
constexpr double kTailSlope = 0.35;
constexpr double kCommunityInsideDistrict = 0.8;
constexpr double kWorkingFraction = 0.8;
constexpr double kSchoolFraction = 0.35;
// Cumulative shares of household sizes 1..6.
constexpr std::array<double, 6> kHouseholdSizeCdf = {0.26, 0.55, 0.73, 0.90, 0.97, 1.0};

class EdgeStream {
 public:
  EdgeStream(int population, std::uint64_t seed) : population_(population), seed_(seed) {
    std::vector<int> structural(static_cast<std::size_t>(population), 0);
    auto count = [&](int u, int v, ContactKind) {
      ++structural[static_cast<std::size_t>(u)];
      ++structural[static_cast<std::size_t>(v)];
    };
    household_edges(count);
    work_edges(count);
    community_weight_prefix_.resize(static_cast<std::size_t>(population));
    double running = 0.0;
    for (int d = 0; d < kDistricts; ++d) {
      for (int i = district_begin(d, population); i < district_begin(d + 1, population); ++i) {
        const double u1 = uniform(seed_, Purpose::degree_target, static_cast<std::uint64_t>(i), 0);
        const double u2 = uniform(seed_, Purpose::degree_target, static_cast<std::uint64_t>(i), 1);
        const double normal = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * M_PI * u2);
        const double lognormal =
            kDistrictDensity[d] * kDegreeMedian * std::exp(kDegreeSigma * normal);
        const double target = std::min(
            kTargetCap,
            lognormal <= kTailKnee ? lognormal : kTailKnee + kTailSlope * (lognormal - kTailKnee));
        running += std::max(0.5, target - structural[static_cast<std::size_t>(i)]);
        community_weight_prefix_[static_cast<std::size_t>(i)] = running;
      }
    }
  }

  /// Calls emit(u, v, kind) for every edge u != v, each once, in a fixed order.
  template <class Emit>
  void for_each_edge(Emit&& emit) const {
    std::vector<std::uint8_t> degree(static_cast<std::size_t>(population_), 0);
    auto capped = [&](int u, int v, ContactKind kind) {
      if (u == v || degree[static_cast<std::size_t>(u)] >= kMaxDegree ||
          degree[static_cast<std::size_t>(v)] >= kMaxDegree) {
        return;
      }
      ++degree[static_cast<std::size_t>(u)];
      ++degree[static_cast<std::size_t>(v)];
      emit(u, v, kind);
    };
    household_edges(capped);
    work_edges(capped);
    community_edges(capped);
  }

 private:
  double weight_prefix_before(int i) const {
    return i == 0 ? 0.0 : community_weight_prefix_[static_cast<std::size_t>(i) - 1];
  }

  template <class Emit>
  void household_edges(Emit&& emit) const {
    for (int d = 0; d < kDistricts; ++d) {
      const int end = district_begin(d + 1, population_);
      for (int first = district_begin(d, population_); first < end;) {
        const double u = uniform(seed_, Purpose::household_size, static_cast<std::uint64_t>(first));
        const int wanted = 1 + static_cast<int>(std::upper_bound(kHouseholdSizeCdf.begin(),
                                                                 kHouseholdSizeCdf.end(), u) -
                                                kHouseholdSizeCdf.begin());
        const int size = std::min(wanted, end - first);
        for (int a = first; a < first + size; ++a) {
          for (int b = a + 1; b < first + size; ++b) emit(a, b, household);
        }
        first += size;
      }
    }
  }

  template <class Emit>
  void work_edges(Emit&& emit) const {
    for (int d = 0; d < kDistricts; ++d) {
      const int begin = district_begin(d, population_);
      const long long size = district_begin(d + 1, population_) - begin;
      // Members of a group are spread over the district: position q is
      // individual begin + (q * stride) mod size, a bijection when the two are coprime.
      long long stride = 1'000'003;
      while (std::gcd(stride, size) != 1) stride += 2;
      auto member = [&](long long position) {
        return begin + static_cast<int>((position * stride) % size);
      };
      const long long working =
          static_cast<long long>(kWorkingFraction * static_cast<double>(size));
      for (long long first = 0; first < working;) {
        const auto key = static_cast<std::uint64_t>(begin + first);
        const double kind = uniform(seed_, Purpose::work_group, key, 0);
        const double u_size = uniform(seed_, Purpose::work_group, key, 1);
        const double u_links = uniform(seed_, Purpose::work_group, key, 2);
        long long group;
        int links;  // h: neighbours on each side in the ring
        if (kind < kSchoolFraction) {
          group = 15 + static_cast<long long>(u_size * 16);
          links = 3 + static_cast<int>(u_links * 3);
        } else {  // Pareto(1.5) workplace sizes from 3 up
          group = std::min<long long>(
              200, static_cast<long long>(3.0 * std::pow(1.0 - u_size, -1.0 / 1.5)));
          links = 1 + static_cast<int>(u_links * 4);
        }
        group = std::min(group, working - first);
        if (group <= 2LL * links + 1) {
          for (long long a = 0; a < group; ++a) {
            for (long long b = a + 1; b < group; ++b)
              emit(member(first + a), member(first + b), work);
          }
        } else {
          for (long long a = 0; a < group; ++a) {
            for (int step = 1; step <= links; ++step) {
              emit(member(first + a), member(first + (a + step) % group), work);
            }
          }
        }
        first += group;
      }
    }
  }

  template <class Emit>
  void community_edges(Emit&& emit) const {
    for (int d = 0; d < kDistricts; ++d) {
      const int begin = district_begin(d, population_);
      const int end = district_begin(d + 1, population_);
      for (int i = begin; i < end; ++i) {
        // Half of the weight as outgoing stubs: the incoming ones bring the other half (Chung-Lu).
        const double half =
            0.5 * (community_weight_prefix_[static_cast<std::size_t>(i)] - weight_prefix_before(i));
        const auto key = static_cast<std::uint64_t>(i);
        const int stubs = static_cast<int>(half) +
                          (uniform(seed_, Purpose::community_stubs, key) < half - std::floor(half));
        for (int stub = 0; stub < stubs; ++stub) {
          const bool inside =
              uniform(seed_, Purpose::community_contact, key, static_cast<std::uint64_t>(stub), 0) <
              kCommunityInsideDistrict;
          const int lo = inside ? begin : 0;
          const int hi = inside ? end : population_;
          const double from = weight_prefix_before(lo);
          const double to = community_weight_prefix_[static_cast<std::size_t>(hi) - 1];
          const double x = from + (to - from) * uniform(seed_, Purpose::community_contact, key,
                                                        static_cast<std::uint64_t>(stub), 1);
          const auto first = community_weight_prefix_.begin() + lo;
          const auto last = community_weight_prefix_.begin() + hi;
          const int partner =
              static_cast<int>(std::min(std::upper_bound(first, last, x), last - 1) -
                               community_weight_prefix_.begin());
          emit(i, partner, community);
        }
      }
    }
  }

  int population_;
  std::uint64_t seed_;
  std::vector<double> community_weight_prefix_;  // inclusive prefix sums of the community weights
};

}  // namespace

int district_begin(int district, int population) {
  return static_cast<int>(static_cast<long long>(population) * district / kDistricts);
}

LocalGraph generate_local_graph(int population, std::uint64_t seed, int first_row, int row_count) {
  if (population < kMinPopulation) {
    throw std::invalid_argument("population " + std::to_string(population) +
                                ": expected at least " + std::to_string(kMinPopulation));
  }
  // One 64-bit key per local nonzero: local row, global column, kind. Sorting
  // orders rows and columns; of duplicates the lowest kind (household) stays.
  std::vector<std::uint64_t> keys;
  const int end_row = first_row + row_count;
  auto keep = [&](int row, int column, ContactKind kind) {
    if (row >= first_row && row < end_row) {
      keys.push_back((static_cast<std::uint64_t>(row - first_row) << 34) |
                     (static_cast<std::uint64_t>(column) << 2) | kind);
    }
  };
  EdgeStream(population, seed).for_each_edge([&](int u, int v, ContactKind kind) {
    keep(u, v, kind);
    keep(v, u, kind);
  });
  std::sort(keys.begin(), keys.end());
  LocalGraph graph;
  graph.row_start.assign(static_cast<std::size_t>(row_count) + 1, 0);
  graph.columns.reserve(keys.size());
  graph.kinds.reserve(keys.size());
  std::uint64_t previous = ~std::uint64_t{0};
  for (const std::uint64_t key : keys) {
    if ((key >> 2) == previous) continue;  // the same contact from another layer
    previous = key >> 2;
    ++graph.row_start[static_cast<std::size_t>(key >> 34) + 1];
    graph.columns.push_back(static_cast<int>((key >> 2) & ((std::uint64_t{1} << 32) - 1)));
    graph.kinds.push_back(static_cast<std::uint8_t>(key & 3));
  }
  std::partial_sum(graph.row_start.begin(), graph.row_start.end(), graph.row_start.begin());
  return graph;
}

}  // namespace epigraph
