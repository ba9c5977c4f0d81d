#include "util/agreement.hpp"

#include <climits>
#include <string>

#include "base/mpi_check.hpp"

namespace flexmpi {

using nlohmann::json;

namespace {

json failure_record(const Error& error) {
  return {{"code", static_cast<int>(error.code())}, {"message", error.what()}};
}

Error failure_from(const json& record) {
  return Error(static_cast<Errc>(record["code"].get<int>()), record["message"].get<std::string>());
}

}  // namespace

json broadcast_json(const json& value, int root, MPI_Comm comm) {
  int rank = 0;
  check_mpi(PMPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  std::string text = rank == root ? value.dump() : std::string();
  long long length = static_cast<long long>(text.size());
  check_mpi(PMPI_Bcast(&length, 1, MPI_LONG_LONG, root, comm), "MPI_Bcast (plan size)");
  text.resize(static_cast<std::size_t>(length));
  check_mpi(PMPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, root, comm),
            "MPI_Bcast (plan)");
  return json::parse(text);
}

std::optional<int> first_failing_rank(bool failed, MPI_Comm comm) {
  int rank = 0;
  check_mpi(PMPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  int first = failed ? rank : INT_MAX;
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm),
            "MPI_Allreduce (agreement)");
  if (first == INT_MAX) return std::nullopt;
  return first;
}

bool same_on_every_process(std::int64_t value, MPI_Comm comm) {
  std::int64_t words[2] = {value, ~value};
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, words, 2, MPI_INT64_T, MPI_MIN, comm),
            "MPI_Allreduce (agreement)");
  return words[0] == ~words[1];
}

void agree_on_failure(const std::optional<Error>& local, MPI_Comm comm) {
  const std::optional<int> root = first_failing_rank(local.has_value(), comm);
  if (!root) return;
  int rank = 0;
  check_mpi(PMPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  const json record = broadcast_json(local ? failure_record(*local) : json(), *root, comm);
  Error failure = failure_from(record);
  if (*root == rank) throw failure;
  throw Error(failure.code(),
              std::string(failure.what()) + " [on rank " + std::to_string(*root) + "]");
}

json decide_at_root(const std::function<json()>& at_root, MPI_Comm comm) {
  int rank = 0;
  check_mpi(PMPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  json result;
  if (rank == 0) {
    try {
      result = {{"ok", at_root()}};
    } catch (const Error& e) {
      result = failure_record(e);
    } catch (const std::exception& e) {
      result = failure_record(Error(Errc::internal, e.what()));
    }
  }
  result = broadcast_json(result, 0, comm);
  if (!result.contains("ok")) throw failure_from(result);
  return result["ok"];
}

}  // namespace flexmpi
