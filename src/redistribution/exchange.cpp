#include "redistribution/exchange.hpp"

#include <algorithm>
#include <optional>

#include "base/mpi_check.hpp"
#include "redistribution/structure_checks.hpp"
#include "util/agreement.hpp"

namespace flexmpi::redistribution {
namespace {

constexpr int kDataTag = 32001;  // the rows themselves (phase 4)

}  // namespace

void agree(MPI_Comm comm, const Failure& mine, std::int64_t signature,
           std::span<std::int64_t> sums) {
  agree_on_failure(
      mine ? std::optional<Error>(Error(mine.code, "redistribute: " + mine.message)) : std::nullopt,
      comm);
  if (!same_on_every_process(signature, comm)) {
    invalid(
        "redistribute: the processes passed different decompositions or registered different "
        "structures (kinds, schemes, sizes, nnz or datatypes must match on every process)");
  }
  if (!sums.empty()) {
    check_mpi(PMPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_INT64_T,
                             MPI_SUM, comm),
              "MPI_Allreduce (redistribution sums)");
  }
}

void Exchange::start(RedistributionStats& stats) {
  for (const Segment& segment : receives_) {
    post(segment, false);
    stats.bytes_received += segment.bytes;
  }
  for (const Segment& segment : sends_) {
    stats.messages += post(segment, true);
    stats.bytes_sent += segment.bytes;
  }
}

void Exchange::finish() {
  check_mpi(PMPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall (redistribution)");
}

std::uint64_t Exchange::post(const Segment& segment, bool send) {
  std::uint64_t messages = 0;
  for (std::uint64_t offset = 0; offset < segment.bytes; offset += max_bytes_, ++messages) {
    const int bytes = static_cast<int>(std::min(max_bytes_, segment.bytes - offset));
    MPI_Request request = MPI_REQUEST_NULL;
    if (send) {
      check_mpi(PMPI_Isend(segment.data + offset, bytes, MPI_BYTE, segment.peer, kDataTag, comm_,
                           &request),
                "MPI_Isend (redistribution)");
    } else {
      check_mpi(PMPI_Irecv(segment.data + offset, bytes, MPI_BYTE, segment.peer, kDataTag, comm_,
                           &request),
                "MPI_Irecv (redistribution)");
    }
    requests_.push_back(request);
  }
  return messages;
}

}  // namespace flexmpi::redistribution
