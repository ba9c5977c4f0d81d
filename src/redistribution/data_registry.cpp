// Data redistribution (thesis 4.5, Algorithm 4); the guarantees are stated
// in data_registry.hpp.
//
// One call runs in four phases, so that bad input changes nothing and no
// process is left waiting for one that gave up:
//   1. each process checks the decompositions and its own structures; one
//      allreduce agrees on the outcome and on a signature of the arguments
//      and of the registry (which catches processes that disagree);
//   2. only with distributed sparse structures: the old owners tell the new
//      ones how many nonzeros the rows they send hold; a second allreduce
//      agrees, and checks the global nnz;
//   3. processes that receive rows allocate (or grow their arrays); a third
//      allreduce agrees that everyone got the memory (skipped when nobody
//      receives rows);
//   4. the rows that change owner move, every structure at once.
//
// Point-to-point rather than Algorithm 4's MPI_Alltoallv/MPI_Allgatherv:
//   - blocks are contiguous and in rank order, so a process exchanges rows
//     with the few processes whose blocks overlap its old or new block.
//     Alltoallv needs 4p int counts on every process and the Open MPI and
//     MPICH algorithms visit all p peers even for zero counts; here a
//     process posts O(peers) requests (the plan is found by binary search);
//   - Alltoallv counts and displacements are int, so a block beyond INT_MAX
//     elements cannot even be addressed (MPI 4's MPI_Alltoallv_c is not in
//     Open MPI 4.1); here every transfer is split at max_message_bytes;
//   - all arrays of all structures are in flight together and complete in
//     one Waitall, instead of one collective (one synchronisation) per array;
//   - rows go from the user's old buffer straight into the new one: nothing
//     is packed, and rows a process keeps never go through MPI;
//   - Allgatherv would send every row of a replicated structure to every
//     process, p times what changes owner.
// On 2 processes both move the same single message; what is left to pay is
// the agreements (a few microseconds), the rows a process keeps (copied, or
// shifted in place) and first-touch page faults of memory a block grows
// into. bench/redistribution_bench.cpp measures it against a
// bare MPI_Alltoallv of the same bytes between warm preallocated buffers.
//
// The library's own messages use PMPI_* so that they do not count in the
// application's communication profile (thesis 4.2.2).
#include "redistribution/data_registry.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "flexmpi/error.hpp"
#include "redistribution/transfer_plan.hpp"
#include "util/agreement.hpp"
#include "util/clock.hpp"

namespace flexmpi {
namespace {

using detail::Kind;
using detail::Structure;

constexpr int kCountTag = 32000;  // nonzero counts of outgoing sparse rows (phase 2)
constexpr int kDataTag = 32001;   // the rows themselves (phase 4)

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Errc::invalid_argument, message);
}

std::string describe(const Structure& s, std::size_t index) {
  static constexpr const char* kKinds[] = {"vector", "dense matrix", "CSR matrix", "CSC matrix"};
  return "structure #" + std::to_string(index) + " (" +
         (s.scheme == Scheme::distributed ? "distributed " : "replicated ") +
         kKinds[static_cast<int>(s.kind)] + ")";
}

const char* pointers_name(const Structure& s) {
  return s.kind == Kind::csc ? "column pointers" : "row pointers (ia)";
}
const char* indices_name(const Structure& s) {
  return s.kind == Kind::csc ? "row indices" : "column indices (ja)";
}
const char* rows_name(const Structure& s) { return s.kind == Kind::csc ? "columns" : "rows"; }

// Elements in one row (one column for CSC) of a vector or dense structure.
std::int64_t row_elements(const Structure& s) { return s.kind == Kind::dense ? s.size : 1; }

