// Process creation/termination and redistribution costs (reconfiguration_cost.hpp).
#include "model/reconfiguration_cost.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "flexmpi/error.hpp"
#include "redistribution/transfer_plan.hpp"

namespace flexmpi {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Errc::invalid_argument, message);
}

// Cost per process at `processes`, piecewise linear in the measured points.
double per_process(const std::vector<PerProcessCost>& points, int processes, const char* what) {
  if (processes < 0) {
    invalid(std::string(what) + ": expected processes >= 0, got " + std::to_string(processes));
  }
  if (points.empty()) invalid(std::string(what) + ": the machine profile has no measured cost");
  if (processes <= points.front().processes) return points.front().seconds_per_process;
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (processes <= points[i].processes) {
      const PerProcessCost& a = points[i - 1];
      const PerProcessCost& b = points[i];
      const double t = static_cast<double>(processes - a.processes) / (b.processes - a.processes);
      return a.seconds_per_process + t * (b.seconds_per_process - a.seconds_per_process);
    }
  }
  return points.back().seconds_per_process;
}

std::int64_t check(std::span<const StructureShape> structures, const Decomposition& from,
                   const Decomposition& to) {
  if (from.empty() || to.empty()) {
    invalid("redistribution cost: expected decompositions over >= 1 process, got " +
            std::to_string(from.size()) + " and " + std::to_string(to.size()));
  }
  if (from.size() != to.size()) {
    invalid("redistribution cost: 'from' has " + std::to_string(from.size()) + " blocks and 'to' " +
            std::to_string(to.size()) + " (spawned or removed processes hold empty blocks)");
  }
  std::int64_t size = 0;
  for (const RowBlock& block : from) size += std::max<std::int64_t>(block.count, 0);
  const int p = static_cast<int>(from.size());
  for (const auto& [blocks, what] : {std::pair{&from, "from"}, std::pair{&to, "to"}}) {
    const std::string problem = check_decomposition(*blocks, size, p, what);
    if (!problem.empty()) invalid("redistribution cost: " + problem);
  }
  for (const StructureShape& s : structures) {
    if (s.size != size) {
      invalid("redistribution cost: a structure of " + std::to_string(s.size) +
              " rows on a decomposition of " + std::to_string(size) + " rows");
    }
    if (s.element_bytes == 0 || (s.kind == StructureKind::sparse && s.index_bytes == 0)) {
      invalid("redistribution cost: expected element_bytes and index_bytes >= 1");
    }
    if (s.nnz < 0) invalid("redistribution cost: expected nnz >= 0, got " + std::to_string(s.nnz));
  }
  return size;
}

// Rows that change owner, summed over processes (each counted once, as sent).
double moved_rows(const Decomposition& from, const Decomposition& to) {
  double rows = 0.0;
  for (int rank = 0; rank < static_cast<int>(from.size()); ++rank) {
    for (const Transfer& send : plan_transfers(from, to, rank).sends) rows += send.rows;
  }
  return rows;
}

}  // namespace

double spawn_cost(const MachineProfile& profile, int processes) {
  return processes * per_process(profile.spawn, processes, "spawn cost (eq. 5.6)");
}

double remove_cost(const MachineProfile& profile, int processes) {
  return processes * per_process(profile.remove, processes, "remove cost (eq. 5.7)");
}

double row_bytes(const StructureShape& shape) {
  const double element = static_cast<double>(shape.element_bytes);
  switch (shape.kind) {
    case StructureKind::vector:
      return element;
    case StructureKind::dense:
      return static_cast<double>(shape.size) * element;
    case StructureKind::sparse: {
      const double per_row = shape.size > 0 ? static_cast<double>(shape.nnz) / shape.size : 0.0;
      return per_row * (element + shape.index_bytes) + shape.index_bytes;
    }
  }
  return element;
}

double redistribution_cost_thesis(std::span<const StructureShape> structures,
                                  const Decomposition& from, const Decomposition& to,
                                  MpiLibrary library, const Hockney& network, double lambda) {
  check(structures, from, to);
  if (!(lambda >= 0.0)) invalid("redistribution cost: expected lambda >= 0");
  const int p = static_cast<int>(from.size());
  const double rows = moved_rows(from, to);
  // The collective of eq. 5.9 for a structure of `bytes` that change owner.
  const auto collective = [&](Scheme scheme, double bytes) {
    if (scheme != Scheme::replicated) {
      return call_seconds(library, Routine::alltoallv, bytes, p, network);
    }
    return call_seconds(library, Routine::allgatherv, bytes / p, p, network);  // average block
  };
  double seconds = 0.0;
  for (const StructureShape& s : structures) {
    if (s.kind != StructureKind::sparse) {  // eq. 5.9
      const double elements = s.kind == StructureKind::dense ? rows * s.size : rows;
      seconds += collective(s.scheme, elements * s.element_bytes);
    } else {  // eq. 5.10: row pointers always by Alltoallv, indices and values by the scheme
      const double nnz = s.size > 0 ? rows * static_cast<double>(s.nnz) / s.size : 0.0;
      seconds += call_seconds(library, Routine::alltoallv, rows * s.index_bytes, p, network);
      seconds += collective(s.scheme, nnz * s.index_bytes);
      seconds += collective(s.scheme, nnz * s.element_bytes);
    }
  }
  return seconds * lambda;
}

double redistribution_seconds(const MachineProfile& profile, std::uint64_t messages, double bytes,
                              bool across_nodes) {
  if (bytes <= 0.0) return 0.0;
  return profile.redistribution_latency +
         static_cast<double>(messages) * profile.network(across_nodes).alpha +
         bytes * profile.redistribution_seconds_per_byte;
}

RedistributionEstimate redistribution_cost_planned(std::span<const StructureShape> structures,
                                                   const Decomposition& from,
                                                   const Decomposition& to,
                                                   const MachineProfile& profile,
                                                   bool across_nodes) {
  check(structures, from, to);
  double bytes_per_row = 0.0;
  std::uint64_t arrays = 0;  // messages per transfer: one per array of every structure
  for (const StructureShape& s : structures) {
    bytes_per_row += row_bytes(s);
    arrays += s.kind == StructureKind::sparse ? 3 : 1;
  }
  RedistributionEstimate estimate;
  if (structures.empty()) return estimate;
  const double alpha = profile.network(across_nodes).alpha;
  double busiest = 0.0;
  for (int rank = 0; rank < static_cast<int>(from.size()); ++rank) {
    const TransferPlan plan = plan_transfers(from, to, rank);
    double rows = 0.0;
    for (const Transfer& t : plan.sends) rows += t.rows;
    estimate.moved_bytes += rows * bytes_per_row;
    for (const Transfer& t : plan.receives) rows += t.rows;
    const double bytes = rows * bytes_per_row;
    const std::uint64_t messages = plan.sends.size() * arrays;
    const double seconds = messages * alpha + bytes * profile.redistribution_seconds_per_byte;
    if (seconds > busiest || (seconds == busiest && bytes > estimate.busiest_bytes)) {
      busiest = seconds;
      estimate.busiest_bytes = bytes;
      estimate.busiest_messages = messages;
    }
  }
  estimate.seconds = estimate.moved_bytes > 0.0
                         ? redistribution_seconds(profile, estimate.busiest_messages,
                                                  estimate.busiest_bytes, across_nodes)
                         : 0.0;
  return estimate;
}

}  // namespace flexmpi
