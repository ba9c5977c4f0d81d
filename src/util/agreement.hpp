// Collective agreement on errors and decisions. A failure on one process must
// become the same failure on every process of the communicator, or the others
// wait forever in the next collective; a decision taken on one process (the
// scheduler's, on rank 0) must reach all of them, or its error must.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "flexmpi/error.hpp"

namespace flexmpi {

/// The lowest rank of `comm` whose `failed` is true, if any (collective).
[[nodiscard]] std::optional<int> first_failing_rank(bool failed, MPI_Comm comm);

/// Whether `value` is the same on every process of `comm` (collective: one
/// allreduce of {value, ~value} with MIN, since min(~v) = ~max(v)).
[[nodiscard]] bool same_on_every_process(std::int64_t value, MPI_Comm comm);

/// Collective: if any process of `comm` holds a failure, every process throws
/// the failure of the lowest failing rank (the others' message names that rank).
void agree_on_failure(const std::optional<Error>& local, MPI_Comm comm);

/// Runs `at_root` on rank 0 of `comm` and returns its result on every
/// process; if it threw, every process throws the same Error (collective).
[[nodiscard]] nlohmann::json decide_at_root(const std::function<nlohmann::json()>& at_root,
                                            MPI_Comm comm);

/// `value` of rank `root`, on every process of `comm` (collective).
[[nodiscard]] nlohmann::json broadcast_json(const nlohmann::json& value, int root, MPI_Comm comm);

}  // namespace flexmpi
