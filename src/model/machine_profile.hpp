// The machine profile (thesis 6.3.1): the measured parameters the prediction
// model prices with -- Hockney alpha and beta within a node and between
// nodes, per message-size band (comm_model.hpp, LinkBand), gamma for
// reductions (Table 6.7), per-collective corrections for the
// linked MPI, the cost of creating and of removing one process (Table 6.6,
// eq. 5.6-5.7) and the price of redistributing data (5.3.4).
// `flexmpi-calibrate` writes it; FLEXMPI_MACHINE_PROFILE names it.
//
// JSON (every key required unless marked optional; seconds and bytes). Each
// number has a range, refused otherwise with the range in the message:
// alpha 0..1 s; beta, gamma, seconds_per_byte 0..1e-3 s/B; up_to 0..1e15 B;
// points' bytes > 0 and <= 1e15, scale 0..1e6; processes an integer from 1
// (2 for a collective fit) to 1048576; seconds_per_process and latency
// 0..3600 s.
//   {
//     "format": "flexmpi-machine-profile", "version": 2,
//     "library": "Open MPI v4.1.4, ...",             optional: MPI_Get_library_version
//     "host": "vm", "created": "2025-...",           optional, informative
//     "network": {
//       "intra_node": {"alpha": 4e-7, "beta": 1.5e-10,   one pair for every size (the
//                                                    thesis's Hockney model), and
//                      "bands": [{"up_to": 4096, "alpha": 4e-7, "beta": 1e-10},
//                                {"up_to": 1e6, "alpha": 2e-6, "beta": 1e-10}, ...]},
//                                                    the bands, up_to increasing (the last
//                                                    band takes any larger message)
//       "inter_node": {... the same keys ...},
//       "inter_node_measured": false,                optional: false = copy of intra_node
//       "gamma": 5e-10
//     },
//     "collectives": {"MPI_Bcast": [{"processes": 2,
//                                    "points": [{"bytes": 8, "scale": 1.2}, ...]},
//                                   {"processes": 4, ...}], ...},
//                                                    optional: per-collective fits (measured
//                                                    / modelled, comm_model.hpp) per calibrated
//                                                    communicator size, increasing; valid for
//                                                    "library" only
//     "process": {
//       "spawn":  [{"processes": 1, "seconds_per_process": 0.27}, ...],
//       "remove": [{"processes": 1, "seconds_per_process": 0.0012}, ...]
//     },                                             one point or more: seconds per process
//                                                    when that many are spawned/removed at once
//     "redistribution": {"latency": 1e-4, "seconds_per_byte": 1e-9}
//   }
// Version 1 (one alpha/beta per link, latency/bandwidth-scale fits) is refused
// with a message that asks for a new calibration.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "model/comm_model.hpp"

namespace flexmpi {

/// Latency and transfer time of one kind of link.
struct LinkParameters {
  double alpha = 0.0;           ///< seconds: one Hockney pair for every size
  double beta = 0.0;            ///< seconds per byte
  std::vector<LinkBand> bands;  ///< per message-size band; empty: {alpha, beta}
};

/// Cost per process when `processes` are spawned (or removed) in one operation.
struct PerProcessCost {
  int processes = 1;
  double seconds_per_process = 0.0;
};

/// Everything the model needs to know about the machine.
struct MachineProfile {
  std::string source;   ///< the file it was read from, or "defaults"
  std::string library;  ///< MPI_Get_library_version of the calibration ("" unknown)
  LinkParameters intra_node;
  LinkParameters inter_node;
  bool inter_node_measured = false;              ///< false: no second host, inter_node = intra_node
  double gamma = 0.0;                            ///< seconds per byte reduced
  CollectiveFits collectives;                    ///< per-collective corrections (may be empty)
  std::vector<PerProcessCost> spawn;             ///< sorted by processes, at least one point
  std::vector<PerProcessCost> remove;            ///< sorted by processes, at least one point
  double redistribution_latency = 0.0;           ///< seconds per redistribution
  double redistribution_seconds_per_byte = 0.0;  ///< busiest process, sent + received

  /// The Hockney parameters of a communicator within one node (false) or
  /// spanning nodes (true).
  [[nodiscard]] Hockney network(bool across_nodes) const;

  /// The link within one node (false) or across nodes (true), by band, with gamma.
  [[nodiscard]] PiecewiseLink link(bool across_nodes) const;

  /// The per-collective fits if they were measured with the library family of
  /// `running` (fits of another library are meaningless), else none.
  [[nodiscard]] CollectiveFits fits_for(MpiLibrary running) const;

  /// Measured on the 2-vCPU development VM (Debian 12, Open MPI 4.1.4, shared
  /// memory, docs/results.md "The prediction model"):
  /// see machine_profile.cpp for the values. source = "defaults".
  static MachineProfile defaults();

  /// The JSON document the loader reads (format above).
  [[nodiscard]] nlohmann::json to_json() const;
};

/// Reads and validates a profile. Throws flexmpi::Error (bad_config) whose
/// message names `path` and, where one is at fault, the key: missing or
/// unreadable file, bad JSON, missing key, wrong type, a value out of its
/// range (above) or not finite, unknown collective name, empty cost table.
MachineProfile load_machine_profile(const std::string& path);
/// FLEXMPI_MACHINE_PROFILE's profile: the file's, or the defaults when `path` is empty.
MachineProfile machine_profile_or_defaults(const std::string& path);

/// The same validation on a parsed document; `source` names it in messages.
MachineProfile parse_machine_profile(const nlohmann::json& document, std::string_view source);

/// Writes profile.to_json() to `path`. Throws flexmpi::Error naming the path.
void save_machine_profile(const MachineProfile& profile, const std::string& path);

}  // namespace flexmpi