// MPI cannot tell whether a datatype is committed, but using an uncommitted
// one is an error that Open MPI reports in MPI_Irecv and MPICH in
// MPI_Pack_size. Probe both, on a private MPI_COMM_SELF duplicate that
// returns errors instead of aborting.
bool is_committed(MPI_Datatype type) {
  MPI_Comm self = MPI_COMM_NULL;
  check_mpi(PMPI_Comm_dup(MPI_COMM_SELF, &self), "MPI_Comm_dup");
  PMPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
  int bytes = 0;
  bool committed = PMPI_Pack_size(1, type, self, &bytes) == MPI_SUCCESS;
  if (committed) {
    MPI_Request request = MPI_REQUEST_NULL;
    committed = PMPI_Irecv(nullptr, 0, type, MPI_PROC_NULL, 0, self, &request) == MPI_SUCCESS;
    if (committed && request != MPI_REQUEST_NULL) PMPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  PMPI_Comm_free(&self);
  return committed;
}

// Bytes per element of a registered array: the extent of `type`. Data moves
// as MPI_BYTE, so any datatype whose elements lie within [0, extent) works,
// including structs with padding; a type with another lower bound does not
// describe consecutive array elements.
std::size_t element_extent(MPI_Datatype type, const std::string& what) {
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (initialized == 0 || finalized != 0) {
    throw Error(Errc::bad_state, what + ": MPI is not initialised");
  }
  if (type == MPI_DATATYPE_NULL) invalid(what + ": the datatype is MPI_DATATYPE_NULL");
  int integers = 0, addresses = 0, datatypes = 0, combiner = 0;
  check_mpi(PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner),
            "MPI_Type_get_envelope");
  if (combiner != MPI_COMBINER_NAMED && !is_committed(type)) {
    invalid(what + ": the datatype is not committed (call MPI_Type_commit first)");
  }
  int size = 0;
  check_mpi(PMPI_Type_size(type, &size), "MPI_Type_size");
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  check_mpi(PMPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
  check_mpi(PMPI_Type_get_true_extent(type, &true_lb, &true_extent), "MPI_Type_get_true_extent");
  if (size <= 0 || extent <= 0) invalid(what + ": the datatype has no data (size 0)");
  if (lb != 0 || true_lb < 0 || true_lb + true_extent > extent) {
    invalid(what + ": unsupported datatype (lower bound " + std::to_string(lb) + ", extent " +
            std::to_string(extent) + ", data in [" + std::to_string(true_lb) + ", " +
            std::to_string(true_lb + true_extent) +
            ")): array elements must lie in [0, extent) of their slot");
  }
  return static_cast<std::size_t>(extent);
}

// a * b * c fits in int64 (and so in size_t), all non-negative.
bool fits(std::int64_t a, std::int64_t b, std::int64_t c = 1) {
  std::int64_t ab = 0, abc = 0;
  return !__builtin_mul_overflow(a, b, &ab) && !__builtin_mul_overflow(ab, c, &abc);
}

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

  void start(RedistributionStats& stats) {
    for (const Segment& segment : receives_) {
      post(segment, false);
      stats.bytes_received += segment.bytes;
    }
    for (const Segment& segment : sends_) {
      stats.messages += post(segment, true);
      stats.bytes_sent += segment.bytes;
    }
  }

  void finish() {
    check_mpi(
        PMPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
        "MPI_Waitall (redistribution)");
  }

 private:
  struct Segment {
    int peer;
    char* data;
    std::uint64_t bytes;
  };

  std::uint64_t post(const Segment& segment, bool send) {
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

  MPI_Comm comm_;
  std::uint64_t max_bytes_;
  std::vector<Segment> receives_;
  std::vector<Segment> sends_;
  std::vector<MPI_Request> requests_;
};

// How this process's blocks change. It is the same for every distributed
// structure (they share one decomposition), and decides where the rows go.
enum class Mode {
  unchanged,  // no row leaves or arrives
  shrink,     // rows only leave: compact the old arrays in place once they are sent
  grow,       // rows only arrive: enlarge the old arrays (realloc) and receive into them
  fresh,      // rows leave and arrive: new arrays beside the old ones, which are still sent from
};

Mode mode_of(const TransferPlan& plan) {
  if (plan.receives.empty()) return plan.sends.empty() ? Mode::unchanged : Mode::shrink;
  return plan.sends.empty() ? Mode::grow : Mode::fresh;
}

// One structure's part of a redistribution on this process.
struct Move {
  // Mode::fresh: the new arrays, freed if the call fails before they are installed.
  char* data = nullptr;  // vector/dense data or sparse values
  int* ptr = nullptr;    // sparse pointers (new count + 1)
  int* idx = nullptr;    // sparse indices
  // Distributed sparse only, in nonzeros:
  std::int64_t old_nnz = 0;             // local nonzeros before
  std::int64_t new_nnz = 0;             // local nonzeros after
  std::int64_t kept_nnz = 0;            // of the rows kept
  std::int64_t kept_offset = 0;         // where the kept rows start in the new arrays
  std::vector<std::int64_t> piece_nnz;  // of each plan.receives entry
  std::vector<std::int64_t> piece_offset;

  void release() noexcept {
    std::free(data);
    std::free(ptr);
    std::free(idx);
    data = nullptr;
    ptr = nullptr;
    idx = nullptr;
  }
};

void release_all(std::vector<Move>& moves) noexcept {
  for (Move& move : moves) move.release();
}

// Rows that arrive land in memory never touched before, and each 4 KiB page
// costs a fault (~2.5 us on the reference VM: a whole 32 MiB block moving
// took 3.5x a bare MPI_Alltoallv into warm buffers). Where transparent huge
// pages are on request (Debian's default "madvise"), asking for them for a
// large block makes that one fault per 2 MiB. The block stays the user's
// malloc'ed memory; the advice only covers its 2 MiB-aligned interior.
void advise_huge_pages(void* block, std::uint64_t bytes) noexcept {
  constexpr std::uint64_t kHugePage = 2u << 20;
  if (block == nullptr || bytes < 2 * kHugePage) return;
  const auto start = reinterpret_cast<std::uintptr_t>(block);
  const std::uintptr_t first = (start + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t last = (start + bytes) & ~(kHugePage - 1);
  if (last > first) {
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice only
  }
}

// malloc that never asks for 0 bytes (malloc(0) may return nullptr).
template <class T>
bool allocate(T** pointer, std::uint64_t bytes) {
  *pointer = static_cast<T*>(std::malloc(std::max<std::uint64_t>(bytes, 1)));
  advise_huge_pages(*pointer, bytes);
  return *pointer != nullptr;
}

// Enlarges the user's array with realloc: no copy, and no page touched, for
// the rows it already holds (glibc keeps the block, extends it, or remaps
// its pages). On failure the array is left as it was.
template <class T>
bool grow(T** pointer, std::uint64_t bytes) {
  void* larger = std::realloc(*pointer, std::max<std::uint64_t>(bytes, 1));
  if (larger == nullptr) return false;
  *pointer = static_cast<T*>(larger);
  advise_huge_pages(larger, bytes);
  return true;
}

// A block that lost rows keeps its memory while it still fills half of it:
// load balancing moves rows back and forth (thesis 5.2), and memory given
// back to the system costs a page fault per page when rows return. Below
// half, realloc gives the rest back (so at most 2x is ever held).
template <class T>
void shrink(T** pointer, std::uint64_t bytes, std::uint64_t old_bytes) {
  if (*pointer == nullptr || bytes >= old_bytes / 2) return;
  if (void* smaller = std::realloc(*pointer, std::max<std::uint64_t>(bytes, 1))) {
    *pointer = static_cast<T*>(smaller);
  }
}

// Whether some process receives rows, i.e. may allocate (all processes
// know both decompositions, so they all answer the same).
bool anyone_receives(std::span<const RowBlock> from, std::span<const RowBlock> to) {
  for (std::size_t p = 0; p < from.size(); ++p) {
    const std::int64_t kept = std::min(from[p].displ + from[p].count, to[p].displ + to[p].count) -
                              std::max(from[p].displ, to[p].displ);
    if (to[p].count > std::max<std::int64_t>(kept, 0)) return true;
  }
  return false;
}

// Received row pointers hold the ends of the sender's rows in the sender's
// numbering (no packing on the sender). A piece whose rows occupy new local
// rows [first, first + rows) and whose nonzeros end at `end` in the new
// arrays is renumbered by one shift.
void rebase(int* ptr, std::int64_t first, std::int64_t rows, std::int64_t end) {
  if (rows == 0) return;
  const std::int64_t delta = end - ptr[first + rows];
  for (std::int64_t k = 1; k <= rows; ++k)
    ptr[first + k] = static_cast<int>(ptr[first + k] + delta);
}

std::string check_pointers_array(const int* ptr, std::int64_t rows, const std::string& what) {
  if (ptr[0] != 0) return what + "[0] is " + std::to_string(ptr[0]) + ", expected 0";
  for (std::int64_t k = 0; k < rows; ++k) {
    if (ptr[k + 1] < ptr[k]) {
      return what + " decrease at local index " + std::to_string(k) + " (" +
             std::to_string(ptr[k]) + " then " + std::to_string(ptr[k + 1]) + ")";
    }
  }
  return {};
}

}  // namespace

// ---- registration -------------------------------------------------------------------

void DataRegistry::add(const Structure& structure) {
  const void* addresses[] = {structure.data, structure.ptr, structure.idx};
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    const Structure& other = structures_[i];
    for (const void* mine : addresses) {
      if (mine == nullptr) continue;
      if (mine == other.data || mine == other.ptr || mine == other.idx) {
        invalid("register: this address is already registered, by " + describe(other, i));
      }
    }
  }
  if (rows_ >= 0 && structure.size != rows_) {
    invalid("register: size " + std::to_string(structure.size) + " differs from the size " +
            std::to_string(rows_) +
            " of the structures already registered (they share one decomposition, thesis 4.5.2)");
  }
  structures_.push_back(structure);
  rows_ = structure.size;
}

