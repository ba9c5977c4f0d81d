#include "checkpoint/checkpointer.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "balancing/partitioner.hpp"
#include "base/context.hpp"
#include "base/mpi_check.hpp"
#include "flexmpi/error.hpp"
#include "redistribution/decomposition_state.hpp"
#include "util/agreement.hpp"
#include "util/clock.hpp"
#include "util/output_file.hpp"
#include "util/signal_flag.hpp"

namespace flexmpi {

namespace {

std::string previous_of(const std::string& file) { return file + ".prev"; }
std::string partial_of(const std::string& file) { return file + ".partial"; }

// The executable's name: a checkpoint is refused by another program.
std::string program_name() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("unknown") : exe.filename().string();
}

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown";
  return name.data();
}

// Every process's host name, by rank (collective).
std::vector<std::string> gather_hosts(MPI_Comm comm) {
  constexpr int kLength = 256;
  std::array<char, kLength> mine{};
  const std::string name = host_name();
  std::copy_n(name.begin(), std::min<std::size_t>(name.size(), kLength - 1), mine.begin());
  int size = 0;
  PMPI_Comm_size(comm, &size);
  std::vector<char> all(static_cast<std::size_t>(size) * kLength);
  check_mpi(PMPI_Allgather(mine.data(), kLength, MPI_CHAR, all.data(), kLength, MPI_CHAR, comm),
            "MPI_Allgather (checkpoint hosts)");
  std::vector<std::string> hosts;
  for (int p = 0; p < size; ++p)
    hosts.emplace_back(all.data() + static_cast<std::size_t>(p) * kLength);
  return hosts;
}

template <typename Body>
void agreed(MPI_Comm comm, Body body) {
  std::optional<Error> failure;
  try {
    body();
  } catch (const Error& e) {
    failure = e;
  }
  agree_on_failure(failure, comm);
}

// A full disk is found before the file is begun: parallel HDF5 cannot close a
// file collectively once some processes' writes failed (they part ways
// inside H5Fclose and wait for each other forever).
void require_space(const std::string& file, std::uint64_t needed) {
  std::filesystem::path directory = std::filesystem::path(file).parent_path();
  if (directory.empty()) directory = ".";
  struct statvfs status {};
  if (::statvfs(directory.c_str(), &status) != 0) return;  // the writing will say what is wrong
  const std::uint64_t available = static_cast<std::uint64_t>(status.f_bavail) * status.f_frsize;
  if (available < needed) {
    throw Error(Errc::io_failure,
                fmt::format("cannot write the checkpoint {}: it needs about {:.1f} MiB and the "
                            "file system of {} has {:.1f} MiB free (the previous checkpoint is "
                            "kept until the new one is whole)",
                            partial_of(file), static_cast<double>(needed) / 1048576.0,
                            directory.string(), static_cast<double>(available) / 1048576.0));
  }
}

bool exists(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0;
}

}  // namespace

Checkpointer::Checkpointer(const CheckpointSettings& settings, Context& context,
                           DecompositionState& state, Links links, bool joining)
    : settings_(settings), context_(context), state_(state), links_(std::move(links)) {
  const MPI_Comm comm = context_.library_comm();
  if (settings_.file.empty()) release_signal(SIGUSR1);  // caught in MPI_Init, for nothing
  if (joining) {
    if (!settings_.file.empty()) schedule_ = std::make_unique<CheckpointSchedule>(settings_);
    return;
  }
  if (!settings_.restart_file.empty()) {
    agreed(comm, [&] { restart_ = read_restart_header(); });
    const checkpoint::Header& header = restart_->header;
    if (header.rows >= 0) state_.plan_first(header.rows, warm_decomposition(header));
  }
  if (!settings_.file.empty()) {
    agreed(comm, [&] { check_destination(); });
    schedule_ = std::make_unique<CheckpointSchedule>(settings_);
  }
}

Checkpointer::~Checkpointer() = default;

