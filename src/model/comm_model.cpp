// Which MPI library runs the job, the names of the routines, the cost of one
// collective call (the algorithm tables: open_mpi_costs.cpp, mpich_costs.cpp)
// and the fitted links and per-collective corrections it is priced with.
// Replaying a communication profile and the lambda correction:
// comm_replay.cpp.
#include "model/comm_model.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include "flexmpi/error.hpp"
#include "model/collective_algorithms.hpp"

namespace flexmpi {

namespace {

using collectives::kInf;
using collectives::mpich_cost;
using collectives::open_mpi_cost;

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Errc::invalid_argument, message);
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

MpiLibrary detect_mpi_library(std::string_view version_text) {
  const std::string text = lower(version_text);
  if (text.find("open mpi") != std::string::npos) return MpiLibrary::open_mpi;
  for (const char* mpich_family : {"mpich", "intel(r) mpi", "mvapich"}) {
    if (text.find(mpich_family) != std::string::npos) return MpiLibrary::mpich;
  }
  return MpiLibrary::unknown;
}

std::string_view library_name(MpiLibrary library) {
  switch (library) {
    case MpiLibrary::mpich:
      return "mpich";
    case MpiLibrary::open_mpi:
      return "openmpi";
    case MpiLibrary::unknown:
      break;
  }
  return "unknown";
}

std::string_view routine_name(Routine routine) {
  static constexpr std::array<std::string_view, kRoutineCount> names = {
      "MPI_Send",      "MPI_Barrier",   "MPI_Bcast",      "MPI_Scatter",
      "MPI_Gather",    "MPI_Allgather", "MPI_Allgatherv", "MPI_Reduce",
      "MPI_Allreduce", "MPI_Alltoall",  "MPI_Alltoallv"};
  return names[static_cast<std::size_t>(routine)];
}

Routine routine_from_name(std::string_view name) {
  std::string key = lower(name);
  if (key.rfind("mpi_", 0) == 0) key = key.substr(4);
  static const std::array<std::pair<std::string_view, Routine>, 16> table = {{
      {"send", Routine::send_recv},
      {"recv", Routine::send_recv},
      {"send_recv", Routine::send_recv},
      {"barrier", Routine::barrier},
      {"bcast", Routine::bcast},
      {"scatter", Routine::scatter},
      {"scatterv", Routine::scatter},
      {"gather", Routine::gather},
      {"gatherv", Routine::gather},
      {"allgather", Routine::allgather},
      {"allgatherv", Routine::allgatherv},
      {"reduce", Routine::reduce},
      {"allreduce", Routine::allreduce},
      {"alltoall", Routine::alltoall},
      {"alltoallv", Routine::alltoallv},
      {"sendrecv", Routine::send_recv},
  }};
  for (const auto& [spelling, routine] : table) {
    if (key == spelling) return routine;
  }
  invalid("unknown MPI routine '" + std::string(name) +
          "': expected one of MPI_Send, MPI_Recv, MPI_Barrier, MPI_Bcast, MPI_Scatter, "
          "MPI_Gather, MPI_Allgather, MPI_Allgatherv, MPI_Reduce, MPI_Allreduce, MPI_Alltoall, "
          "MPI_Alltoallv");
}

AlgorithmCost collective_cost(MpiLibrary library, Routine routine, double bytes, int processes) {
  if (!(bytes >= 0.0) || !std::isfinite(bytes)) {
    invalid("message size of " + std::string(routine_name(routine)) +
            ": expected bytes >= 0, got " + std::to_string(bytes));
  }
  if (processes < 1) {
    invalid("communicator size of " + std::string(routine_name(routine)) +
            ": expected processes >= 1, got " + std::to_string(processes));
  }
  if (processes == 1 && routine != Routine::send_recv) return {"none (one process)", {}};
  return library == MpiLibrary::open_mpi ? open_mpi_cost(routine, bytes, processes)
                                         : mpich_cost(routine, bytes, processes);
}

PiecewiseLink::PiecewiseLink(const Hockney& h)
    : PiecewiseLink(std::vector<LinkBand>{{kInf, h.alpha, h.beta}}, h.gamma) {}

PiecewiseLink::PiecewiseLink(std::vector<LinkBand> bands, double gamma)
    : bands_(std::move(bands)), gamma_(gamma) {
  if (bands_.empty()) invalid("link bands: expected at least one band");
  if (!(gamma_ >= 0.0) || !std::isfinite(gamma_)) {
    invalid("link gamma: expected seconds per byte >= 0, got " + std::to_string(gamma_));
  }
  for (std::size_t i = 0; i < bands_.size(); ++i) {
    const LinkBand& band = bands_[i];
    const bool last = i + 1 == bands_.size();
    if (!(band.alpha >= 0.0) || !(band.beta >= 0.0) || !std::isfinite(band.alpha) ||
        !std::isfinite(band.beta) || (!last && !(band.up_to > 0.0))) {
      invalid("link band " + std::to_string(i) + ": expected alpha, beta >= 0 and up_to > 0");
    }
    if (!last && i > 0 && !(band.up_to > bands_[i - 1].up_to)) {
      invalid("link band " + std::to_string(i) + ": expected up_to above the previous band's");
    }
  }
}

Hockney PiecewiseLink::at(double bytes) const {
  for (std::size_t i = 0; i + 1 < bands_.size(); ++i) {
    if (bytes <= bands_[i].up_to) return {bands_[i].alpha, bands_[i].beta, gamma_};
  }
  return {bands_.back().alpha, bands_.back().beta, gamma_};
}

double step_bytes(const CostTerms& terms, double fallback) {
  return terms.latency > 0.0 ? terms.bandwidth / terms.latency : fallback;
}

double CollectiveFit::scale(double bytes) const {
  if (points.empty()) return 1.0;
  if (bytes <= points.front().bytes) return points.front().scale;
  if (bytes >= points.back().bytes) return points.back().scale;
  const auto upper = std::upper_bound(points.begin(), points.end(), bytes,
                                      [](double b, const ScalePoint& p) { return b < p.bytes; });
  const ScalePoint& hi = *upper;
  const ScalePoint& lo = *(upper - 1);
  const double x = std::log2(bytes / lo.bytes) / std::log2(hi.bytes / lo.bytes);
  return lo.scale + x * (hi.scale - lo.scale);
}

double CollectiveFit::scale(double bytes, MpiLibrary library, Routine routine) const {
  if (points.size() < 2 || bytes <= points.front().bytes || bytes >= points.back().bytes) {
    return scale(bytes);
  }
  const auto hi = std::upper_bound(points.begin(), points.end(), bytes,
                                   [](double b, const ScalePoint& p) { return b < p.bytes; });
  const auto lo = hi - 1;
  const auto algorithm = [&](double b) {
    return collective_cost(library, routine, b, processes).algorithm;
  };
  const std::string_view here = algorithm(bytes);
  const bool same_lo = algorithm(lo->bytes) == here, same_hi = algorithm(hi->bytes) == here;
  if (same_lo != same_hi) return same_lo ? lo->scale : hi->scale;
  return scale(bytes);
}

const CollectiveFit* find_fit(const CollectiveFits& fits, Routine routine, int processes) {
  const auto it = fits.find(routine);
  if (it == fits.end()) return nullptr;
  const CollectiveFit* best = nullptr;
  for (const CollectiveFit& fit : it->second) {
    const int distance = std::abs(fit.processes - processes);
    if (best == nullptr || distance <= std::abs(best->processes - processes)) best = &fit;
  }
  return best;
}

double call_seconds(MpiLibrary library, Routine routine, double bytes, int processes,
                    const PiecewiseLink& link, const CollectiveFits& fits) {
  const CostTerms terms = collective_cost(library, routine, bytes, processes).terms;
  const double seconds = terms.seconds(link.at(step_bytes(terms, bytes)));
  const CollectiveFit* fit = find_fit(fits, routine, processes);
  return fit == nullptr ? seconds : seconds * fit->scale(bytes, library, routine);
}

}  // namespace flexmpi