void DataRegistry::register_rows(Kind kind, const char* call, void** data_address,
                                 std::int64_t size, std::int64_t row_length, MPI_Datatype type,
                                 Scheme scheme) {
  const std::string name = call;
  if (data_address == nullptr) invalid(name + ": the address of the pointer is null");
  if (size < 0) invalid(name + ": negative size " + std::to_string(size));
  if (scheme != Scheme::distributed && scheme != Scheme::replicated) {
    invalid(name + ": unknown scheme");
  }
  const std::size_t extent = element_extent(type, call);
  if (!fits(size, row_length, static_cast<std::int64_t>(extent))) {
    invalid(name + ": size " + std::to_string(size) + " overflows 64-bit byte counts");
  }
  add({kind, scheme, data_address, nullptr, nullptr, size, size * row_length, extent});
}

void DataRegistry::register_vector(void** data_address, std::int64_t size, MPI_Datatype type,
                                   Scheme scheme) {
  register_rows(Kind::vector, "register_vector", data_address, size, 1, type, scheme);
}

void DataRegistry::register_dense(void** data_address, std::int64_t size, MPI_Datatype type,
                                  Scheme scheme) {
  register_rows(Kind::dense, "register_dense", data_address, size, size, type, scheme);
}

void DataRegistry::register_sparse_impl(Kind kind, int** ptr_address, int** idx_address,
                                        void** values_address, std::int64_t size, std::int64_t nnz,
                                        MPI_Datatype type, Scheme scheme) {
  const std::string what = kind == Kind::csc ? "register_sparse_csc" : "register_sparse";
  if (ptr_address == nullptr || idx_address == nullptr || values_address == nullptr) {
    invalid(what + ": the address of the " +
            (ptr_address == nullptr   ? (kind == Kind::csc ? "column pointer" : "ia")
             : idx_address == nullptr ? (kind == Kind::csc ? "row index" : "ja")
                                      : "values") +
            " pointer is null");
  }
  if (static_cast<void*>(ptr_address) == static_cast<void*>(idx_address) ||
      static_cast<void*>(ptr_address) == static_cast<void*>(values_address) ||
      static_cast<void*>(idx_address) == static_cast<void*>(values_address)) {
    invalid(what + ": the three pointer addresses must be different");
  }
  if (size < 0) invalid(what + ": negative size " + std::to_string(size));
  if (nnz < 0) invalid(what + ": negative nnz " + std::to_string(nnz));
  // Indices and pointers are int: the global dimension must be int, and so
  // must the nonzeros any one process holds (checked when they move).
  if (size > std::numeric_limits<int>::max()) {
    invalid(what + ": size " + std::to_string(size) + " exceeds INT_MAX (indices are int)");
  }
  if (scheme == Scheme::replicated && nnz > std::numeric_limits<int>::max()) {
    invalid(what + ": a replicated matrix with " + std::to_string(nnz) +
            " nonzeros does not fit int pointers");
  }
  if (scheme != Scheme::distributed && scheme != Scheme::replicated) {
    invalid(what + ": unknown scheme");
  }
  const std::size_t extent = element_extent(type, what);
  if (!fits(nnz, static_cast<std::int64_t>(extent))) {
    invalid(what + ": nnz " + std::to_string(nnz) + " overflows 64-bit byte counts");
  }
  add({kind, scheme, values_address, ptr_address, idx_address, size, nnz, extent});
}

void DataRegistry::register_sparse(int** ia_address, int** ja_address, void** values_address,
                                   std::int64_t size, std::int64_t nnz, MPI_Datatype type,
                                   Scheme scheme) {
  register_sparse_impl(Kind::csr, ia_address, ja_address, values_address, size, nnz, type, scheme);
}

void DataRegistry::register_sparse_csc(int** col_ptr_address, int** row_idx_address,
                                       void** values_address, std::int64_t size, std::int64_t nnz,
                                       MPI_Datatype type, Scheme scheme) {
  register_sparse_impl(Kind::csc, col_ptr_address, row_idx_address, values_address, size, nnz, type,
                       scheme);
}

