#include "linpack.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>

#include "flexmpi/error.hpp"

extern "C" void dgesv_(const int* order, const int* right_hand_sides, double* matrix,
                       const int* leading_dimension, int* pivots, double* rhs,
                       const int* rhs_leading_dimension, int* info);

namespace flexmpi_drum_config {
namespace {

/// Column-major, entries in [-0.5, 0.5] plus `order` on the diagonal: strictly
/// diagonally dominant, so dgesv meets no singular pivot (LINPACK uses random
/// entries too).
std::vector<double> random_system(int order) {
  std::mt19937_64 generator(20050801);  // fixed: every host solves the same system
  std::uniform_real_distribution<double> entry(-0.5, 0.5);
  std::vector<double> matrix(static_cast<std::size_t>(order) * order);
  for (double& value : matrix) value = entry(generator);
  for (int i = 0; i < order; ++i) matrix[static_cast<std::size_t>(i) * order + i] += order;
  return matrix;
}

/// b = A x for x = (1, ..., 1): the solution to check against.
std::vector<double> right_hand_side(const std::vector<double>& matrix, int order) {
  std::vector<double> rhs(order, 0.0);
  for (int column = 0; column < order; ++column) {
    for (int row = 0; row < order; ++row) {
      rhs[row] += matrix[static_cast<std::size_t>(column) * order + row];
    }
  }
  return rhs;
}

double timed_solve(std::vector<double> matrix, std::vector<double>& rhs, int order) {
  std::vector<int> pivots(order);
  const int one = 1;
  int info = 0;
  const auto start = std::chrono::steady_clock::now();
  dgesv_(&order, &one, matrix.data(), &order, pivots.data(), rhs.data(), &order, &info);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  if (info != 0) {
    throw flexmpi::Error(flexmpi::Errc::internal,
                         "capability benchmark: dgesv returned info = " + std::to_string(info));
  }
  return elapsed.count();
}

void check_solution(const std::vector<double>& solution) {
  const double worst = std::ranges::max(solution, {}, [](double x) { return std::abs(x - 1.0); });
  if (std::abs(worst - 1.0) > 1e-8) {
    throw flexmpi::Error(flexmpi::Errc::internal,
                         "capability benchmark: dgesv's solution is off by " +
                             std::to_string(std::abs(worst - 1.0)) + " (expected all ones)");
  }
}

}  // namespace

std::vector<double> time_dense_solves(int order, int repetitions) {
  const std::vector<double> matrix = random_system(order);
  const std::vector<double> rhs = right_hand_side(matrix, order);
  std::vector<double> seconds;
  for (int run = 0; run < repetitions; ++run) {
    std::vector<double> solution = rhs;
    seconds.push_back(timed_solve(matrix, solution, order));
    check_solution(solution);
  }
  return seconds;
}

}  // namespace flexmpi_drum_config
