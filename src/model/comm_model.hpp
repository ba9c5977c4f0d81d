// The communication part of the computational prediction model (thesis
// 5.3.2, Table 5.2, eq. 5.4-5.5): the Hockney cost, alpha + n beta (+ n gamma
// for reductions), of every MPI routine an application or the redistribution
// uses, for the algorithm the linked MPI library picks at that message size
// and communicator size.
//
// Two libraries, because they pick different algorithms at different points:
//
//   MPICH (and its derivatives: Intel MPI, MVAPICH): thesis Table 5.2, the
//   cost models of Thakur, Rabenseifner and Gropp (2005) with MPICH's switch
//   points. Debian's MPICH 4.0 (ch4) selects collectives through its JSON
//   tuning tables, which reduce to the same families on one node; the
//   per-collective fits of the machine profile and lambda absorb the rest.
//
//   Open MPI 4.1, component coll/tuned (the default on one node and on
//   TCP/vader), ompi/mca/coll/tuned/coll_tuned_decision_fixed.c: the decision
//   tables generated from the ompi-collectives-tuning runs, keyed by
//   communicator size and message size (total_dsize of that file). flexmpi
//   transcribes the rows for communicators of up to 63 processes; larger
//   communicators use the 32-63 row (documented approximation). The
//   algorithms and their costs are listed in open_mpi_costs.cpp (and
//   mpich_costs.cpp for thesis Table 5.2).
//
// Message sizes (`bytes`) are per call, as MPI's own decisions measure them:
//   send_recv                      the message
//   bcast, reduce, allreduce       the buffer (count x type size)
//   scatter, gather, allgather     the block of one process (MPICH's table is
//                                  written in n = p x block; converted inside)
//   alltoall                       the block sent to one process
//   allgatherv                     the average block of one process
//   alltoallv                      the bytes one process sends in the call
//   barrier                        ignored
//
// Pure arithmetic, no MPI: every process evaluates the same numbers.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "profiling/comm_profile.hpp"

namespace flexmpi {

/// The MPI implementation whose algorithms the model follows.
enum class MpiLibrary {
  mpich,     ///< MPICH and derivatives: thesis Table 5.2
  open_mpi,  ///< Open MPI, coll/tuned fixed decision rules (4.1)
  unknown,   ///< anything else: modelled as MPICH (the thesis's Table 5.2)
};

/// The library named by the text of MPI_Get_library_version ("Open MPI v4.1.4,
/// ..." -> open_mpi; "MPICH Version: ...", "Intel(R) MPI Library ...",
/// "MVAPICH2 Version ..." -> mpich; anything else -> unknown). Pure.
MpiLibrary detect_mpi_library(std::string_view version_text);

/// "mpich", "openmpi" or "unknown".
std::string_view library_name(MpiLibrary library);

/// The MPI routines the model prices (thesis Table 5.2, plus the two
/// redistribution collectives of 5.3.4 and the barrier).
enum class Routine {
  send_recv,
  barrier,
  bcast,
  scatter,
  gather,
  allgather,
  allgatherv,
  reduce,
  allreduce,
  alltoall,
  alltoallv,
};
inline constexpr int kRoutineCount = 11;

/// "MPI_Bcast" for Routine::bcast ("MPI_Send" for send_recv).
std::string_view routine_name(Routine routine);

/// The routine named `name` ("MPI_Bcast", "Bcast", "bcast"; "MPI_Send",
/// "MPI_Recv", "send_recv" all give send_recv; "MPI_Gatherv" gives gather,
/// "MPI_Scatterv" scatter). Throws flexmpi::Error (invalid_argument) naming
/// `name` when it is none of them.
Routine routine_from_name(std::string_view name);

/// Hockney parameters of one kind of link (thesis 5.3.2, Table 6.7).
struct Hockney {
  double alpha = 0.0;  ///< latency, seconds
  double beta = 0.0;   ///< transfer time, seconds per byte
  double gamma = 0.0;  ///< reduction computation, seconds per byte
};

/// A cost as multiples of the parameters: seconds = latency x alpha +
/// bandwidth x beta + reduction x gamma. Kept apart so that calibration can
/// fit the latency and the bandwidth parts of a collective separately.
struct CostTerms {
  double latency = 0.0;    ///< number of alphas
  double bandwidth = 0.0;  ///< bytes times beta
  double reduction = 0.0;  ///< bytes times gamma

