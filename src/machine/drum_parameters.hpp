// DRUM parameters (thesis A.2, Table A.1, plus the communication weight and the
// choice of formulas of 3.1.2): one descriptor per parameter (name, type,
// default, help, setter), names and values case-insensitive, INT parameters
// also "TRUE"/"FALSE", as DRUM_setParam describes.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "machine/powers.hpp"

namespace flexmpi::machine {

/// The settings of one machine model (the fields of DRUM_machineModel, A.1).
struct DrumParameters {
  /// MONITORING_FREQUENCY: time between two samples. Table A.1 and the struct
  /// description count it in seconds; DRUM_setMonitoringFrequency in tenths of
  /// a second. Both are kept: the parameter in seconds, the call in tenths.
  std::chrono::milliseconds monitoring_period{1000};
  bool use_dynamic_monitoring = true;        ///< USE_DYNAMIC_MONITORING
  bool use_snmp = false;                     ///< USE_SNMP: accepted, not built (warning)
  bool use_kstat = false;                    ///< USE_KSTAT: Solaris only (warning)
  bool monitor_memory = false;               ///< MONITOR_MEMORY
  bool use_flat_model = true;                ///< USE_FLAT_MODEL
  CommunicationWeight communication_weight;  ///< USE_NETWORK_POWERS + COMMUNICATION_WEIGHT
  CommunicationPowerForm communication_power = CommunicationPowerForm::available_bandwidth;
  bool early_processing_power = false;         ///< PROCESSING_POWER=EARLY (3.1.2.1)
  int debug_level = 0;                         ///< DEBUG_LEVEL, 0 (silent) .. 5 (all)
  std::string xml_topology_file = "drum.xml";  ///< XML_TOPOLOGY_FILE
};

/// Sets one parameter. Returns a warning ("" if none) for a value accepted
/// but not honoured (USE_SNMP=1, USE_KSTAT=1). Throws Error(invalid_argument)
/// naming the parameter and the values expected, leaving `parameters`
/// unchanged, for an unknown name or a bad value.
std::string set_parameter(DrumParameters& parameters, std::string_view name,
                          std::string_view value);

/// The "PARAM VALUE" pairs of a parameter file, one per line; blank lines and
/// '#' comments are skipped. Throws Error(invalid_argument) naming
/// `source`:line for a line that is not two words.
std::vector<std::pair<std::string, std::string>> parse_parameter_file(std::string_view text,
                                                                      std::string_view source);

}  // namespace flexmpi::machine
