// The C++ API's decomposition and registration calls (include/flexmpi/flexmpi.hpp).
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/api_support.hpp"
#include "core/runtime.hpp"
#include "flexmpi/flexmpi.hpp"

namespace flexmpi {

Partition block_partition(int rank, int nprocs, int dsize) {
  if (nprocs < 1) {
    throw Error(Errc::invalid_argument, "nprocs=" + std::to_string(nprocs) + ": expected >= 1");
  }
  if (rank < 0 || rank >= nprocs) {
    throw Error(Errc::invalid_argument, "rank=" + std::to_string(rank) +
                                            ": expected 0 <= rank < nprocs (" +
                                            std::to_string(nprocs) + ")");
  }
  if (dsize < 0) {
    throw Error(Errc::invalid_argument, "dsize=" + std::to_string(dsize) + ": expected >= 0");
  }
  const int base = dsize / nprocs;
  const int extra = dsize % nprocs;
  return {base + (rank < extra ? 1 : 0), rank * base + std::min(rank, extra)};
}

namespace {

// Registered structures follow the application's decomposition: a size of
// another (a process's count for the global size, say) failed only at the
// first rebalance, far from the call that was wrong.
void require_decomposition_size(const Runtime& runtime, std::int64_t size) {
  if (size < 0)
    throw Error(Errc::invalid_argument, "size=" + std::to_string(size) + ": expected >= 0");
  // Blocks are reported in int (Partition, XMPI_Get_wsize's count and displ).
  constexpr std::int64_t largest = std::numeric_limits<int>::max();
  if (size > largest) {
    throw Error(Errc::invalid_argument,
                "size " + std::to_string(size) + " exceeds the largest supported, " +
                    std::to_string(largest) + " (rows are counted in int: count and displ)");
  }
  std::int64_t rows = runtime.state().global_rows();
  std::string source = "XMPI_Get_wsize dsize";
  if (rows < 0) {
    rows = runtime.state().data().rows();
    source = "the structures registered before";
  }
  if (rows >= 0 && size != rows) {
    throw Error(Errc::invalid_argument, "size=" + std::to_string(size) +
                                            ": the decomposition has " + std::to_string(rows) +
                                            " rows (" + source + "); pass the global size");
  }
}

// This process's block of the application's decomposition is `rows` rows:
// its work units (the metric without counters), except under
// the weight model once weights were seen, whose work is its rows' weights
// (as rows, a process of heavy rows looked up to 9 times slower).
void note_own_rows(Runtime& runtime, std::int64_t rows) {
  DecompositionState& state = runtime.state();
  if (state.model() == WorkloadModel::weight && !state.latest_row_work().empty()) {
    state.update_work();
  } else {
    runtime.set_work(static_cast<double>(rows));
  }
}

}  // namespace

Partition get_wsize(int rank, int nprocs, int dsize) {
  Runtime& runtime = member_runtime();
  block_partition(rank, nprocs, dsize);  // validates the arguments
  const Partition partition = to_partition(runtime.state().block_of(rank, nprocs, dsize));
  if (rank == runtime.rank() && nprocs == runtime.size()) note_own_rows(runtime, partition.count);
  return partition;
}

std::vector<Partition> get_decomposition(int nprocs, int dsize) {
  Runtime& runtime = member_runtime();
  std::vector<Partition> blocks;
  blocks.reserve(nprocs > 0 ? static_cast<std::size_t>(nprocs) : 0);
  for (int rank = 0; rank < std::max(nprocs, 1); ++rank) {
    block_partition(rank, nprocs, dsize);  // validates the arguments
    blocks.push_back(to_partition(runtime.state().block_of(rank, nprocs, dsize)));
  }
  if (nprocs == runtime.size())
    note_own_rows(runtime, blocks[static_cast<std::size_t>(runtime.rank())].count);
  return blocks;
}

namespace {

// A process that holds rows of a structure needs a buffer for them: all of
// them when replicated, else its block (all, as far as it knows, before it
// has one). Accepting NULL would turn the first redistribution into a crash.
void require_buffer(const Runtime& runtime, void** data, std::int64_t size, Scheme scheme,
                    const char* call) {
  if (data == nullptr || *data != nullptr) return;  // a null address is the registry's error
  const auto& blocks = runtime.state().blocks();
  const std::int64_t held = scheme == Scheme::replicated || blocks.empty()
                                ? size
                                : blocks[static_cast<std::size_t>(runtime.rank())].count;
  if (held > 0) {
    throw Error(Errc::invalid_argument,
                std::string(call) + ": the buffer is NULL but this process holds " +
                    std::to_string(held) + " rows: expected a malloc'ed buffer");
  }
}

}  // namespace

void register_vector(void** data, std::int64_t size, MPI_Datatype type, Scheme scheme) {
  Runtime& runtime = member_runtime();
  require_decomposition_size(runtime, size);
  require_buffer(runtime, data, size, scheme, "register_vector");
  runtime.state().data().register_vector(data, size, type, scheme);
  runtime.state().update_work();  // the nnz model counts the registered nonzeros
}

void register_dense(void** data, std::int64_t size, MPI_Datatype type, Scheme scheme) {
  Runtime& runtime = member_runtime();
  require_decomposition_size(runtime, size);
  require_buffer(runtime, data, size, scheme, "register_dense");
  runtime.state().data().register_dense(data, size, type, scheme);
  runtime.state().update_work();  // the nnz model counts the registered nonzeros
}

void register_rows(void** data, const RowShape& shape, MPI_Datatype type, Scheme scheme) {
  Runtime& runtime = member_runtime();
  require_decomposition_size(runtime, shape.rows);
  require_buffer(runtime, data, shape.rows, scheme, "register_rows");
  runtime.state().data().register_rows(data, shape, type, scheme);
  runtime.state().update_work();  // the nnz model counts the registered nonzeros
}

void register_pair(void** current, void** next, const RowShape& shape, MPI_Datatype type,
                   Scheme scheme) {
  Runtime& runtime = member_runtime();
  require_decomposition_size(runtime, shape.rows);
  require_buffer(runtime, current, shape.rows, scheme, "register_pair (current)");
  require_buffer(runtime, next, shape.rows, scheme, "register_pair (next)");
  runtime.state().data().register_pair(current, next, shape, type, scheme);
  runtime.state().update_work();  // the nnz model counts the registered nonzeros
}

void register_sparse(int** ia, int** ja, void** values, std::int64_t size, std::int64_t nnz,
                     MPI_Datatype type, Scheme scheme) {
  Runtime& runtime = member_runtime();
  require_decomposition_size(runtime, size);
  // The row pointers have an entry per row held (+1): NULL is only for none.
  require_buffer(runtime, reinterpret_cast<void**>(ia), size, scheme, "register_sparse (ia)");
  runtime.state().data().register_sparse(ia, ja, values, size, nnz, type, scheme);
  runtime.state().update_work();  // the nnz model counts the registered nonzeros
}

void unregister(const void* address) {
  Runtime& runtime = member_runtime();
  if (runtime.state().records().remove(address)) return;
  runtime.state().data().unregister(address);
  runtime.state().update_work();  // the nnz model counts the registered nonzeros
}

void redistribute_data(Partition old_block, Partition new_block) {
  const BlockChangeWatch watch;
  member_runtime().redistribute({old_block.count, old_block.displ},
                                {new_block.count, new_block.displ});
}

bool blocks_changed() { return Runtime::get().state().blocks_changed(); }

}  // namespace flexmpi
