// What a unit of work is (FLEXMPI_LB_MODEL; docs/reference/behaviour.md, Speed metric): the setting
// the configuration holds and the decomposition state counts work by.
#pragma once

#include <string_view>

namespace flexmpi {

/// What a unit of work is (FLEXMPI_LB_MODEL; docs/reference/behaviour.md, Speed metric).
enum class WorkloadModel { count, nnz, weight };

/// The model named by a FLEXMPI_LB_MODEL value; Error(bad_config) otherwise.
[[nodiscard]] WorkloadModel parse_workload_model(std::string_view name);
/// The FLEXMPI_LB_MODEL name of `model`.
[[nodiscard]] std::string_view to_string(WorkloadModel model);

}  // namespace flexmpi
