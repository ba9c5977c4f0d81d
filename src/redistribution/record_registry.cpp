#include "redistribution/record_registry.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"
#include "util/agreement.hpp"

namespace flexmpi {

namespace {

std::string describe(const std::string& name, std::int64_t count, std::string_view element,
                     std::uint64_t element_bytes) {
  return "'" + name + "' of " + std::to_string(count) + " " + std::string(element) + " (" +
         std::to_string(element_bytes) + " bytes each)";
}

// MPI_Bcast counts are int: a record of more bytes goes in pieces.
void broadcast_bytes(void* buffer, std::uint64_t bytes, MPI_Comm comm) {
  constexpr std::uint64_t kPiece = 1ull << 30;
  auto* at = static_cast<char*>(buffer);
  for (std::uint64_t done = 0; done < bytes; done += kPiece) {
    const std::uint64_t piece = std::min(bytes - done, kPiece);
    check_mpi(PMPI_Bcast(at + done, static_cast<int>(piece), MPI_BYTE, 0, comm),
              "MPI_Bcast (records)");
  }
}

}  // namespace

RecordShape shape_of(const Record& record) {
  return {record.name, record.count, std::string(element_type_name(record.element)), record.extent};
}

std::string shape_difference(std::span<const RecordShape> expected,
                             std::span<const Record> registered, std::string_view where,
                             std::string_view who) {
  if (expected.size() != registered.size()) {
    return std::to_string(expected.size()) + " records " + std::string(where) + ", " +
           std::string(who) + " registered " + std::to_string(registered.size());
  }
  for (std::size_t k = 0; k < registered.size(); ++k) {
    const RecordShape& theirs = expected[k];
    const RecordShape mine = shape_of(registered[k]);
    if (theirs.name != mine.name || theirs.count != mine.count || theirs.element != mine.element ||
        theirs.element_bytes != mine.element_bytes) {
      return "record " + std::to_string(k) + " is " +
             describe(theirs.name, theirs.count, theirs.element, theirs.element_bytes) + " " +
             std::string(where) + ", " + std::string(who) + " registered " +
             describe(mine.name, mine.count, mine.element, mine.element_bytes);
    }
  }
  return "";
}

void RecordRegistry::add(const std::string& name, void* buffer, std::int64_t count,
                         MPI_Datatype type) {
  static const std::regex kName("[A-Za-z0-9_.-]{1,64}");
  if (!std::regex_match(name, kName)) {
    throw Error(Errc::invalid_argument,
                "name='" + name + "': expected 1-64 characters of A-Z a-z 0-9 _ . -");
  }
  if (buffer == nullptr && count > 0) {
    throw Error(Errc::invalid_argument, "buffer is NULL: expected the record's address");
  }
  if (count < 0) {
    throw Error(Errc::invalid_argument, "count=" + std::to_string(count) + ": expected >= 0");
  }
  MPI_Aint lower = 0, extent = 0;
  if (type == MPI_DATATYPE_NULL || PMPI_Type_get_extent(type, &lower, &extent) != MPI_SUCCESS ||
      lower != 0 || extent <= 0) {
    throw Error(Errc::invalid_argument,
                "type: expected a committed MPI datatype with lower bound 0");
  }
  for (const Record& r : records_) {
    if (r.name == name)
      throw Error(Errc::invalid_argument, "record '" + name + "' is registered already");
    if (r.buffer == buffer && buffer != nullptr) {
      throw Error(Errc::invalid_argument, "this buffer is registered already, as '" + r.name + "'");
    }
  }
  records_.push_back(
      {name, buffer, count, element_type_of(type), static_cast<std::size_t>(extent)});
}

bool RecordRegistry::remove(const void* buffer) {
  const auto found = std::find_if(records_.begin(), records_.end(),
                                  [&](const Record& r) { return r.buffer == buffer; });
  if (found == records_.end()) return false;
  records_.erase(found);
  return true;
}

void RecordRegistry::share(MPI_Comm comm, bool receive) const {
  nlohmann::json mine = nlohmann::json::array();
  for (const Record& r : records_) {
    const RecordShape shape = shape_of(r);
    mine.push_back({shape.name, shape.count, shape.element, shape.element_bytes});
  }
  std::vector<RecordShape> expected;
  for (const nlohmann::json& s : broadcast_json(mine, 0, comm)) {
    expected.push_back({s[0].get<std::string>(), s[1].get<std::int64_t>(), s[2].get<std::string>(),
                        s[3].get<std::uint64_t>()});
  }
  const std::string difference = shape_difference(expected, records_, "on rank 0", "this process");
  agree_on_failure(difference.empty()
                       ? std::nullopt
                       : std::optional<Error>(Error(
                             Errc::invalid_argument,
                             "the records (XMPI_Register_record) differ: " + difference +
                                 "; every process registers the same records in the same order")),
                   comm);
  int rank = 0;
  check_mpi(PMPI_Comm_rank(comm, &rank), "MPI_Comm_rank (records)");
  std::vector<char> discarded;  // where a process that keeps its copy receives
  for (const Record& r : records_) {
    const std::uint64_t bytes = static_cast<std::uint64_t>(r.count) * r.extent;
    void* into = r.buffer;
    if (rank != 0 && !receive) {
      discarded.resize(bytes);
      into = discarded.data();
    }
    broadcast_bytes(into, bytes, comm);
  }
}

}  // namespace flexmpi