void DataRegistry::unregister(const void* address) {
  const auto it = std::find_if(structures_.begin(), structures_.end(), [&](const Structure& s) {
    return address != nullptr && (address == s.data || address == s.ptr || address == s.idx);
  });
  if (it == structures_.end()) {
    invalid(
        "unregister: this address is not registered (expected the address given at "
        "registration: &x, not x)");
  }
  structures_.erase(it);
  if (structures_.empty()) rows_ = -1;
}

void DataRegistry::clear() noexcept {
  structures_.clear();
  rows_ = -1;
}

void DataRegistry::set_max_message_bytes(std::uint64_t bytes) {
  if (bytes == 0 || bytes > kMaxMessageBytes) {
    invalid("set_max_message_bytes: " + std::to_string(bytes) + " is not in [1, INT_MAX]");
  }
  max_message_bytes_ = bytes;
}

void DataRegistry::set_local_block(const RowBlock& block) {
  if (block.count < 0 || block.displ < 0) {
    invalid("set_local_block: negative count or displacement");
  }
  local_block_ = block;
}

// ---- workload -----------------------------------------------------------------------

std::vector<double> DataRegistry::local_row_nonzeros(const RowBlock& local) const {
  if (local.count < 0 || local.displ < 0 || (rows_ >= 0 && local.count > rows_ - local.displ)) {
    invalid("local_row_nonzeros: block {count " + std::to_string(local.count) + ", displ " +
            std::to_string(local.displ) + "} is not within the " + std::to_string(rows_) +
            " rows of the registered structures");
  }
  std::vector<double> work(static_cast<std::size_t>(local.count), 0.0);
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    const Structure& s = structures_[i];
    if (!s.sparse()) {
      const double per_row = static_cast<double>(row_elements(s));
      for (double& w : work) w += per_row;
      continue;
    }
    const int* ptr = *s.ptr;
    if (local.count > 0 && ptr == nullptr) {
      throw Error(Errc::bad_state, "local_row_nonzeros: the " + std::string(pointers_name(s)) +
                                       " of " + describe(s, i) + " are null");
    }
    // A distributed matrix holds only its block; a replicated one all of it.
    const std::int64_t first = s.scheme == Scheme::distributed ? 0 : local.displ;
    for (std::int64_t k = 0; k < local.count; ++k) {
      work[static_cast<std::size_t>(k)] += ptr[first + k + 1] - ptr[first + k];
    }
  }
  return work;
}

double DataRegistry::bytes_per_row() const {
  double bytes = 0.0;
  for (const Structure& s : structures_) {
    if (s.scheme != Scheme::distributed) continue;
    if (s.sparse()) {
      const double nonzeros = s.size > 0 ? static_cast<double>(s.nnz) / s.size : 0.0;
      bytes += nonzeros * static_cast<double>(s.extent + sizeof(int)) + sizeof(int);
    } else {
      bytes += static_cast<double>(row_elements(s)) * static_cast<double>(s.extent);
    }
  }
  return bytes;
}

void DataRegistry::share_replicated(std::span<const RowBlock> blocks, MPI_Comm comm) {
  // MPI_Bcast counts are int: long ranges go in pieces of max_message_bytes_.
  auto broadcast = [&](void* buffer, std::uint64_t bytes, int root) {
    auto* bytes_at = static_cast<char*>(buffer);
    for (std::uint64_t done = 0; done < bytes;) {
      const std::uint64_t piece = std::min(bytes - done, max_message_bytes_);
      check_mpi(PMPI_Bcast(bytes_at + done, static_cast<int>(piece), MPI_BYTE, root, comm),
                "MPI_Bcast (replicated rows)");
      done += piece;
    }
  };
  for (const Structure& s : structures_) {
    if (s.scheme != Scheme::replicated) continue;
    if (s.sparse()) {
      broadcast(*s.ptr, static_cast<std::uint64_t>(s.size + 1) * sizeof(int), 0);
      broadcast(*s.idx, static_cast<std::uint64_t>(s.nnz) * sizeof(int), 0);
    }
    for (std::size_t owner = 0; owner < blocks.size(); ++owner) {
      const RowBlock& block = blocks[owner];
      // Elements before the block and in it: rows (vector, dense) or nonzeros.
      const std::int64_t first = s.sparse() ? (*s.ptr)[block.displ] : block.displ * row_elements(s);
      const std::int64_t count =
          s.sparse() ? (*s.ptr)[block.displ + block.count] - first : block.count * row_elements(s);
      broadcast(static_cast<char*>(*s.data) + static_cast<std::uint64_t>(first) * s.extent,
                static_cast<std::uint64_t>(count) * s.extent, static_cast<int>(owner));
    }
  }
}

std::vector<double> DataRegistry::local_row_nonzeros() const {
  if (!local_block_) {
    throw Error(Errc::bad_state,
                "local_row_nonzeros: this process's block is not known yet (no redistribution "
                "and no set_local_block)");
  }
  return local_row_nonzeros(*local_block_);
}

// ---- redistribution -----------------------------------------------------------------

