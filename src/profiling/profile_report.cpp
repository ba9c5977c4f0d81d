#include "profiling/profile_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"
#include "util/output_file.hpp"

namespace flexmpi {
namespace {

constexpr int kRowFields = 6;  // op, comm size, calls, bytes sent, bytes received, seconds

struct OperationSummary {
  OpStats total;
  double max_seconds = 0.0;  // of one process
};

using Operations = std::map<std::pair<int, int>, OperationSummary>;  // (op, comm size)
constexpr int kProcessFields = 5;  // wall, MPI seconds, calls, bytes sent, bytes received

// Every process's operation rows, concatenated on rank 0 (collective).
std::vector<double> gather_operation_rows(const CommProfile& profile, int rank, int size,
                                          MPI_Comm comm) {
  std::vector<double> rows;
  for (const OpRecord& r : profile.records()) {
    rows.insert(rows.end(),
                {static_cast<double>(r.op), static_cast<double>(r.comm_size),
                 static_cast<double>(r.stats.calls), static_cast<double>(r.stats.bytes_sent),
                 static_cast<double>(r.stats.bytes_received), r.stats.seconds});
  }
  int row_values = static_cast<int>(rows.size());
  std::vector<int> counts(rank == 0 ? size : 0), displacements(rank == 0 ? size : 0);
  check_mpi(PMPI_Gather(&row_values, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm),
            "MPI_Gather (profile)");
  std::vector<double> all_rows;
  if (rank == 0) {
    int offset = 0;
    for (int p = 0; p < size; ++p) {
      displacements[p] = offset;
      offset += counts[p];
    }
    all_rows.resize(static_cast<std::size_t>(offset));
  }
  check_mpi(PMPI_Gatherv(rows.data(), row_values, MPI_DOUBLE, all_rows.data(), counts.data(),
                         displacements.data(), MPI_DOUBLE, 0, comm),
            "MPI_Gatherv (profile)");
  return all_rows;
}

Operations summarize(const std::vector<double>& all_rows) {
  Operations operations;
  for (std::size_t i = 0; i + kRowFields <= all_rows.size(); i += kRowFields) {
    auto& summary = operations[{static_cast<int>(all_rows[i]), static_cast<int>(all_rows[i + 1])}];
    summary.total += OpStats{static_cast<std::uint64_t>(all_rows[i + 2]),
                             static_cast<std::uint64_t>(all_rows[i + 3]),
                             static_cast<std::uint64_t>(all_rows[i + 4]), all_rows[i + 5]};
    summary.max_seconds = std::max(summary.max_seconds, all_rows[i + 5]);
  }
  return operations;
}

// "collective" for MpiOp::Allreduce: the category of mpi_functions.def.
std::string_view category(int op) {
  static constexpr std::array<std::string_view, kMpiOpCount> categories = {
#define FLEXMPI_WRAP(name, category, ...) #category,
#include "profiling/mpi_functions.def"
#undef FLEXMPI_WRAP
  };
  return categories.at(static_cast<std::size_t>(op));
}

bool write_json(const std::vector<double>& processes, const Operations& operations, int size,
                const std::string& destination) {
  nlohmann::json report = {{"nprocs", size},
                           {"processes", nlohmann::json::array()},
                           {"operations", nlohmann::json::array()}};
  for (int p = 0; p < size; ++p) {
    const double* v = &processes[kProcessFields * static_cast<std::size_t>(p)];
    report["processes"].push_back({{"rank", p},
                                   {"wall_time", v[0]},
                                   {"mpi_time", v[1]},
                                   {"computation_time", v[0] - v[1]},
                                   {"mpi_calls", v[2]},
                                   {"bytes_sent", v[3]},
                                   {"bytes_received", v[4]}});
  }
  for (const auto& [key, summary] : operations) {
    report["operations"].push_back({{"operation", mpi_op_name(static_cast<MpiOp>(key.first))},
                                    {"category", category(key.first)},
                                    {"comm_size", key.second},
                                    {"calls", summary.total.calls},
                                    {"bytes_sent", summary.total.bytes_sent},
                                    {"bytes_received", summary.total.bytes_received},
                                    {"seconds", summary.total.seconds},
                                    {"max_seconds_per_process", summary.max_seconds}});
  }
  OutputFile file("FLEXMPI_REPORT", destination);
  file.append(report.dump(2) + "\n");
  return file.close();
}

bool write_text(const std::vector<double>& processes, const Operations& operations, int size) {
  std::string text = fmt::format("flexmpi profile: {} processes\n", size);
  text += fmt::format("{:>5} {:>12} {:>12} {:>12} {:>7} {:>10} {:>14} {:>14}\n", "rank", "wall s",
                      "compute s", "MPI s", "MPI %", "MPI calls", "bytes sent", "bytes recv");
  for (int p = 0; p < size; ++p) {
    const double* v = &processes[kProcessFields * static_cast<std::size_t>(p)];
    text += fmt::format(
        "{:>5} {:>12.6f} {:>12.6f} {:>12.6f} {:>6.1f}% {:>10.0f} {:>14.0f} {:>14.0f}\n", p, v[0],
        v[0] - v[1], v[1], v[0] > 0 ? 100.0 * v[1] / v[0] : 0.0, v[2], v[3], v[4]);
  }
  text += fmt::format("{:<24} {:<12} {:>9} {:>10} {:>14} {:>14} {:>12} {:>12}\n", "operation",
                      "category", "comm size", "calls", "bytes sent", "bytes recv", "total s",
                      "max s/proc");
  for (const auto& [key, summary] : operations) {
    text += fmt::format("{:<24} {:<12} {:>9} {:>10} {:>14} {:>14} {:>12.6f} {:>12.6f}\n",
                        mpi_op_name(static_cast<MpiOp>(key.first)), category(key.first), key.second,
                        summary.total.calls, summary.total.bytes_sent, summary.total.bytes_received,
                        summary.total.seconds, summary.max_seconds);
  }
  // Standard error refusing it leaves nowhere to say so: the exit status will.
  return std::fputs(text.c_str(), stderr) >= 0 && std::fflush(stderr) == 0;
}

}  // namespace

bool write_profile_report(const CommProfile& profile, double wall_seconds, MPI_Comm comm,
                          const std::string& destination) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const OpStats totals = profile.totals();
  const std::array<double, kProcessFields> mine = {
      wall_seconds, profile.mpi_seconds(), static_cast<double>(totals.calls),
      static_cast<double>(totals.bytes_sent), static_cast<double>(totals.bytes_received)};
  std::vector<double> processes(rank == 0 ? kProcessFields * static_cast<std::size_t>(size) : 0);
  check_mpi(PMPI_Gather(mine.data(), kProcessFields, MPI_DOUBLE, processes.data(), kProcessFields,
                        MPI_DOUBLE, 0, comm),
            "MPI_Gather (profile)");
  const std::vector<double> all_rows = gather_operation_rows(profile, rank, size, comm);
  if (rank != 0) return true;
  const Operations operations = summarize(all_rows);
  if (destination == "-") return write_text(processes, operations, size);
  return write_json(processes, operations, size, destination);
}

}  // namespace flexmpi
