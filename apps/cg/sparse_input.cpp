#include "sparse_input.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

namespace flexmpi_cg {

std::int64_t SparseRows::nonzeros() const {
  return std::accumulate(
      rows.begin(), rows.end(), std::int64_t{0},
      [](std::int64_t n, const auto& row) { return n + static_cast<std::int64_t>(row.size()); });
}

SparseRows read_matrix_market(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error(path + ": cannot open");
  std::string line;
  std::getline(file, line);
  std::istringstream banner(line);
  std::string tag, object, format, field, symmetry;
  banner >> tag >> object >> format >> field >> symmetry;
  if (tag != "%%MatrixMarket" || object != "matrix" || format != "coordinate") {
    throw std::runtime_error(path + ":1: expected '%%MatrixMarket matrix coordinate ...'");
  }
  if (field != "real" && field != "integer") {
    throw std::runtime_error(path + ":1: field '" + field + "' is not supported (real or integer)");
  }
  if (symmetry != "general" && symmetry != "symmetric") {
    throw std::runtime_error(path + ":1: symmetry '" + symmetry + "' is not supported");
  }
  int line_number = 1;
  while (std::getline(file, line)) {
    ++line_number;
    if (!line.empty() && line[0] != '%') break;
  }
  std::int64_t rows = 0, columns = 0, entries = 0;
  if (!(std::istringstream(line) >> rows >> columns >> entries) || rows != columns || rows <= 0) {
    throw std::runtime_error(path + ":" + std::to_string(line_number) +
                             ": expected 'rows columns entries' of a square matrix");
  }
  SparseRows matrix;
  matrix.size = rows;
  matrix.rows.resize(static_cast<std::size_t>(rows));
  for (std::int64_t k = 0; k < entries; ++k) {
    ++line_number;
    std::int64_t i = 0, j = 0;
    double value = 0.0;
    if (!std::getline(file, line) || !(std::istringstream(line) >> i >> j >> value) || i < 1 ||
        j < 1 || i > rows || j > rows) {
      throw std::runtime_error(path + ":" + std::to_string(line_number) +
                               ": expected an entry 'row column value' with 1-based indices");
    }
    matrix.rows[i - 1].emplace_back(static_cast<int>(j - 1), value);
    if (symmetry == "symmetric" && i != j)
      matrix.rows[j - 1].emplace_back(static_cast<int>(i - 1), value);
  }
  for (auto& row : matrix.rows) std::sort(row.begin(), row.end());
  return matrix;
}

SparseRows generate_uneven_spd(std::int64_t size, int max_row_length, unsigned seed) {
  SparseRows matrix;
  matrix.size = size;
  matrix.rows.resize(static_cast<std::size_t>(size));
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(0.1, 1.0);
  for (std::int64_t i = 0; i < size; ++i) {
    // Row length grows along the matrix: the last rows are ~max_row_length
    // long, the first ones short, so equal row blocks are unbalanced.
    const auto lower = static_cast<std::int64_t>(
        1 + (max_row_length / 2 - 1) * static_cast<double>(i) / static_cast<double>(size));
    std::uniform_int_distribution<std::int64_t> column(0, std::max<std::int64_t>(i - 1, 0));
    for (std::int64_t k = 0; k < std::min(lower, i); ++k) {
      const auto j = static_cast<int>(column(random));
      const double v = -value(random);
      matrix.rows[i].emplace_back(j, v);
      matrix.rows[j].emplace_back(static_cast<int>(i), v);
    }
  }
  for (std::int64_t i = 0; i < size; ++i) {
    auto& row = matrix.rows[i];
    std::sort(row.begin(), row.end());
    // Merge duplicates drawn twice, then make the row strictly dominant.
    std::vector<std::pair<int, double>> merged;
    for (const auto& entry : row) {
      if (!merged.empty() && merged.back().first == entry.first) {
        merged.back().second += entry.second;
      } else {
        merged.push_back(entry);
      }
    }
    double off_diagonal = 0.0;
    for (const auto& entry : merged) off_diagonal += std::abs(entry.second);
    merged.emplace_back(static_cast<int>(i), off_diagonal + 1.0);
    std::sort(merged.begin(), merged.end());
    row = std::move(merged);
  }
  return matrix;
}

}  // namespace flexmpi_cg