Checkpointer::Restart Checkpointer::read_restart_header() const {
  const std::string& file = settings_.restart_file;
  Restart restart;
  try {
    restart = {file, checkpoint::read_header(file)};
  } catch (const Error& damaged) {
    const std::string previous = previous_of(file);
    if (!exists(previous)) throw;
    restart = {previous, checkpoint::read_header(previous)};
    if (context_.rank() == 0) {
      context_.log().warn("{}: restarting from the previous checkpoint {} (iteration {})",
                          damaged.what(), previous, restart.header.next_iteration);
    }
  }
  const std::string program = program_name();
  if (restart.header.program != program) {
    throw Error(Errc::io_failure, "checkpoint " + restart.path + " was written by " +
                                      restart.header.program + ", not by this program (" + program +
                                      ")");
  }
  return restart;
}

Decomposition Checkpointer::warm_decomposition(const checkpoint::Header& header) const {
  const std::vector<std::string> hosts = gather_hosts(context_.library_comm());
  const int processes = static_cast<int>(hosts.size());
  if (header.speeds.size() != header.hosts.size() || header.speeds.empty()) {
    return block_decomposition(header.rows, processes);  // no speeds measured yet
  }
  // Each process as fast as the writers on its host were, on average.
  std::vector<double> shares(hosts.size(), 1.0);
  for (std::size_t p = 0; p < hosts.size(); ++p) {
    double sum = 0.0;
    int writers = 0;
    for (std::size_t w = 0; w < header.hosts.size(); ++w) {
      if (header.hosts[w] == hosts[p] && header.speeds[w] > 0.0) {
        sum += header.speeds[w];
        ++writers;
      }
    }
    if (writers == 0) return block_decomposition(header.rows, processes);
    shares[p] = sum / writers;
  }
  return blocks_from_counts(proportional_counts(header.rows, shares, 1));
}

void Checkpointer::check_destination() const {
  check_output_destination({"FLEXMPI_CHECKPOINT", settings_.file, {}, {}, true}, Errc::bad_config);
}

std::int64_t Checkpointer::resume() {
  if (!restart_) return 0;
  if (resumed_) throw Error(Errc::bad_state, "XMPI_Resume: called twice; once, before the loop");
  const checkpoint::Header& header = restart_->header;
  use_registered_rows();
  if (header.rows >= 0 && state_.global_rows() != header.rows) {
    throw Error(Errc::invalid_argument,
                fmt::format("XMPI_Resume: checkpoint {} holds a decomposition of {} rows, this "
                            "run's has {}",
                            restart_->path, header.rows, state_.global_rows()));
  }
  const std::string difference = checkpoint::compare_with_registered(
      header, state_.data().structures(), state_.records().all());
  if (!difference.empty()) {
    throw Error(Errc::invalid_argument, "XMPI_Resume: checkpoint " + restart_->path +
                                            " does not fit this program: " + difference);
  }
  try {
    read_into_registered(*restart_);
  } catch (const Error& damaged) {
    // Damaged data found while reading: the previous checkpoint, if it fits.
    const std::string previous = previous_of(settings_.restart_file);
    if (damaged.code() != Errc::io_failure || restart_->path == previous || !exists(previous))
      throw;
    Restart older;
    agreed(context_.library_comm(), [&] { older = {previous, checkpoint::read_header(previous)}; });
    if (!checkpoint::compare_with_registered(older.header, state_.data().structures(),
                                             state_.records().all())
             .empty()) {
      throw;
    }
    if (context_.rank() == 0) {
      context_.log().warn("{}: restarting from the previous checkpoint {} (iteration {})",
                          damaged.what(), previous, older.header.next_iteration);
    }
    read_into_registered(older);
    restart_ = std::move(older);
  }
  resumed_ = true;
  state_.update_work();
  if (context_.rank() == 0) {
    context_.log().info("restarted from {} at iteration {} on {} processes (written by {})",
                        restart_->path, restart_->header.next_iteration, context_.size(),
                        restart_->header.blocks.size());
  }
  return restart_->header.next_iteration;
}

