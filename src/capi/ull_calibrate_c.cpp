// The ULL calibrating API (include/ull_calibrate.h): checks what C can get
// wrong (null pointers, the section value), manages the C arrays of
// iteration 0 and forwards to flexmpi::UllCalibrator. Any C++ failure
// becomes a ULL_MPI_ERR_* code with its message kept; no exception crosses
// extern "C".
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string>

#include "capi/guarded.hpp"
#include "core/runtime.hpp"
#include "core/ull_calibrator.hpp"
#include "flexmpi/error.hpp"
#include "ull_calibrate.h"

namespace {

using flexmpi::capi::guarded;

// The calibrator lives in the runtime, so it ends with MPI_Finalize.
flexmpi::UllCalibrator& calibrator() {
  auto& slot = flexmpi::Runtime::get().ull_calibrator();
  if (!slot) {
    throw flexmpi::Error(flexmpi::Errc::bad_state,
                         "the ULL library is not started: call ULL_MPI_init_calibratelib first");
  }
  return *slot;
}

// Iteration 0: allocates the arrays the caller left NULL, with the
// homogeneous partition of the paper's first iteration.
void allocate_if_null(int** counts, int** displs, int nprocs, int size_object, int size_problem) {
  if (*counts != nullptr && *displs != nullptr) return;
  if (*counts != nullptr || *displs != nullptr) {
    throw flexmpi::Error(flexmpi::Errc::invalid_argument,
                         "one of *counts and *displs is NULL: give both arrays, or neither");
  }
  if (size_object < 1 || size_problem < 0) {
    throw flexmpi::Error(
        flexmpi::Errc::invalid_argument,
        "size_object must be >= 1 and size_problem >= 0 to allocate counts/displs");
  }
  auto* c = static_cast<int*>(std::malloc(sizeof(int) * static_cast<std::size_t>(nprocs)));
  auto* d = static_cast<int*>(std::malloc(sizeof(int) * static_cast<std::size_t>(nprocs)));
  if (c == nullptr || d == nullptr) {
    std::free(c);
    std::free(d);
    throw std::bad_alloc();
  }
  flexmpi::ull_block_partition({c, static_cast<std::size_t>(nprocs)},
                               {d, static_cast<std::size_t>(nprocs)}, size_object, size_problem);
  *counts = c;
  *displs = d;
}

}  // namespace

extern "C" {

int ULL_MPI_init_calibratelib(void) {
  return guarded([] {
    flexmpi::Runtime& runtime = flexmpi::Runtime::get();  // throws bad_state before MPI_Init
    if (runtime.ull_calibrator()) {
      throw flexmpi::Error(flexmpi::Errc::bad_state, "the ULL library is already started");
    }
    runtime.ull_calibrator() = std::make_unique<flexmpi::UllCalibrator>(runtime);
    return ULL_MPI_SUCCESS;
  });
}

int ULL_MPI_shutdown_calibratelib(void) {
  return guarded([] {
    auto& slot = flexmpi::Runtime::get().ull_calibrator();
    if (!slot) throw flexmpi::Error(flexmpi::Errc::bad_state, "the ULL library is not started");
    slot.reset();
    return ULL_MPI_SUCCESS;
  });
}

int ULL_MPI_calibrate(ULL_MPI_Section section_argument, int iteration, int** counts, int** displs,
                      int threshold, int size_object, int size_problem) {
  // A C caller may pass any int; reading it as the C++ enum would be
  // undefined for values outside it, so read its bytes as an int.
  int section = 0;
  static_assert(sizeof section == sizeof section_argument);
  std::memcpy(&section, &section_argument, sizeof section);
  return guarded([&] {
    flexmpi::UllCalibrator& library = calibrator();
    const auto nprocs = static_cast<std::size_t>(flexmpi::Runtime::get().size());
    if (section == ULL_MPI_INIT) {
      if (counts == nullptr || displs == nullptr) {
        throw flexmpi::Error(
            flexmpi::Errc::invalid_argument,
            "counts or displs is NULL: pass the addresses of the arrays (&counts, &displs)");
      }
      if (iteration == 0) {
        allocate_if_null(counts, displs, static_cast<int>(nprocs), size_object, size_problem);
        flexmpi::check_ull_partition({*counts, nprocs}, {*displs, nprocs}, size_object,
                                     size_problem);
      }
      library.begin(iteration);
      return ULL_MPI_SUCCESS;
    }
    if (section != ULL_MPI_END) {
      throw flexmpi::Error(
          flexmpi::Errc::invalid_argument,
          "section=" + std::to_string(section) + ": expected ULL_MPI_INIT or ULL_MPI_END");
    }
    // END is collective: a NULL array on this process must not leave the
    // others waiting, so it goes to the calibrator as an empty span.
    std::span<int> c, d;
    if (counts != nullptr && displs != nullptr && *counts != nullptr && *displs != nullptr) {
      c = {*counts, nprocs};
      d = {*displs, nprocs};
    }
    library.end(iteration, c, d, threshold, size_object, size_problem);
    return ULL_MPI_SUCCESS;
  });
}

const char* ULL_MPI_Last_error_message(void) { return flexmpi::capi::last_error().c_str(); }

}  // extern "C"
