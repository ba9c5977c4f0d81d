#include "base/workload_model.hpp"

#include <string>

#include "flexmpi/error.hpp"

namespace flexmpi {

WorkloadModel parse_workload_model(std::string_view name) {
  if (name == "count") return WorkloadModel::count;
  if (name == "nnz") return WorkloadModel::nnz;
  if (name == "weight") return WorkloadModel::weight;
  throw Error(Errc::bad_config,
              "FLEXMPI_LB_MODEL=" + std::string(name) + ": expected count, nnz or weight");
}

std::string_view to_string(WorkloadModel model) {
  switch (model) {
    case WorkloadModel::count:
      return "count";
    case WorkloadModel::nnz:
      return "nnz";
    case WorkloadModel::weight:
      return "weight";
  }
  return "?";
}

}  // namespace flexmpi