void Checkpointer::use_registered_rows() {
  // Data registered without XMPI_Get_wsize: the registry holds the block
  // partition of its rows (flexmpi.h), which becomes the decomposition.
  const std::int64_t rows = state_.data().rows();
  if (state_.blocks().empty() && rows >= 0) {
    state_.assign(rows, block_decomposition(rows, context_.size()), /*own_block_changes=*/true);
  }
}

void Checkpointer::read_into_registered(const Restart& restart) {
  checkpoint::read_data(restart.path, restart.header, state_.data().structures(),
                        state_.records().all(), state_.blocks(), context_.library_comm());
}

bool Checkpointer::at_iteration_end(std::int64_t iteration, std::int64_t max_iterations) {
  if (!schedule_) return false;
  const CheckpointReason reason =
      schedule_->at_iteration_end(iteration, context_.generation(), context_.library_comm());
  if (reason == CheckpointReason::none) return false;
  if (reason != CheckpointReason::signal && iteration + 1 >= max_iterations) return false;
  write(iteration + 1, reason_name(reason));
  return reason == CheckpointReason::signal && settings_.stop_on_signal;
}

void Checkpointer::write(std::int64_t next_iteration, std::string_view reason) {
  if (settings_.file.empty()) {
    throw Error(Errc::bad_state,
                "no checkpoint file: set FLEXMPI_CHECKPOINT (flexrun --checkpoint)");
  }
  if (next_iteration < 0) {
    throw Error(Errc::invalid_argument,
                "next_it=" + std::to_string(next_iteration) + ": expected >= 0");
  }
  const MPI_Comm comm = context_.library_comm();
  const double start = wall_seconds();
  use_registered_rows();
  checkpoint::Snapshot snapshot;
  snapshot.program = program_name();
  snapshot.next_iteration = next_iteration;
  snapshot.rows = state_.global_rows();
  snapshot.blocks = state_.blocks();
  snapshot.speeds = links_.speeds();
  snapshot.hosts = gather_hosts(comm);
  snapshot.structures = state_.data().structures();
  snapshot.records = state_.records().all();
  agreed(comm, [&] {
    if (context_.rank() == 0) require_space(settings_.file, checkpoint::file_bytes(snapshot));
  });
  std::uint64_t bytes = 0;
  try {
    agreed(comm,
           [&] { bytes = checkpoint::write_file(partial_of(settings_.file), snapshot, comm); });
  } catch (const Error&) {
    if (context_.rank() == 0) std::remove(partial_of(settings_.file).c_str());
    throw;
  }
  commit_partial();
  if (schedule_) schedule_->checkpoint_written();
  double seconds = wall_seconds() - start;
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UINT64_T, MPI_SUM, comm),
            "MPI_Allreduce (checkpoint bytes)");
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, comm),
            "MPI_Allreduce (checkpoint time)");
  if (context_.rank() != 0) return;
  context_.log().info("checkpoint of iteration {} written to {} ({:.1f} MiB in {:.3f} s, {})",
                      next_iteration, settings_.file, static_cast<double>(bytes) / 1048576.0,
                      seconds, reason);
  links_.trace({{"checkpoint",
                 {{"next_iteration", next_iteration},
                  {"reason", reason},
                  {"file", settings_.file},
                  {"bytes", bytes},
                  {"seconds", seconds},
                  {"nprocs", context_.size()}}},
                {"unix_time", unix_seconds()}});
}

void Checkpointer::commit_partial() const {
  agreed(context_.library_comm(), [&] {
    if (context_.rank() != 0) return;
    const std::string& file = settings_.file;
    if (exists(file) && std::rename(file.c_str(), previous_of(file).c_str()) != 0) {
      throw Error(Errc::io_failure, "cannot keep the previous checkpoint as " + previous_of(file) +
                                        ": " + std::strerror(errno));
    }
    if (std::rename(partial_of(file).c_str(), file.c_str()) != 0) {
      throw Error(Errc::io_failure, "cannot rename the checkpoint " + partial_of(file) + " to " +
                                        file + ": " + std::strerror(errno));
    }
  });
}

}  // namespace flexmpi