std::string DataRegistry::check_local(std::span<const RowBlock> from, std::span<const RowBlock> to,
                                      int rank, int nprocs) const {
  // With nothing registered, the decompositions must still agree with each
  // other: the rows are those the old blocks reach, in whatever rank order.
  std::int64_t rows = rows_;
  if (rows < 0) {
    rows = 0;
    constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max();
    for (const RowBlock& block : from) {
      if (block.count <= 0 || block.displ < 0) continue;  // check_decomposition names them
      rows = std::max(rows, block.count > most - block.displ ? most : block.displ + block.count);
    }
  }
  std::string error = check_decomposition(from, rows, nprocs, "from (the old decomposition)");
  if (error.empty()) error = check_decomposition(to, rows, nprocs, "to (the new decomposition)");
  if (!error.empty()) return error;

  const RowBlock& old_block = from[static_cast<std::size_t>(rank)];
  std::vector<std::pair<const void*, std::size_t>> buffers;  // to catch two structures sharing one
  for (std::size_t i = 0; i < structures_.size(); ++i) {
    const Structure& s = structures_[i];
    const std::string name = describe(s, i);
    const bool distributed = s.scheme == Scheme::distributed;
    if (!s.sparse()) {
      const std::int64_t rows_held = distributed ? old_block.count : s.size;
      if (rows_held > 0 && *s.data == nullptr) {
        return name + ": the data pointer is null on a process that holds " +
               std::to_string(rows_held) + " rows";
      }
      buffers.emplace_back(*s.data, i);
      continue;
    }
    const int* ptr = *s.ptr;
    const std::int64_t rows_held = distributed ? old_block.count : s.size;
    if (ptr == nullptr) {
      if (rows_held > 0) {
        return name + ": the " + pointers_name(s) + " pointer is null on a process that holds " +
               std::to_string(rows_held) + " " + rows_name(s);
      }
    } else {
      error = check_pointers_array(ptr, rows_held, name + ": the " + pointers_name(s));
      if (!error.empty()) return error;
    }
    const std::int64_t held_nnz = ptr == nullptr ? 0 : ptr[rows_held];
    if (!distributed && held_nnz != s.nnz) {
      return name + ": the " + pointers_name(s) + " end at " + std::to_string(held_nnz) +
             " but the matrix was registered with nnz " + std::to_string(s.nnz);
    }
    if (held_nnz > s.nnz) {
      return name + ": this process holds " + std::to_string(held_nnz) +
             " nonzeros, more than the registered nnz " + std::to_string(s.nnz);
    }
    if (held_nnz > 0 && *s.idx == nullptr) {
      return name + ": the " + indices_name(s) + " pointer is null on a process that holds " +
             std::to_string(held_nnz) + " nonzeros";
    }
    if (held_nnz > 0 && *s.data == nullptr) {
      return name + ": the values pointer is null on a process that holds " +
             std::to_string(held_nnz) + " nonzeros";
    }
    buffers.emplace_back(ptr, i);
    buffers.emplace_back(*s.idx, i);
    buffers.emplace_back(*s.data, i);
  }
  // Two structures on one buffer would be moved (and freed) twice.
  std::erase_if(buffers, [](const auto& entry) { return entry.first == nullptr; });
  std::sort(buffers.begin(), buffers.end());
  for (std::size_t k = 1; k < buffers.size(); ++k) {
    if (buffers[k].first == buffers[k - 1].first) {
      const std::size_t a = buffers[k - 1].second, b = buffers[k].second;
      return describe(structures_[a], a) +
             (a == b ? " uses one buffer for two of its arrays"
                     : " and " + describe(structures_[b], b) + " share a buffer");
    }
  }
  return {};
}

namespace {

// One call of DataRegistry::redistribute, in its steps (thesis 4.5, Alg. 4).
// Steps 1-3 check and prepare, each ending in an agreement; nothing has
// changed until step 3 is agreed, so bad input fails on every process with
// every structure as it was. Step 4 moves the rows and installs the blocks.
class Redistribution {
 public:
  Redistribution(std::vector<Structure>& structures, std::span<const RowBlock> from,
                 std::span<const RowBlock> to, MPI_Comm comm, int rank, int nprocs)
      : structures_(structures),
        from_(from),
        to_(to),
        comm_(comm),
        rank_(rank),
        nprocs_(nprocs),
        moves_(structures.size()) {}

  // ---- step 1: what each process can check alone; agreement A ----
  void agree_on_arguments(const std::string& local_error) {
    failure_ = {Errc::invalid_argument, local_error};
    if (!failure_) plan_ = plan_transfers(from_, to_, rank_);
    mode_ = mode_of(plan_);
    agree(comm_, failure_, arguments_signature(), {});
  }

  // ---- step 2: distributed sparse structures: nonzero counts; agreement B ----
  void agree_on_nonzeros() {
    for (std::size_t i = 0; i < structures_.size(); ++i) {
      if (structures_[i].sparse() && structures_[i].scheme == Scheme::distributed) {
        sparse_ids_.push_back(i);
      }
    }
    if (sparse_ids_.empty()) return;
    const std::vector<std::int64_t> incoming = exchange_nonzero_counts();
    std::vector<std::int64_t> held(sparse_ids_.size());  // summed: the global nnz
    for (std::size_t k = 0; k < sparse_ids_.size(); ++k) {
      held[k] = place_sparse_pieces(k, incoming);
    }
    agree(comm_, failure_, 0, held);
    for (std::size_t k = 0; k < sparse_ids_.size(); ++k) {
      const Structure& s = structures_[sparse_ids_[k]];
      if (held[k] != s.nnz) {
        invalid("redistribute: " + describe(s, sparse_ids_[k]) + ": the processes hold " +
                std::to_string(held[k]) + " nonzeros in all, but it was registered with nnz " +
                std::to_string(s.nnz));
      }
    }
  }

  // ---- step 3: memory for the rows that arrive; agreement C ----
  void agree_on_memory() {
    bool distributed = false;
    for (std::size_t i = 0; i < structures_.size(); ++i) {
      if (structures_[i].scheme != Scheme::distributed) continue;
      distributed = true;
      if (mode_ == Mode::fresh || mode_ == Mode::grow) allocate_block(i);
    }
    if (!distributed || !anyone_receives(from_, to_)) return;
    try {
      agree(comm_, failure_, 0, {});
    } catch (...) {
      // Grown arrays stay grown (realloc kept their contents, and their
      // pointers are updated); new ones are given back.
      release_all(moves_);
      throw;
    }
  }