  [[nodiscard]] double seconds(const Hockney& h) const {
    return latency * h.alpha + bandwidth * h.beta + reduction * h.gamma;
  }
};

/// The algorithm the library runs for one call and what it costs.
struct AlgorithmCost {
  std::string_view algorithm;  ///< e.g. "binomial", "rabenseifner"
  CostTerms terms;
};

/// The algorithm and cost of one call of `routine` with `bytes` (see the
/// table at the top of this file) on a communicator of `processes`.
/// Throws flexmpi::Error (invalid_argument) for bytes < 0 or processes < 1.
/// One process communicates nothing: zero terms.
AlgorithmCost collective_cost(MpiLibrary library, Routine routine, double bytes, int processes);

/// One message-size band of a link: a message of n <= up_to bytes (the last
/// band: any n) costs alpha + n beta. Shared memory is not one Hockney link:
/// the copy runs from the caches up to their size and from memory above it,
/// and the transport switches from eager to rendezvous at its eager limit, so
/// each regime gets its own alpha and beta (thesis 5.3.2 uses one Hockney
/// pair; PLogP's size-dependent gap g(m) is the same idea).
struct LinkBand {
  double up_to = 0.0;  ///< largest message of the band, bytes (ignored for the last band)
  double alpha = 0.0;  ///< seconds
  double beta = 0.0;   ///< seconds per byte
};

/// A link priced by message-size band, with gamma for reductions.
class PiecewiseLink {
 public:
  /// One band: alpha + n beta for every size (the thesis's Hockney model).
  /// Implicit, so that a Hockney triple prices like before.
  PiecewiseLink(const Hockney& h = {});  // NOLINT(google-explicit-constructor)
  /// Bands sorted by up_to. Throws flexmpi::Error (invalid_argument) for no
  /// bands, a negative or non-finite number, or up_to not increasing.
  PiecewiseLink(std::vector<LinkBand> bands, double gamma);

  /// The Hockney parameters of the band that holds a message of `bytes`.
  [[nodiscard]] Hockney at(double bytes) const;
  [[nodiscard]] const std::vector<LinkBand>& bands() const { return bands_; }
  [[nodiscard]] double gamma() const { return gamma_; }

 private:
  std::vector<LinkBand> bands_;
  double gamma_ = 0.0;
};

/// The message of one round of an algorithm: bandwidth bytes over latency
/// steps (e.g. m for a binomial broadcast, m/p for a ring allreduce); the
/// band a call is priced in. `fallback` when the terms have no latency.
double step_bytes(const CostTerms& terms, double fallback);

/// One point of a per-collective fit: measured / modelled time at `bytes`.
struct ScalePoint {
  double bytes = 0.0;
  double scale = 1.0;
};

/// The per-collective fit of calibration (thesis 6.3.1): what the analytic
/// formula misses on this transport (shared-memory collectives of Open MPI
/// and MPICH do not send point-to-point messages), as measured / modelled
/// at the calibrated sizes on `processes` ranks; between two sizes the scale
/// is interpolated linearly in log2(bytes), outside them the nearest is kept.
/// A scale corrects one algorithm's formula: when the library switches
/// algorithm between two calibrated sizes, the neighbour that ran the same
/// algorithm as `bytes` is used alone.
struct CollectiveFit {
  int processes = 2;               ///< communicator size of the calibration
  std::vector<ScalePoint> points;  ///< sorted by bytes; empty: scale 1

