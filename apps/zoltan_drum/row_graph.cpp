#include "row_graph.hpp"

#include <mpi.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "sparse_input.hpp"

namespace flexmpi_zoltan_drum {
namespace {

/// FNV-1a over `bytes` bytes, continuing from `hash`.
std::uint64_t fnv1a(std::uint64_t hash, const void* data, std::size_t bytes) {
  const auto* byte = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) hash = (hash ^ byte[i]) * 1099511628211ULL;
  return hash;
}

RowGraph& graph_of(void* data) { return *static_cast<RowGraph*>(data); }

int packed_size(const Row& row) {
  return static_cast<int>(sizeof(int) + row.columns.size() * (sizeof(int) + sizeof(double)));
}

int count_rows(void* data, int* ierr) {
  *ierr = ZOLTAN_OK;
  return static_cast<int>(graph_of(data).local_rows());
}

void list_rows(void* data, int, int, ZOLTAN_ID_PTR global_ids, ZOLTAN_ID_PTR, int, float*,
               int* ierr) {
  for (const auto& [id, row] : graph_of(data).rows()) *global_ids++ = id;
  *ierr = ZOLTAN_OK;
}

void count_edges(void* data, int, int, int count, ZOLTAN_ID_PTR global_ids, ZOLTAN_ID_PTR,
                 int* edges, int* ierr) {
  const auto& rows = graph_of(data).rows();
  for (int i = 0; i < count; ++i) {
    const Row& row = rows.at(global_ids[i]);
    edges[i] = 0;
    for (const int column : row.columns) edges[i] += column != static_cast<int>(global_ids[i]);
  }
  *ierr = ZOLTAN_OK;
}

void list_edges(void* data, int, int, int count, ZOLTAN_ID_PTR global_ids, ZOLTAN_ID_PTR, int*,
                ZOLTAN_ID_PTR neighbors, int* neighbor_processes, int, float*, int* ierr) {
  const RowGraph& graph = graph_of(data);
  for (int i = 0; i < count; ++i) {
    for (const int column : graph.rows().at(global_ids[i]).columns) {
      if (column == static_cast<int>(global_ids[i])) continue;  // the diagonal is no edge
      *neighbors++ = static_cast<ZOLTAN_ID_TYPE>(column);
      *neighbor_processes++ = graph.initial_owner(static_cast<ZOLTAN_ID_TYPE>(column));
    }
  }
  *ierr = ZOLTAN_OK;
}

int row_size(void* data, int, int, ZOLTAN_ID_PTR global_id, ZOLTAN_ID_PTR, int* ierr) {
  *ierr = ZOLTAN_OK;
  return packed_size(graph_of(data).rows().at(*global_id));
}

/// Layout: the nonzero count n, n columns, n values.
void pack_row(void* data, int, int, ZOLTAN_ID_PTR global_id, ZOLTAN_ID_PTR, int, int, char* buffer,
              int* ierr) {
  const Row& row = graph_of(data).rows().at(*global_id);
  const int count = static_cast<int>(row.columns.size());
  std::memcpy(buffer, &count, sizeof count);
  buffer += sizeof count;
  std::memcpy(buffer, row.columns.data(), count * sizeof(int));
  std::memcpy(buffer + count * sizeof(int), row.values.data(), count * sizeof(double));
  *ierr = ZOLTAN_OK;
}

/// Between packing and unpacking: the exported rows leave this process.
void drop_exported(void* data, int, int, int, ZOLTAN_ID_PTR, ZOLTAN_ID_PTR, int*, int*, int exports,
                   ZOLTAN_ID_PTR export_ids, ZOLTAN_ID_PTR, int*, int*, int* ierr) {
  for (int i = 0; i < exports; ++i) graph_of(data).rows().erase(export_ids[i]);
  *ierr = ZOLTAN_OK;
}

void unpack_row(void* data, int, ZOLTAN_ID_PTR global_id, int, char* buffer, int* ierr) {
  int count = 0;
  std::memcpy(&count, buffer, sizeof count);
  buffer += sizeof count;
  Row& row = graph_of(data).rows()[*global_id];
  row.columns.resize(count);
  row.values.resize(count);
  std::memcpy(row.columns.data(), buffer, count * sizeof(int));
  std::memcpy(row.values.data(), buffer + count * sizeof(int), count * sizeof(double));
  *ierr = ZOLTAN_OK;
}

}  // namespace

RowGraph::RowGraph(const std::string& matrix_file) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &processes_);
  flexmpi_cg::SparseRows matrix = flexmpi_cg::read_matrix_market(matrix_file);
  size_ = matrix.size;
  for (long long i = 0; i < size_; ++i) {
    if (initial_owner(static_cast<ZOLTAN_ID_TYPE>(i)) != rank) continue;
    Row& row = rows_[static_cast<ZOLTAN_ID_TYPE>(i)];
    for (const auto& [column, value] : matrix.rows[i]) {
      row.columns.push_back(column);
      row.values.push_back(value);
    }
  }
}

int RowGraph::initial_owner(ZOLTAN_ID_TYPE row) const {
  return static_cast<int>(static_cast<long long>(row) * processes_ / size_);
}

std::uint64_t RowGraph::checksum() const {
  std::uint64_t sum = 0;
  for (const auto& [id, row] : rows_) {
    std::uint64_t hash = fnv1a(14695981039346656037ULL, &id, sizeof id);
    hash = fnv1a(hash, row.columns.data(), row.columns.size() * sizeof(int));
    sum += fnv1a(hash, row.values.data(), row.values.size() * sizeof(double));
  }
  return sum;
}

void RowGraph::multiply_for(double seconds, double speed) const {
  const std::vector<double> x(static_cast<std::size_t>(size_), 1.0);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  volatile double sink = 0;
  while (std::chrono::steady_clock::now() < until) {
    const auto start = std::chrono::steady_clock::now();
    for (const auto& [id, row] : rows_) {
      double y = 0;
      for (std::size_t k = 0; k < row.columns.size(); ++k) y += row.values[k] * x[row.columns[k]];
      sink = sink + y;
    }
    emulate_speed(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                  speed);
  }
}

void emulate_speed(double computed, double speed) {
  if (speed >= 1.0 || speed <= 0.0 || computed <= 0.0) return;
  std::this_thread::sleep_for(std::chrono::duration<double>(computed * (1.0 / speed - 1.0)));
}

void register_callbacks(Zoltan_Struct* zz, RowGraph& graph) {
  Zoltan_Set_Num_Obj_Fn(zz, count_rows, &graph);
  Zoltan_Set_Obj_List_Fn(zz, list_rows, &graph);
  Zoltan_Set_Num_Edges_Multi_Fn(zz, count_edges, &graph);
  Zoltan_Set_Edge_List_Multi_Fn(zz, list_edges, &graph);
  Zoltan_Set_Obj_Size_Fn(zz, row_size, &graph);
  Zoltan_Set_Pack_Obj_Fn(zz, pack_row, &graph);
  Zoltan_Set_Mid_Migrate_PP_Fn(zz, drop_exported, &graph);
  Zoltan_Set_Unpack_Obj_Fn(zz, unpack_row, &graph);
}

}  // namespace flexmpi_zoltan_drum