  // ---- step 4: move the rows ----
  RedistributionStats move_rows(std::uint64_t max_message_bytes) {
    if (mode_ == Mode::grow && plan_.old_block.count > 0) make_room_for_growth();
    RedistributionStats stats;
    Exchange exchange(comm_, max_message_bytes);
    for (std::size_t i = 0; i < structures_.size(); ++i) post_rows(exchange, i);
    exchange.start(stats);
    // New arrays: the kept rows are copied while the messages travel.
    if (mode_ == Mode::fresh && plan_.kept.count > 0) copy_kept_rows();
    exchange.finish();
    for (std::size_t i = 0; i < structures_.size(); ++i) {
      if (structures_[i].scheme != Scheme::distributed || mode_ == Mode::unchanged) continue;
      if (mode_ == Mode::shrink) {
        compact_kept_rows(i);
      } else {
        install_block(i);
      }
    }
    return stats;
  }

  [[nodiscard]] const RowBlock& new_block() const { return plan_.new_block; }

 private:
  [[nodiscard]] std::int64_t arguments_signature() const {
    Signature signature;
    signature.add(nprocs_);
    for (const auto blocks : {from_, to_}) {
      signature.add(static_cast<std::int64_t>(blocks.size()));
      for (const RowBlock& block : blocks) {
        signature.add(block.count);
        signature.add(block.displ);
      }
    }
    for (const Structure& s : structures_) {
      signature.add(static_cast<std::int64_t>(s.kind));
      signature.add(static_cast<std::int64_t>(s.scheme));
      signature.add(s.size);
      signature.add(s.nnz);
      signature.add(static_cast<std::int64_t>(s.extent));
      // Replicated sparse values move in place, sized by the local pattern:
      // it must be the same on every process, or messages would not match.
      if (!failure_ && s.sparse() && s.scheme == Scheme::replicated && *s.ptr != nullptr) {
        for (std::int64_t k = 0; k <= s.size; ++k) signature.add((*s.ptr)[k]);
      }
    }
    return signature.value();
  }