  /// The correction at `bytes`, ignoring algorithm switches.
  [[nodiscard]] double scale(double bytes) const;
  /// The correction of `routine` at `bytes` under `library`'s algorithm choice
  /// on `processes` ranks (see above).
  [[nodiscard]] double scale(double bytes, MpiLibrary library, Routine routine) const;
};
/// Per routine, the fits of each calibrated communicator size (sorted by
/// processes): a collective on 2 ranks and on 4 oversubscribed ranks of a
/// 2-core node do not miss the formula by the same factor.
using CollectiveFits = std::map<Routine, std::vector<CollectiveFit>>;

/// The fit of `routine` calibrated on the communicator size nearest to
/// `processes` (the larger on a tie), or nullptr when there is none.
const CollectiveFit* find_fit(const CollectiveFits& fits, Routine routine, int processes);

/// Seconds of one call: collective_cost priced in the band of its step
/// message (step_bytes) and, when `fits` holds one for the routine
/// (find_fit), multiplied by its scale at `bytes`.
double call_seconds(MpiLibrary library, Routine routine, double bytes, int processes,
                    const PiecewiseLink& link, const CollectiveFits& fits = {});

/// The routine whose cost model prices a profiled operation (true), or
/// false for the completion and probe calls (Wait*, Test*, Probe), whose
/// time the model attributes to the posting call (Isend/Irecv).
bool routine_of(MpiOp op, Routine* routine);

/// One operation of a communication profile as the model reads it (thesis
/// 4.2.2): calls of one operation on communicators of one size, and the bytes
/// this process sent and received in them.
struct CommOpCount {
  Routine routine = Routine::send_recv;
  int comm_size = 1;
  std::uint64_t calls = 0;
  double bytes_sent = 0.0;
  double bytes_received = 0.0;
};

/// The rows of a PMPI profile (e.g. profile_difference over one sampling
/// interval) as model inputs; completion calls are dropped.
std::vector<CommOpCount> profile_operations(std::span<const OpRecord> records);

/// The message size of one call (the `bytes` of collective_cost) from what
/// the profile recorded, per routine (e.g. alltoall: sent / calls / size).
double bytes_per_call(const CommOpCount& op);

/// Predicted communication time of one process for a profile (thesis 5.3.2):
/// the sum over operations of calls x call_seconds(bytes per call).
/// Throws flexmpi::Error for a communicator size < 1.
double predict_communication(std::span<const CommOpCount> ops, MpiLibrary library,
                             const PiecewiseLink& link, const CollectiveFits& fits = {});

/// The same profile replayed for another configuration (thesis 5.3.2): every
/// operation on a communicator of `measured` processes is priced on
/// `candidate` processes, with the same bytes per call; operations on other
/// communicators are unchanged, and a communicator of one process costs
/// nothing. Throws as predict_communication.
double replay_communication(std::span<const CommOpCount> ops, int measured, int candidate,
                            MpiLibrary library, const PiecewiseLink& link,
                            const CollectiveFits& fits = {});

/// One sampling interval's communication, to be replayed for candidate
/// configurations by the malleability policies (thesis 5.3.2, 5.4): rank 0's
/// PMPI profile, the same on every process so that they decide alike, priced
/// with the machine profile's link and fits, computed once per interval.
struct CommunicationReplay {
  std::vector<CommOpCount> ops;  ///< the interval's operations (profile_operations)
  int processes = 1;             ///< the application's process count they ran on
  int iterations = 1;            ///< iterations of the interval
  MpiLibrary library = MpiLibrary::unknown;
  PiecewiseLink link;
  CollectiveFits fits;

  /// Seconds of communication per iteration on `candidate` processes.
  [[nodiscard]] double per_iteration(int candidate) const {
    return replay_communication(ops, processes, candidate, library, link, fits) /
           static_cast<double>(iterations > 0 ? iterations : 1);
  }
};

/// The lambda correction of eq. 5.4-5.5: the ratio of the measured to the
/// predicted communication time of the last sampling interval, applied to
/// the prediction of the next one. (Eq. 5.4 as printed divides estimated by
/// real; multiplying the next estimate by that would double the error, so
/// the ratio is taken the way eq. 5.5 needs it: real / estimated.)
///
/// window > 1 (beyond the thesis) takes the median of the last `window`
/// ratios: on a shared machine one interval's communication can be 20-40x the
/// next one's (a rank descheduled while the others wait), and eq. 5.4 would
/// carry that interval's ratio into the next prediction.
class LambdaCorrection {
 public:
  /// Eq. 5.4: the last interval only.
  LambdaCorrection() = default;
  /// window: ratios kept (>= 1). Throws flexmpi::Error for 0.
  explicit LambdaCorrection(std::size_t window);
  /// The interval just ended: `predicted` seconds were predicted (before
  /// correction), `measured` were measured. Intervals with no communication
  /// on either side leave lambda as it was. Throws flexmpi::Error for
  /// negative or non-finite times.
  void observe(double predicted, double measured);
  /// lambda_n (1 before any observation).
  [[nodiscard]] double lambda() const;
  /// Eq. 5.5: the corrected prediction, predicted x lambda_n.
  [[nodiscard]] double correct(double predicted) const { return predicted * lambda(); }

 private:
  std::size_t window_ = 1;
  std::vector<double> ratios_;  // the last `window_`, oldest first
};

}  // namespace flexmpi
