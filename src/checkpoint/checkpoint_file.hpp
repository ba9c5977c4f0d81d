// The checkpoint file (docs/reference/formats.md, "Checkpoint file"): one
// parallel HDF5 file that every process writes its rows into, collectively,
// with every dataset indexed by global row, so that any number of processes
// can read it back and h5dump or h5py can look inside.
//
//   /metadata                  a JSON string: format and version, program,
//                              next iteration, rows, the writers' blocks,
//                              speeds and hosts, each structure's kind,
//                              sizes, element type and checksums, the records
//   /structures/<i>/data       vector [rows], dense [rows, row length]
//   /structures/<i>/row_offsets  CSR/CSC [rows + 1] int64, global offsets
//   /structures/<i>/indices    [nnz] int32 (global column/row indices)
//   /structures/<i>/values     [nnz]
//   /records/<name>            [count] (rank 0's copy)
//
// Elements are stored as HDF5 numbers of MPI's named types (base/element_type)
// and as opaque bytes of their extent otherwise. The metadata is written
// last: a file without it was not finished. Each dataset's checksum
// (checksum.hpp) is verified whenever it is read.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "base/element_type.hpp"
#include "base/row_block.hpp"
#include "redistribution/data_registry.hpp"
#include "redistribution/record_registry.hpp"

namespace flexmpi::checkpoint {

/// The version this flexmpi writes; it reads this one and older.
inline constexpr int kFormatVersion = 1;

/// What the file says of one registered structure.
struct SavedStructure {
  std::string kind;    ///< vector, dense, csr, csc
  std::string scheme;  ///< as registered by the writer (a restart may register another)
  std::int64_t size = 0;
  std::int64_t nnz = 0;  ///< sparse: nonzeros; dense: elements; vector: size
  std::string element;
  std::uint64_t element_bytes = 0;
};

/// The metadata of a checkpoint, without the data.
struct Header {
  int format_version = kFormatVersion;
  std::string program;              ///< executable name of the writer
  std::int64_t next_iteration = 0;  ///< where a restart resumes
  std::int64_t rows = -1;           ///< the decomposition's rows (-1: no data registered)
  Decomposition blocks;             ///< the writers' blocks, by rank
  std::vector<double> speeds;       ///< the writers' last measured speeds (empty: none yet)
  std::vector<std::string> hosts;   ///< the writers' host names, by rank
  std::vector<SavedStructure> structures;
  std::vector<RecordShape> records;
  double unix_time = 0.0;
  nlohmann::json checksums;  ///< per structure (array of objects), per record (object)
};

/// What write_file is given.
struct Snapshot {
  std::string program;
  std::int64_t next_iteration = 0;
  std::int64_t rows = -1;
  Decomposition blocks;  ///< the current decomposition (empty: nothing registered)
  std::vector<double> speeds;
  std::vector<std::string> hosts;
  std::span<const detail::Structure> structures;
  std::span<const Record> records;
};

/// About how many bytes the file of `snapshot` takes (data, row offsets,
/// records, and HDF5's own structures): what must be free to write it.
[[nodiscard]] std::uint64_t file_bytes(const Snapshot& snapshot);

/// Writes `snapshot` into a new file at `path` (replacing any file there).
/// Collective over comm, whose ranks own snapshot.blocks. Returns the bytes
/// this process wrote. Throws Error(io_failure) naming the path and the
/// problem (HDF5's and the system's words), on every process.
std::uint64_t write_file(const std::string& path, const Snapshot& snapshot, MPI_Comm comm);

/// Reads and checks the metadata of the file at `path` (one process, no
/// MPI-IO). Throws Error(io_failure) naming the path: not a file, not
/// readable, truncated, not a flexmpi checkpoint, unfinished, written by a
/// newer format.
Header read_header(const std::string& path);

/// Empty if the registered structures and records are those of the file
/// (kinds, sizes, element types, names, in order), else what differs.
std::string compare_with_registered(const Header& header,
                                    std::span<const detail::Structure> structures,
                                    std::span<const Record> records);

/// Fills every structure with the rows of `own` (all rows where replicated)
/// and every record, from the file, and verifies the checksums. Collective
/// over comm, whose ranks own `blocks`. Distributed sparse arrays are
/// reallocated to the block's nonzeros. Throws Error(io_failure) on a read
/// failure or a checksum mismatch (data may then be partly overwritten).
void read_data(const std::string& path, const Header& header,
               std::span<detail::Structure> structures, std::span<const Record> records,
               const Decomposition& blocks, MPI_Comm comm);

}  // namespace flexmpi::checkpoint
