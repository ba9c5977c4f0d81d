// The messages of a redistribution: the agreements that end each of its
// checking steps, and the exchange of the rows themselves.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "flexmpi/error.hpp"
#include "redistribution/data_registry.hpp"

namespace flexmpi::redistribution {

// A signature of the arguments of a collective call, equal on all processes
// exactly when (barring 64-bit collisions) they agree. One multiply-xorshift
// step per word, cheap enough to cover a replicated sparsity pattern.
class Signature {
 public:
  void add(std::int64_t word) {
    hash_ = (hash_ ^ static_cast<std::uint64_t>(word)) * 0x9e3779b97f4a7c15ull;
    hash_ ^= hash_ >> 29;
  }
  [[nodiscard]] std::int64_t value() const { return static_cast<std::int64_t>(hash_); }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ull;
};

// What a process found wrong; empty message: nothing.
struct Failure {
  Errc code = Errc::invalid_argument;
  std::string message;
  explicit operator bool() const { return !message.empty(); }
};

// Collective: returns if no process failed and all signatures are equal,
// else throws on every process the failure of the lowest failing rank.
// `sums` are added up over the processes in place.
void agree(MPI_Comm comm, const Failure& mine, std::int64_t signature,
           std::span<std::int64_t> sums);

// The messages of one redistribution: collected first, then posted all at
// once, receives before sends (a message that finds its receive posted is
// not buffered as unexpected), then completed by one Waitall. Each transfer
// is split into messages of at most max_bytes; both sides split the same
// byte count the same way, and MPI's non-overtaking order between two
// processes matches the pieces up.
class Exchange {
 public:
  Exchange(MPI_Comm comm, std::uint64_t max_bytes) : comm_(comm), max_bytes_(max_bytes) {}

  void receive(int peer, void* data, std::uint64_t bytes) {
    if (bytes > 0) receives_.push_back({peer, static_cast<char*>(data), bytes});
  }
  void send(int peer, const void* data, std::uint64_t bytes) {
    if (bytes > 0) sends_.push_back({peer, static_cast<char*>(const_cast<void*>(data)), bytes});
  }

  void start(RedistributionStats& stats);
  void finish();

 private:
  struct Segment {
    int peer;
    char* data;
    std::uint64_t bytes;
  };
  std::uint64_t post(const Segment& segment, bool send);

  MPI_Comm comm_;
  std::uint64_t max_bytes_;
  std::vector<Segment> receives_;
  std::vector<Segment> sends_;
  std::vector<MPI_Request> requests_;
};

}  // namespace flexmpi::redistribution
