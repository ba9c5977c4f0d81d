// A communication profile replayed on another number of processes (thesis
// 5.3.2), and the lambda correction of the predictions (eq. 5.4).
#include <algorithm>
#include <cmath>
#include <string>

#include "flexmpi/error.hpp"
#include "model/comm_model.hpp"

namespace flexmpi {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Errc::invalid_argument, message);
}

}  // namespace

bool routine_of(MpiOp op, Routine* routine) {
  switch (op) {
    case MpiOp::Send:
    case MpiOp::Ssend:
    case MpiOp::Rsend:
    case MpiOp::Bsend:
    case MpiOp::Recv:
    case MpiOp::Sendrecv:
    case MpiOp::Sendrecv_replace:
    case MpiOp::Isend:
    case MpiOp::Issend:
    case MpiOp::Ibsend:
    case MpiOp::Irsend:
    case MpiOp::Irecv:
      *routine = Routine::send_recv;
      return true;
    case MpiOp::Barrier:
    case MpiOp::Ibarrier:
      *routine = Routine::barrier;
      return true;
    case MpiOp::Bcast:
    case MpiOp::Ibcast:
      *routine = Routine::bcast;
      return true;
    case MpiOp::Reduce:
    case MpiOp::Ireduce:
      *routine = Routine::reduce;
      return true;
    case MpiOp::Allreduce:
    case MpiOp::Iallreduce:
      *routine = Routine::allreduce;
      return true;
    case MpiOp::Gather:
    case MpiOp::Gatherv:
      *routine = Routine::gather;
      return true;
    case MpiOp::Allgather:
      *routine = Routine::allgather;
      return true;
    case MpiOp::Allgatherv:
      *routine = Routine::allgatherv;
      return true;
    case MpiOp::Scatter:
    case MpiOp::Scatterv:
      *routine = Routine::scatter;
      return true;
    case MpiOp::Alltoall:
      *routine = Routine::alltoall;
      return true;
    case MpiOp::Alltoallv:
      *routine = Routine::alltoallv;
      return true;
    default:  // Probe, Wait*, Test*: priced with the call that posted the request;
              // Scan and Exscan: no cost model of their own
      return false;
  }
}

std::vector<CommOpCount> profile_operations(std::span<const OpRecord> records) {
  std::vector<CommOpCount> ops;
  for (const OpRecord& record : records) {
    Routine routine{};
    if (record.stats.calls == 0 || !routine_of(record.op, &routine)) continue;
    ops.push_back({routine, std::max(record.comm_size, 1), record.stats.calls,
                   static_cast<double>(record.stats.bytes_sent),
                   static_cast<double>(record.stats.bytes_received)});
  }
  return ops;
}

double bytes_per_call(const CommOpCount& op) {
  if (op.calls == 0) return 0.0;
  const double calls = static_cast<double>(op.calls);
  const double p = std::max(op.comm_size, 1);
  switch (op.routine) {
    case Routine::send_recv:  // a send records what it sent, a receive what it got
    case Routine::alltoallv:
      return std::max(op.bytes_sent, op.bytes_received) / calls;
    case Routine::barrier:
      return 0.0;
    case Routine::bcast:  // the root records sent bytes, the others received
      return (op.bytes_sent + op.bytes_received) / calls;
    case Routine::reduce:
    case Routine::allreduce:
    case Routine::gather:  // every process sends its block
    case Routine::allgather:
      return op.bytes_sent / calls;
    case Routine::scatter:  // every process receives its block
      return op.bytes_received / calls;
    case Routine::allgatherv:  // everyone receives the whole: the average block
      return op.bytes_received / calls / p;
    case Routine::alltoall:  // sendcount x p per call
      return op.bytes_sent / calls / p;
  }
  return 0.0;
}

double predict_communication(std::span<const CommOpCount> ops, MpiLibrary library,
                             const PiecewiseLink& link, const CollectiveFits& fits) {
  return replay_communication(ops, 0, 0, library, link, fits);
}

double replay_communication(std::span<const CommOpCount> ops, int measured, int candidate,
                            MpiLibrary library, const PiecewiseLink& link,
                            const CollectiveFits& fits) {
  double seconds = 0.0;
  for (const CommOpCount& op : ops) {
    if (op.comm_size < 1) {
      invalid("communication profile: " + std::string(routine_name(op.routine)) +
              " on a communicator of " + std::to_string(op.comm_size) +
              " processes: expected >= 1");
    }
    if (op.bytes_sent < 0 || op.bytes_received < 0) {
      invalid("communication profile: " + std::string(routine_name(op.routine)) +
              ": expected bytes >= 0");
    }
    const int processes = op.comm_size == measured ? candidate : op.comm_size;
    if (op.calls == 0 || processes == 1) continue;  // a lone process sends nothing
    seconds += static_cast<double>(op.calls) *
               call_seconds(library, op.routine, bytes_per_call(op), processes, link, fits);
  }
  return seconds;
}

void LambdaCorrection::observe(double predicted, double measured) {
  if (!(predicted >= 0.0) || !(measured >= 0.0) || !std::isfinite(predicted) ||
      !std::isfinite(measured)) {
    invalid("lambda correction (eq. 5.4): expected predicted and measured seconds >= 0, got " +
            std::to_string(predicted) + " and " + std::to_string(measured));
  }
  if (!(predicted > 0.0) || !(measured > 0.0)) return;
  ratios_.push_back(measured / predicted);
  if (ratios_.size() > window_) ratios_.erase(ratios_.begin());
}

LambdaCorrection::LambdaCorrection(std::size_t window) : window_(window) {
  if (window == 0) invalid("lambda correction: expected a window of at least 1 interval");
}

double LambdaCorrection::lambda() const {
  if (ratios_.empty()) return 1.0;
  std::vector<double> sorted = ratios_;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t middle = sorted.size() / 2;
  return sorted.size() % 2 == 1 ? sorted[middle] : 0.5 * (sorted[middle - 1] + sorted[middle]);
}

}  // namespace flexmpi
