// The C API of include/flexmpi/drum.h (DRUM thesis A.2): each function checks
// its arguments and forwards to DrumRuntime; drum_guarded() turns warnings
// and exceptions into DRUM_* codes with a message on stderr (capi/guarded.hpp),
// so no exception crosses extern "C" and no failure stops the program.
#include <cstdio>
#include <string>

#include "capi/guarded.hpp"
#include "flexmpi/drum.h"
#include "flexmpi/error.hpp"
#include "machine/drum_runtime.hpp"

struct DRUM_machineModel_struct {
  flexmpi::machine::DrumRuntime runtime;
};

namespace {

void report(const char* kind, const char* function, const std::string& message) {
  std::fprintf(stderr, "DRUM %s: %s: %s\n", kind, function, message.c_str());
}

/// Runs `body`, which returns a warning or "", through capi::guarded. An
/// Error(invalid_argument) (bad input the model survives) gives
/// `bad_input_code`; running out of memory DRUM_MEMERR; any other failure
/// DRUM_FATAL. Every failure and warning is reported on stderr.
template <class Body>
int drum_guarded(const char* function, DRUM_machineModel* dmm, Body&& body,
                 int bad_input_code = DRUM_FATAL) noexcept {
  if (dmm == nullptr) {
    report("error", function, "the machine model is NULL");
    return DRUM_FATAL;
  }
  return flexmpi::capi::guarded(
      [&]() -> int {
        const std::string warning = body(dmm->runtime);
        if (warning.empty()) return DRUM_OK;
        report("warning", function, warning);
        return DRUM_WARN;
      },
      [&](flexmpi::Errc code, const char* message) -> int {
        const bool bad_input = code == flexmpi::Errc::invalid_argument;
        report(bad_input && bad_input_code == DRUM_WARN ? "warning" : "error", function, message);
        if (code == flexmpi::Errc::out_of_memory) return DRUM_MEMERR;
        return bad_input ? bad_input_code : DRUM_FATAL;
      });
}

}  // namespace

extern "C" {

DRUM_machineModel* DRUM_createMachineModel(MPI_Comm comm, int debug_level) {
  return flexmpi::capi::guarded(
      [&] { return new DRUM_machineModel{flexmpi::machine::DrumRuntime(comm, debug_level)}; },
      [](flexmpi::Errc, const char* message) -> DRUM_machineModel* {
        report("error", "DRUM_createMachineModel", message);
        return nullptr;
      });
}

int DRUM_initMachineModel(DRUM_machineModel* dmm) {
  return drum_guarded("DRUM_initMachineModel", dmm, [](auto& model) { return model.init(); });
}

int DRUM_deleteMachineModel(DRUM_machineModel* dmm) {
  if (dmm == nullptr) return DRUM_OK;
  delete dmm;
  return DRUM_OK;
}

void DRUM_printMachineModel(DRUM_machineModel* dmm, FILE* out) {
  drum_guarded("DRUM_printMachineModel", dmm, [out](auto& model) {
    model.print(out);
    return std::string();
  });
}

int DRUM_setMonitoringFrequency(DRUM_machineModel* dmm, int tenths) {
  return drum_guarded(
      "DRUM_setMonitoringFrequency", dmm,
      [tenths](auto& model) {
        model.set_monitoring_frequency_tenths(tenths);
        return std::string();
      },
      DRUM_WARN);
}

int DRUM_startMonitoring(DRUM_machineModel* dmm) {
  return drum_guarded("DRUM_startMonitoring", dmm,
                      [](auto& model) { return model.start_monitoring(); });
}

int DRUM_stopMonitoring(DRUM_machineModel* dmm) {
  return drum_guarded("DRUM_stopMonitoring", dmm, [](auto& model) {
    model.stop_monitoring();
    return std::string();
  });
}

int DRUM_computePowers(DRUM_machineModel* dmm) {
  return drum_guarded("DRUM_computePowers", dmm, [](auto& model) {
    model.compute_powers();
    return std::string();
  });
}

float DRUM_getLocalPartSize(DRUM_machineModel* dmm, int* ierr) {
  double size = 0;
  const int code = drum_guarded("DRUM_getLocalPartSize", dmm, [&size](auto& model) {
    size = model.local_part_size();
    return std::string();
  });
  if (ierr != nullptr) *ierr = code;
  return static_cast<float>(size);
}

int DRUM_setParam(DRUM_machineModel* dmm, const char* param, const char* value) {
  return drum_guarded(
      "DRUM_setParam", dmm,
      [param, value](auto& model) {
        if (param == nullptr || value == nullptr) {
          throw flexmpi::Error(flexmpi::Errc::invalid_argument, "param or value is NULL");
        }
        return model.set_parameter(param, value);
      },
      DRUM_WARN);
}

int DRUM_readParamFile(DRUM_machineModel* dmm, const char* file) {
  return drum_guarded(
      "DRUM_readParamFile", dmm,
      [file](auto& model) {
        if (file == nullptr) throw flexmpi::Error(flexmpi::Errc::bad_config, "file is NULL");
        return model.read_parameter_file(file);
      },
      DRUM_WARN);
}

}  // extern "C"
