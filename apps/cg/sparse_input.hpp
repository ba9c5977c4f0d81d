// Input matrices for flexmpi-cg: Matrix Market files (real, general or
// symmetric; symmetric ones store one triangle and are expanded) or a
// generated SPD matrix with deliberately uneven row lengths.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flexmpi_cg {

/// A whole square matrix as rows of (column, value), 0-based.
struct SparseRows {
  std::int64_t size = 0;
  std::vector<std::vector<std::pair<int, double>>> rows;
  [[nodiscard]] std::int64_t nonzeros() const;
};

/// Reads a Matrix Market coordinate file; throws std::runtime_error saying
/// which line is wrong and why.
SparseRows read_matrix_market(const std::string& path);

/// A symmetric, strictly diagonally dominant (hence SPD) matrix of `size`
/// rows whose rows hold between 1 and `max_row_length` off-diagonal entries,
/// varying smoothly along the matrix so that equal row blocks carry very
/// different numbers of nonzeros. Deterministic for a seed.
SparseRows generate_uneven_spd(std::int64_t size, int max_row_length, unsigned seed);

}  // namespace flexmpi_cg
