#include "checkpoint/checkpoint_layout.hpp"

#include <functional>
#include <vector>

#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi::checkpoint {

std::string kind_name(detail::Kind kind) {
  switch (kind) {
    case detail::Kind::vector:
      return "vector";
    case detail::Kind::dense:
      return "dense";
    case detail::Kind::csr:
      return "csr";
    case detail::Kind::csc:
      return "csc";
  }
  return "unknown";
}

std::string scheme_name(Scheme scheme) {
  switch (scheme) {
    case Scheme::distributed:
      return "distributed";
    case Scheme::replicated:
      return "replicated";
    case Scheme::distributed_in_place:
      return "distributed_in_place";
  }
  return "unknown";
}

Shape row_shape(const detail::Structure& s) {
  return {static_cast<std::uint64_t>(s.size),
          s.kind == detail::Kind::dense ? static_cast<std::uint64_t>(s.row_length) : 0};
}

bool owns_end(const RowBlock& own, std::int64_t rows, int rank) {
  return own.count > 0 ? own.displ + own.count == rows : rows == 0 && rank == 0;
}

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return rank;
}

void sum_checksums(nlohmann::json& parts, MPI_Comm comm) {
  std::vector<std::uint64_t*> slots;
  std::function<void(nlohmann::json&)> collect = [&](nlohmann::json& node) {
    if (node.is_structured()) {
      for (auto& child : node) collect(child);
    } else {
      slots.push_back(node.get_ptr<nlohmann::json::number_unsigned_t*>());
    }
  };
  collect(parts);
  std::vector<std::uint64_t> values;
  for (const std::uint64_t* slot : slots) values.push_back(*slot);
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()),
                           MPI_UINT64_T, MPI_SUM, comm),
            "MPI_Allreduce (checkpoint checksums)");
  for (std::size_t k = 0; k < slots.size(); ++k) *slots[k] = values[k];
}

}  // namespace flexmpi::checkpoint