  // The new owner of a piece learns its nonzero count from the old owner:
  // incoming[t * n + k] is piece t's count of sparse structure k.
  std::vector<std::int64_t> exchange_nonzero_counts() {
    const std::size_t n = sparse_ids_.size();
    std::vector<std::int64_t> outgoing(plan_.sends.size() * n), incoming(plan_.receives.size() * n);
    for (std::size_t k = 0; k < n; ++k) {
      const int* ptr = *structures_[sparse_ids_[k]].ptr;
      for (std::size_t t = 0; t < plan_.sends.size(); ++t) {
        const std::int64_t first = plan_.sends[t].first - plan_.old_block.displ;
        outgoing[t * n + k] = ptr[first + plan_.sends[t].rows] - ptr[first];
      }
    }
    std::vector<MPI_Request> requests;
    for (std::size_t t = 0; t < plan_.receives.size(); ++t) {
      requests.emplace_back();
      check_mpi(PMPI_Irecv(&incoming[t * n], static_cast<int>(n), MPI_INT64_T,
                           plan_.receives[t].peer, kCountTag, comm_, &requests.back()),
                "MPI_Irecv (redistribution nonzero counts)");
    }
    for (std::size_t t = 0; t < plan_.sends.size(); ++t) {
      requests.emplace_back();
      check_mpi(PMPI_Isend(&outgoing[t * n], static_cast<int>(n), MPI_INT64_T, plan_.sends[t].peer,
                           kCountTag, comm_, &requests.back()),
                "MPI_Isend (redistribution nonzero counts)");
    }
    check_mpi(PMPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall (redistribution nonzero counts)");
    return incoming;
  }

  // Sparse structure k's nonzero offsets of the pieces in the new arrays
  // (they follow row order); returns the nonzeros this process held.
  std::int64_t place_sparse_pieces(std::size_t k, const std::vector<std::int64_t>& incoming) {
    const std::size_t n = sparse_ids_.size(), i = sparse_ids_[k];
    const Structure& s = structures_[i];
    Move& move = moves_[i];
    const int* ptr = *s.ptr;
    move.old_nnz = ptr == nullptr ? 0 : ptr[plan_.old_block.count];
    if (plan_.kept.count > 0) {
      const std::int64_t first = plan_.kept.displ - plan_.old_block.displ;
      move.kept_nnz = ptr[first + plan_.kept.count] - ptr[first];
    }
    std::int64_t offset = 0;
    bool kept_placed = plan_.kept.count == 0;
    for (std::size_t t = 0; t < plan_.receives.size(); ++t) {
      if (!kept_placed && plan_.kept.displ < plan_.receives[t].first) {
        move.kept_offset = offset;
        offset += move.kept_nnz;
        kept_placed = true;
      }
      move.piece_nnz.push_back(incoming[t * n + k]);
      move.piece_offset.push_back(offset);
      offset += incoming[t * n + k];
    }
    if (!kept_placed) {
      move.kept_offset = offset;
      offset += move.kept_nnz;
    }
    move.new_nnz = offset;
    if (!failure_ && move.new_nnz > std::numeric_limits<int>::max()) {
      failure_ = {Errc::invalid_argument,
                  describe(s, i) + ": the new block would hold " + std::to_string(move.new_nnz) +
                      " nonzeros, more than its int " + pointers_name(s) + " can index"};
    }
    return move.old_nnz;
  }

  void allocate_block(std::size_t i) {
    const Structure& s = structures_[i];
    Move& move = moves_[i];
    const std::int64_t rows = plan_.new_block.count;
    bool ok = true;
    if (!s.sparse()) {
      const std::uint64_t bytes =
          static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(row_elements(s)) * s.extent;
      ok = mode_ == Mode::fresh ? allocate(&move.data, bytes) : grow(s.data, bytes);
    } else {
      const std::uint64_t ptr_bytes = (rows + 1) * sizeof(int);
      const std::uint64_t idx_bytes = move.new_nnz * sizeof(int);
      const std::uint64_t value_bytes = move.new_nnz * s.extent;
      ok = mode_ == Mode::fresh
               ? allocate(&move.ptr, ptr_bytes) && allocate(&move.idx, idx_bytes) &&
                     allocate(&move.data, value_bytes)
               : grow(s.ptr, ptr_bytes) && grow(s.idx, idx_bytes) && grow(s.data, value_bytes);
    }
    if (!ok && !failure_) {
      failure_ = {Errc::out_of_memory, "out of memory for the new block of " + describe(s, i) +
                                           " (" + std::to_string(rows) + " " + rows_name(s) + ")"};
    }
  }

  // Growing in place: the rows held so far move to where they belong in
  // the new block, before anything arrives around them.
  void make_room_for_growth() {
    const std::int64_t shift = plan_.old_block.displ - plan_.new_block.displ;  // >= 0: old ⊆ new
    const std::int64_t rows = plan_.old_block.count;
    for (std::size_t i = 0; i < structures_.size(); ++i) {
      const Structure& s = structures_[i];
      const Move& move = moves_[i];
      if (s.scheme != Scheme::distributed) continue;
      if (!s.sparse()) {
        const std::uint64_t row_bytes = static_cast<std::uint64_t>(row_elements(s)) * s.extent;
        char* data = static_cast<char*>(*s.data);
        if (shift > 0) std::memmove(data + shift * row_bytes, data, rows * row_bytes);
        continue;
      }
      if (shift > 0) std::memmove(*s.ptr + shift + 1, *s.ptr + 1, rows * sizeof(int));
      if (move.kept_offset > 0 && move.kept_nnz > 0) {
        std::memmove(*s.idx + move.kept_offset, *s.idx, move.kept_nnz * sizeof(int));
        char* values = static_cast<char*>(*s.data);
        std::memmove(values + move.kept_offset * s.extent, values, move.kept_nnz * s.extent);
      }
    }
  }

  void post_rows(Exchange& exchange, std::size_t i) {
    const Structure& s = structures_[i];
    if (!s.sparse()) {
      post_dense_rows(exchange, s, moves_[i]);
    } else if (s.scheme == Scheme::replicated) {
      // The pattern is the same everywhere: only the values of the rows move.
      const int* ptr = *s.ptr;
      char* values = static_cast<char*>(*s.data);
      for (const Transfer& t : plan_.receives) {
        exchange.receive(t.peer, values + ptr[t.first] * s.extent,
                         (ptr[t.first + t.rows] - ptr[t.first]) * s.extent);
      }
      for (const Transfer& t : plan_.sends) {
        exchange.send(t.peer, values + ptr[t.first] * s.extent,
                      (ptr[t.first + t.rows] - ptr[t.first]) * s.extent);
      }
    } else {
      post_sparse_pieces(exchange, s, moves_[i]);
    }
  }

  void post_dense_rows(Exchange& exchange, const Structure& s, const Move& move) {
    const std::uint64_t row_bytes = static_cast<std::uint64_t>(row_elements(s)) * s.extent;
    char* old_data = static_cast<char*>(*s.data);
    // Replicated: every process holds all rows, in place; distributed: its block.
    const bool replicated = s.scheme == Scheme::replicated;
    const std::int64_t old_first = replicated ? 0 : plan_.old_block.displ;
    const std::int64_t new_first = replicated ? 0 : plan_.new_block.displ;
    char* new_data = replicated || mode_ != Mode::fresh ? old_data : move.data;
    for (const Transfer& t : plan_.receives) {
      exchange.receive(t.peer, new_data + (t.first - new_first) * row_bytes, t.rows * row_bytes);
    }
    for (const Transfer& t : plan_.sends) {
      exchange.send(t.peer, old_data + (t.first - old_first) * row_bytes, t.rows * row_bytes);
    }
  }

  // Distributed sparse: per piece its row ends (the sender's own ia
  // entries, renumbered by rebase() on arrival), indices and values.
  void post_sparse_pieces(Exchange& exchange, const Structure& s, const Move& move) {
    int* new_ptr = mode_ == Mode::fresh ? move.ptr : *s.ptr;
    int* new_idx = mode_ == Mode::fresh ? move.idx : *s.idx;
    char* new_values = mode_ == Mode::fresh ? move.data : static_cast<char*>(*s.data);
    for (std::size_t t = 0; t < plan_.receives.size(); ++t) {
      const Transfer& piece = plan_.receives[t];
      const std::int64_t first = piece.first - plan_.new_block.displ;
      const std::int64_t nnz = move.piece_nnz[t], offset = move.piece_offset[t];
      exchange.receive(piece.peer, new_ptr + first + 1, piece.rows * sizeof(int));
      exchange.receive(piece.peer, new_idx + offset, nnz * sizeof(int));
      exchange.receive(piece.peer, new_values + offset * s.extent, nnz * s.extent);
    }
    const int* ptr = *s.ptr;
    for (const Transfer& piece : plan_.sends) {
      const std::int64_t first = piece.first - plan_.old_block.displ;
      const std::int64_t begin = ptr[first], nnz = ptr[first + piece.rows] - begin;
      exchange.send(piece.peer, ptr + first + 1, piece.rows * sizeof(int));
      exchange.send(piece.peer, *s.idx + begin, nnz * sizeof(int));
      exchange.send(piece.peer, static_cast<char*>(*s.data) + begin * s.extent, nnz * s.extent);
    }
  }

  [[nodiscard]] std::int64_t kept_old_first() const {
    return plan_.kept.displ - plan_.old_block.displ;
  }
  [[nodiscard]] std::int64_t kept_new_first() const {
    return plan_.kept.displ - plan_.new_block.displ;
  }

  void copy_kept_rows() {
    for (std::size_t i = 0; i < structures_.size(); ++i) {
      const Structure& s = structures_[i];
      const Move& move = moves_[i];
      if (s.scheme != Scheme::distributed) continue;
      if (!s.sparse()) {
        const std::uint64_t row_bytes = static_cast<std::uint64_t>(row_elements(s)) * s.extent;
        std::memcpy(move.data + kept_new_first() * row_bytes,
                    static_cast<const char*>(*s.data) + kept_old_first() * row_bytes,
                    plan_.kept.count * row_bytes);
        continue;
      }
      const int* ptr = *s.ptr;
      const std::int64_t begin = ptr[kept_old_first()];
      std::memcpy(move.ptr + kept_new_first() + 1, ptr + kept_old_first() + 1,
                  plan_.kept.count * sizeof(int));
      if (move.kept_nnz > 0) {
        std::memcpy(move.idx + move.kept_offset, *s.idx + begin, move.kept_nnz * sizeof(int));
        std::memcpy(move.data + move.kept_offset * s.extent,
                    static_cast<const char*>(*s.data) + begin * s.extent, move.kept_nnz * s.extent);
      }
    }
  }

  // Mode::fresh and Mode::grow: the received pieces' row ends are
  // renumbered; fresh arrays replace the old ones.
  void install_block(std::size_t i) {
    const Structure& s = structures_[i];
    Move& move = moves_[i];
    if (s.sparse()) {
      int* ptr = mode_ == Mode::fresh ? move.ptr : *s.ptr;
      ptr[0] = 0;
      for (std::size_t t = 0; t < plan_.receives.size(); ++t) {
        rebase(ptr, plan_.receives[t].first - plan_.new_block.displ, plan_.receives[t].rows,
               move.piece_offset[t] + move.piece_nnz[t]);
      }
      rebase(ptr, kept_new_first(), plan_.kept.count, move.kept_offset + move.kept_nnz);
    }
    if (mode_ != Mode::fresh) return;
    if (s.sparse()) {
      std::free(*s.ptr);
      std::free(*s.idx);
      *s.ptr = move.ptr;
      *s.idx = move.idx;
    }
    std::free(*s.data);
    *s.data = move.data;
    move = Move{};
  }

  // Mode::shrink: the new block is the kept rows (or nothing); they move
  // to the front, now that the rows around them are sent.
  void compact_kept_rows(std::size_t i) {
    const Structure& s = structures_[i];
    const Move& move = moves_[i];
    const std::int64_t kept = plan_.kept.count, first = kept_old_first();
    const std::int64_t old_rows = plan_.old_block.count, new_rows = plan_.new_block.count;
    if (!s.sparse()) {
      const std::uint64_t row_bytes = static_cast<std::uint64_t>(row_elements(s)) * s.extent;
      char* data = static_cast<char*>(*s.data);
      if (kept > 0 && first > 0) std::memmove(data, data + first * row_bytes, kept * row_bytes);
      shrink(s.data, new_rows * row_bytes, old_rows * row_bytes);
      return;
    }
    int* ptr = *s.ptr;
    const std::int64_t begin = kept > 0 ? ptr[first] : 0;
    if (kept > 0 && first > 0) {
      std::memmove(ptr, ptr + first, (kept + 1) * sizeof(int));
      for (std::int64_t k = 0; k <= kept; ++k) ptr[k] = static_cast<int>(ptr[k] - begin);
      if (move.kept_nnz > 0 && begin > 0) {
        std::memmove(*s.idx, *s.idx + begin, move.kept_nnz * sizeof(int));
        char* values = static_cast<char*>(*s.data);
        std::memmove(values, values + begin * s.extent, move.kept_nnz * s.extent);
      }
    }
    ptr[0] = 0;
    shrink(s.ptr, (new_rows + 1) * sizeof(int), (old_rows + 1) * sizeof(int));
    shrink(s.idx, move.kept_nnz * sizeof(int), move.old_nnz * sizeof(int));
    shrink(s.data, move.kept_nnz * s.extent, move.old_nnz * s.extent);
  }

  std::vector<Structure>& structures_;
  std::span<const RowBlock> from_, to_;
  MPI_Comm comm_;
  int rank_, nprocs_;
  TransferPlan plan_;
  Mode mode_ = Mode::unchanged;
  std::vector<Move> moves_;
  Failure failure_;
  std::vector<std::size_t> sparse_ids_;  // distributed sparse structures
};

}  // namespace

RedistributionStats DataRegistry::redistribute(std::span<const RowBlock> from,
                                               std::span<const RowBlock> to, MPI_Comm comm) {
  const double start = wall_seconds();
  if (comm == MPI_COMM_NULL) invalid("redistribute: the communicator is MPI_COMM_NULL");
  int inter = 0, rank = 0, nprocs = 0;
  check_mpi(PMPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  if (inter != 0) invalid("redistribute: the communicator must be an intracommunicator");
  check_mpi(PMPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(PMPI_Comm_size(comm, &nprocs), "MPI_Comm_size");

  Redistribution redistribution(structures_, from, to, comm, rank, nprocs);
  redistribution.agree_on_arguments(check_local(from, to, rank, nprocs));
  redistribution.agree_on_nonzeros();
  redistribution.agree_on_memory();
  RedistributionStats stats = redistribution.move_rows(max_message_bytes_);
  local_block_ = redistribution.new_block();
  stats.seconds = wall_seconds() - start;
  return stats;
}

DecompositionChange gather_decomposition_change(const RowBlock& old_block,
                                                const RowBlock& new_block, MPI_Comm comm) {
  int nprocs = 0;
  check_mpi(PMPI_Comm_size(comm, &nprocs), "MPI_Comm_size");
  const std::int64_t mine[4] = {old_block.count, old_block.displ, new_block.count, new_block.displ};
  std::vector<std::int64_t> all(4 * static_cast<std::size_t>(nprocs));
  check_mpi(PMPI_Allgather(mine, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, comm),
            "MPI_Allgather (decompositions)");
  DecompositionChange change;
  for (std::size_t p = 0; p < static_cast<std::size_t>(nprocs); ++p) {
    change.from.push_back({all[4 * p], all[4 * p + 1]});
    change.to.push_back({all[4 * p + 2], all[4 * p + 3]});
  }
  return change;
}

}  // namespace flexmpi
