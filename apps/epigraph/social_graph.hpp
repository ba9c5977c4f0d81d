// The social model of flexmpi-epigraph (thesis 6.1.1.3: "an undirected
// connection graph that captures heterogeneity features at the level of both
// the individual and each of his interactions"): a deterministic generator of
// household, work/school and community contacts with heavy-tailed degrees.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace epigraph {

/// The setting of a contact; transmission rates differ per setting.
enum ContactKind : std::uint8_t { household = 0, work = 1, community = 2, contact_kinds = 3 };

/// Individuals live in kDistricts contiguous index ranges (urban districts,
/// the regions of Alg. 11). Their contact density differs: one dense centre,
/// so that equal row blocks hold unequal nonzeros (thesis 6.2.1: the block
/// partition of EpiGraph's matrix is unbalanced).
inline constexpr int kDistricts = 8;
inline constexpr std::array<double, kDistricts> kDistrictDensity = {0.935, 0.857, 0.87,  1.65,
                                                                    1.0,   0.948, 0.805, 0.935};
/// Nobody has more contacts than this (the generator skips edges beyond it).
inline constexpr int kMaxDegree = 200;
/// Smallest population the generator accepts (a few households per district).
inline constexpr int kMinPopulation = 100;

/// First individual of district d, for d in [0, kDistricts] (d = kDistricts: the population).
int district_begin(int district, int population);

/// The rows [first_row, first_row + row_count) of the contact graph in CSR:
/// row_start[0..row_count] from 0, global column indices sorted within a row,
/// one ContactKind per nonzero. The graph is symmetric, without self-contacts,
/// and the same for a given (population, seed) whatever rows are asked for.
struct LocalGraph {
  std::vector<int> row_start;
  std::vector<int> columns;
  std::vector<std::uint8_t> kinds;
};

/// Generates rows of the graph. Every caller streams the edges of the whole
/// population (O(edges) time, O(population) memory) and keeps its own rows.
/// Throws std::invalid_argument for a population below kMinPopulation.
LocalGraph generate_local_graph(int population, std::uint64_t seed, int first_row, int row_count);

}  // namespace epigraph
