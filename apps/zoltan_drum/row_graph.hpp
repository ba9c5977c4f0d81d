// The rows of a sparse matrix as the objects of a Zoltan graph: row i is
// vertex i, its off-diagonal nonzeros are its edges. Each process owns some
// rows; Zoltan reads them through the callbacks and moves them with its own
// migration (pack, unpack, and a mid-migration step that drops what left).
#pragma once

#include <zoltan.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace flexmpi_zoltan_drum {

/// One row: its nonzeros, by column (0-based).
struct Row {
  std::vector<int> columns;
  std::vector<double> values;
};

class RowGraph {
 public:
  /// Collective: every process reads the Matrix Market file and keeps an
  /// equal block of consecutive rows.
  explicit RowGraph(const std::string& matrix_file);

  [[nodiscard]] long long local_rows() const { return static_cast<long long>(rows_.size()); }
  [[nodiscard]] long long global_rows() const { return size_; }
  /// Sum modulo 2^64 of a hash of each owned row (its number, columns and
  /// values): summed over the processes, it does not depend on who owns what.
  [[nodiscard]] std::uint64_t checksum() const;
  /// Computes y = A x on the owned rows again and again for `seconds`: the
  /// work of the phase DRUM monitors, on a processing element of relative
  /// `speed` (emulate_speed).
  void multiply_for(double seconds, double speed) const;

  [[nodiscard]] const std::map<ZOLTAN_ID_TYPE, Row>& rows() const { return rows_; }
  [[nodiscard]] std::map<ZOLTAN_ID_TYPE, Row>& rows() { return rows_; }
  /// The process that owned `row` before any migration (the initial block).
  [[nodiscard]] int initial_owner(ZOLTAN_ID_TYPE row) const;

 private:
  long long size_ = 0;
  int processes_ = 1;
  std::map<ZOLTAN_ID_TYPE, Row> rows_;
};

/// Sleep-mode emulation (docs/reference/behaviour.md, Emulation) of a slower processing element:
/// after computing for `computed` seconds at full speed, sleeps computed x (1/speed - 1), so that
/// emulated hosts take their time without competing for this machine's cores. speed >= 1: no
/// emulation.
void emulate_speed(double computed, double speed);

/// Registers the query and migration callbacks of `graph` on `zz`.
void register_callbacks(Zoltan_Struct* zz, RowGraph& graph);

}  // namespace flexmpi_zoltan_drum
