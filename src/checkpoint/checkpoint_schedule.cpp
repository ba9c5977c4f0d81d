#include "checkpoint/checkpoint_schedule.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <csignal>

#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"
#include "util/clock.hpp"
#include "util/collective_watchdog.hpp"
#include "util/signal_flag.hpp"

namespace flexmpi {

void parse_checkpoint_period(std::string_view text, CheckpointSettings& settings) {
  const bool seconds = text.ends_with('s');
  const std::string_view number = seconds ? text.substr(0, text.size() - 1) : text;
  double value = 0.0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  const bool whole = value == std::floor(value);
  if (number.empty() || error != std::errc() || end != number.data() + number.size() ||
      !(value > 0.0) || value > 1e9 || (!seconds && !whole)) {
    throw Error(Errc::invalid_argument,
                "expected a whole number of iterations (200) or seconds followed by s (60s)");
  }
  settings.every_iterations = seconds ? 0 : static_cast<std::int64_t>(value);
  settings.every_seconds = seconds ? value : 0.0;
}

void parse_checkpoint_signals(std::string_view text, CheckpointSettings& settings) {
  if (text != "USR1" && text != "USR1,TERM") {
    throw Error(Errc::invalid_argument, "expected USR1 or USR1,TERM");
  }
  settings.on_sigterm = text == "USR1,TERM";
}

std::string_view reason_name(CheckpointReason reason) {
  switch (reason) {
    case CheckpointReason::iterations:
      return "iterations";
    case CheckpointReason::seconds:
      return "seconds";
    case CheckpointReason::signal:
      return "signal";
    case CheckpointReason::none:
      break;
  }
  return "none";
}

CheckpointSchedule::CheckpointSchedule(const CheckpointSettings& settings) : settings_(settings) {
  // SIGUSR1 is caught from the start of MPI_Init (interposition/init_finalize.cpp).
  catch_signal(SIGUSR1);
  if (settings_.on_sigterm) catch_signal(SIGTERM);
  last_checkpoint_time_ = wall_seconds();
}

CheckpointSchedule::~CheckpointSchedule() {
  release_signal(SIGUSR1);
  release_signal(SIGTERM);
}

CheckpointReason CheckpointSchedule::at_iteration_end(std::int64_t iteration,
                                                      unsigned long generation, MPI_Comm comm) {
  if (started_ && generation != generation_) {
    // Spawned processes join only after this call: nothing collective now.
    started_ = false;
    generation_ = generation;
    return CheckpointReason::none;
  }
  const bool by_count =
      settings_.every_iterations > 0 && (iteration + 1) % settings_.every_iterations == 0;
  if (!started_) {
    // The first iteration end (again, after a reconfiguration), the same on
    // every process: timing starts, the first poll is the next call.
    started_ = true;
    generation_ = generation;
    last_poll_iteration_ = iteration;
    last_poll_time_ = wall_seconds();
    next_poll_ = iteration + 1;
    return by_count ? CheckpointReason::iterations : CheckpointReason::none;
  }
  if (iteration < next_poll_)
    return by_count ? CheckpointReason::iterations : CheckpointReason::none;

  const double now = wall_seconds();
  // Every process's view, the largest wins: a signal anywhere, the slowest
  // iterations, the longest time since the last checkpoint.
  double polled[3] = {signal_pending() ? 1.0 : 0.0,
                      (now - last_poll_time_) / static_cast<double>(std::max<std::int64_t>(
                                                    iteration - last_poll_iteration_, 1)),
                      now - last_checkpoint_time_};
  // The poll is collective at iterations that need not end a sampling
  // interval: a rank that skips this XMPI_Eval_* is named, not waited for.
  await_every_rank(comm, {CollectiveCall::checkpoint_poll, iteration});
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, polled, 3, MPI_DOUBLE, MPI_MAX, comm),
            "MPI_Allreduce (checkpoint poll)");
  double period = settings_.latency_seconds / 2.0;
  if (settings_.every_seconds > 0.0) period = std::min(period, settings_.every_seconds / 4.0);
  const double seconds_per_iteration = std::max(polled[1], 1e-9);
  next_poll_ =
      iteration + std::clamp<std::int64_t>(
                      static_cast<std::int64_t>(period / seconds_per_iteration), 1, 1'000'000'000);
  last_poll_iteration_ = iteration;
  last_poll_time_ = now;
  if (polled[0] > 0.0) {
    take_signal();
    return CheckpointReason::signal;
  }
  if (by_count) return CheckpointReason::iterations;
  if (settings_.every_seconds > 0.0 && polled[2] >= settings_.every_seconds) {
    return CheckpointReason::seconds;
  }
  return CheckpointReason::none;
}

void CheckpointSchedule::checkpoint_written() { last_checkpoint_time_ = wall_seconds(); }

}  // namespace flexmpi
