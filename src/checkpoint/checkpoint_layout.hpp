// What the checkpoint file's writer and reader agree on (checkpoint_file.hpp):
// the format's name, how a structure's kind and scheme are written, the shape
// of its rows, which process writes the row offsets' end, and how the
// processes' checksum parts become the dataset's checksum.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/row_block.hpp"
#include "checkpoint/checkpoint_hdf5.hpp"
#include "redistribution/data_registry.hpp"

namespace flexmpi::checkpoint {

inline constexpr const char* kFormatName = "flexmpi checkpoint";

std::string kind_name(detail::Kind kind);

std::string scheme_name(Scheme scheme);

// Vectors and dense matrices: rows of row_length elements.
Shape row_shape(const detail::Structure& s);

// Whether this process's block holds the last row, whose end it writes
// (rank 0 without rows at all).
bool owns_end(const RowBlock& own, std::int64_t rows, int rank);

int comm_rank(MPI_Comm comm);

// The checksum parts of every process summed, in the same nested order. Collective.
void sum_checksums(nlohmann::json& parts, MPI_Comm comm);

}  // namespace flexmpi::checkpoint
