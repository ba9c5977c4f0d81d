// flexmpi-calibrate's redistribution phase (main.cpp): the latency and the
// seconds per byte of XMPI_Redistribute_data, which the reconfiguration cost
// of the model prices (thesis 6.3.1).
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "calibrate.hpp"
#include "flexmpi.h"
#include "model/reconfiguration_cost.hpp"
#include "util/statistics.hpp"

namespace flexmpi_calibrate {

void calibrate_redistribution(flexmpi::MachineProfile& profile, bool quick) {
  const int rows = quick ? (1 << 18) : (1 << 21);  // doubles: 2 MiB / 16 MiB
  int count = 0, displ = 0;
  check(XMPI_Get_wsize(rank, size, rows, &count, &displ), "XMPI_Get_wsize");
  double* x = static_cast<double*>(std::malloc(sizeof(double) * std::max(count, 1)));
  for (int i = 0; i < count; ++i) x[i] = displ + i;
  check(XMPI_Register_vector(&x, rows, MPI_DOUBLE, XMPI_DISTRIBUTED), "XMPI_Register_vector");
  const flexmpi::Decomposition block = flexmpi::block_decomposition(rows, size);
  const std::vector<int> moves =
      quick ? std::vector<int>{1024, 65536} : std::vector<int>{1024, 16384, 131072, 524288};
  const std::vector<flexmpi::StructureShape> shape = {
      {flexmpi::StructureKind::vector, flexmpi::Scheme::distributed, rows, 0, sizeof(double)}};
  flexmpi::MachineProfile unit = profile;  // prices 1 s per byte: gives the busiest bytes
  unit.redistribution_latency = 0;
  unit.redistribution_seconds_per_byte = 1;
  std::vector<double> bytes, seconds;
  for (int k : moves) {
    // Rank 0 takes k rows from the others: every block shifts by k.
    flexmpi::Decomposition moved = block;
    moved[0].count += k;
    moved.back().count -= k;
    for (int r = 1; r < size; ++r) moved[r].displ += k;
    const double busiest =
        flexmpi::redistribution_cost_planned(shape, block, moved, unit).busiest_bytes;
    std::vector<double> samples;
    for (int rep = 0; rep < (quick ? 3 : 8); ++rep) {
      for (int direction = 0; direction < 2; ++direction) {
        const auto& from = direction == 0 ? block : moved;
        const auto& to = direction == 0 ? moved : block;
        MPI_Barrier(XMPI_COMM_WORLD);
        const double start = MPI_Wtime();
        check(XMPI_Redistribute_data(int(from[rank].count), int(from[rank].displ),
                                     int(to[rank].count), int(to[rank].displ)),
              "XMPI_Redistribute_data");
        double t = MPI_Wtime() - start, slowest = 0;
        MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, XMPI_COMM_WORLD);
        samples.push_back(slowest);
      }
    }
    bytes.push_back(busiest);
    seconds.push_back(flexmpi::median(samples));
    progress("[redistribution] %d rows (%.0f KiB busiest process): %.3f ms", k, busiest / 1024,
             1e3 * seconds.back());
  }
  // Latency from the smallest move (its bytes cost next to nothing), the price
  // per byte from the larger ones (a least-squares line lets the largest,
  // noisiest point set the intercept).
  const double latency = seconds.front();
  std::vector<double> prices;
  for (std::size_t i = 1; i < bytes.size(); ++i) {
    prices.push_back(std::max(0.0, seconds[i] - latency) / bytes[i]);
  }
  const double price = flexmpi::median(prices);
  profile.redistribution_seconds_per_byte = price;
  profile.redistribution_latency = latency;
  progress("[redistribution]   latency %.3g ms, %.3g ns/B", 1e3 * latency, 1e9 * price);
}

}  // namespace flexmpi_calibrate
