#include "halo_solver.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

namespace flexmpi_zoltan_drum {
namespace {

/// Rows this process needs from (receives) or gives to (sends) one neighbour.
struct Neighbour {
  int rank = 0;
  std::vector<int> receive_rows;
  std::vector<int> send_rows;
  std::vector<double> receive_values;
  std::vector<double> send_values;
};

/// Every row's owner after the migration (Allgatherv of the owned row ids).
std::vector<int> owners(const RowGraph& graph, int size) {
  std::vector<int> mine;
  for (const auto& [id, row] : graph.rows()) mine.push_back(static_cast<int>(id));
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(size), displs(size);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int p = 1; p < size; ++p) displs[p] = displs[p - 1] + counts[p - 1];
  std::vector<int> all(static_cast<std::size_t>(graph.global_rows()));
  MPI_Allgatherv(mine.data(), count, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT,
                 MPI_COMM_WORLD);
  std::vector<int> owner(all.size(), -1);
  for (int p = 0; p < size; ++p) {
    for (int i = displs[p]; i < displs[p] + counts[p]; ++i) owner[all[i]] = p;
  }
  return owner;
}

/// The halo plan: which rows to receive from whom (the off-part columns of
/// the owned rows) and, told by each neighbour, which rows to send it.
std::vector<Neighbour> halo_plan(const RowGraph& graph, int rank, int size) {
  const std::vector<int> owner = owners(graph, size);
  std::map<int, std::vector<int>> needed;
  for (const auto& [id, row] : graph.rows()) {
    for (const int column : row.columns) {
      if (owner[column] != rank) needed[owner[column]].push_back(column);
    }
  }
  std::vector<int> request_counts(size, 0), offer_counts(size, 0);
  for (auto& [p, rows] : needed) {
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    request_counts[p] = static_cast<int>(rows.size());
  }
  MPI_Alltoall(request_counts.data(), 1, MPI_INT, offer_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<Neighbour> neighbours;
  std::vector<MPI_Request> requests;
  for (int p = 0; p < size; ++p) {
    if (request_counts[p] == 0 && offer_counts[p] == 0) continue;
    Neighbour& n = neighbours.emplace_back();
    n.rank = p;
    n.receive_rows = needed[p];
    n.send_rows.resize(static_cast<std::size_t>(offer_counts[p]));
  }
  for (Neighbour& n : neighbours) {  // the lists of rows, once
    requests.emplace_back();
    MPI_Irecv(n.send_rows.data(), static_cast<int>(n.send_rows.size()), MPI_INT, n.rank, 7,
              MPI_COMM_WORLD, &requests.back());
    requests.emplace_back();
    MPI_Isend(n.receive_rows.data(), static_cast<int>(n.receive_rows.size()), MPI_INT, n.rank, 7,
              MPI_COMM_WORLD, &requests.back());
    n.receive_values.resize(n.receive_rows.size());
    n.send_values.resize(n.send_rows.size());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return neighbours;
}

/// Posts the step's messages: the values each neighbour needs, and receives for its.
std::vector<MPI_Request> start_exchange(std::vector<Neighbour>& neighbours,
                                        const std::vector<double>& x) {
  std::vector<MPI_Request> requests;
  for (Neighbour& n : neighbours) {
    for (std::size_t i = 0; i < n.send_rows.size(); ++i) n.send_values[i] = x[n.send_rows[i]];
    requests.emplace_back();
    MPI_Irecv(n.receive_values.data(), static_cast<int>(n.receive_values.size()), MPI_DOUBLE,
              n.rank, 8, MPI_COMM_WORLD, &requests.back());
    requests.emplace_back();
    MPI_Isend(n.send_values.data(), static_cast<int>(n.send_values.size()), MPI_DOUBLE, n.rank, 8,
              MPI_COMM_WORLD, &requests.back());
  }
  return requests;
}

void finish_exchange(std::vector<MPI_Request>& requests, const std::vector<Neighbour>& neighbours,
                     std::vector<double>& x) {
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (const Neighbour& n : neighbours) {
    for (std::size_t i = 0; i < n.receive_rows.size(); ++i) {
      x[n.receive_rows[i]] = n.receive_values[i];
    }
  }
}

/// The owned rows, interior ones (every column owned) first: they are
/// computed while the halo is in flight. Returns the rows and the interior count.
std::pair<std::vector<const std::pair<const ZOLTAN_ID_TYPE, Row>*>, std::size_t> ordered_rows(
    const RowGraph& graph, const std::vector<Neighbour>& neighbours) {
  std::vector<char> halo(static_cast<std::size_t>(graph.global_rows()), 0);
  for (const Neighbour& n : neighbours) {
    for (const int row : n.receive_rows) halo[row] = 1;
  }
  std::vector<const std::pair<const ZOLTAN_ID_TYPE, Row>*> interior, boundary;
  for (const auto& entry : graph.rows()) {
    const auto& columns = entry.second.columns;
    const bool inner = std::none_of(columns.begin(), columns.end(), [&](int c) { return halo[c]; });
    (inner ? interior : boundary).push_back(&entry);
  }
  const std::size_t inner_count = interior.size();
  interior.insert(interior.end(), boundary.begin(), boundary.end());
  return {interior, inner_count};
}

std::uint64_t checksum(const RowGraph& graph, const std::vector<double>& x) {
  std::uint64_t sum = 0;
  for (const auto& [id, row] : graph.rows()) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x[id], sizeof bits);
    std::uint64_t hash = 14695981039346656037ULL;
    for (const std::uint64_t word : {static_cast<std::uint64_t>(id), bits}) {
      hash = (hash ^ word) * 1099511628211ULL;
      hash ^= hash >> 29;
    }
    sum += hash;
  }
  std::uint64_t total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

}  // namespace

SolveResult solve(const RowGraph& graph, int steps, int products, double speed) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<Neighbour> neighbours = halo_plan(graph, rank, size);
  std::vector<double> x(static_cast<std::size_t>(graph.global_rows()));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0 + static_cast<double>(i % 7) / 10.0;
  double largest_row_sum = 0;
  for (const auto& [id, row] : graph.rows()) {
    double sum = 0;
    for (const double value : row.values) sum += std::abs(value);
    largest_row_sum = std::max(largest_row_sum, sum);
  }
  MPI_Allreduce(MPI_IN_PLACE, &largest_row_sum, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double scale = largest_row_sum > 0 ? 1.0 / largest_row_sum : 1.0;
  SolveResult result;
  for (const Neighbour& n : neighbours)
    result.halo_values += static_cast<long long>(n.receive_rows.size());
  const auto [rows, interior] = ordered_rows(graph, neighbours);
  std::vector<double> y(rows.size());
  // y = s A x on rows [first, last) of `rows`, `products` times.
  const auto multiply = [&, &rows = rows](std::size_t first, std::size_t last) {
    for (int product = 0; product < products; ++product) {
      for (std::size_t i = first; i < last; ++i) {
        const Row& row = rows[i]->second;
        double sum = 0;
        for (std::size_t k = 0; k < row.columns.size(); ++k)
          sum += row.values[k] * x[row.columns[k]];
        y[i] = scale * sum;
      }
    }
  };
  // The rows [first, last) on the emulated processing element.
  const auto compute = [&](std::size_t first, std::size_t last) {
    const double begin = MPI_Wtime();
    multiply(first, last);
    emulate_speed(MPI_Wtime() - begin, speed);
  };
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int step = 0; step < steps; ++step) {
    // The halo travels while the interior rows are computed (overlap, as a
    // mesh code does); the boundary rows wait for it.
    std::vector<MPI_Request> requests = start_exchange(neighbours, x);
    const double posted = MPI_Wtime();
    compute(0, interior);
    const double waiting = MPI_Wtime();
    finish_exchange(requests, neighbours, x);
    const double arrived = MPI_Wtime();
    compute(interior, rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) x[rows[i]->first] = y[i];
    result.communication_seconds += arrived - waiting;
    result.computation_seconds += (waiting - posted) + (MPI_Wtime() - arrived);
  }
  double elapsed = MPI_Wtime() - start;
  MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  result.seconds = elapsed;
  result.checksum = checksum(graph, x);
  return result;
}

}  // namespace flexmpi_zoltan_drum
