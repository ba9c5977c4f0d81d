// The ULL calibrating API (include/ull_calibrate.h): checks what C can get
// wrong (null pointers, the section value), manages the C arrays of
// iteration 0 and forwards to flexmpi::UllCalibrator. Any C++ failure
// becomes a ULL_MPI_ERR_* code with its message kept; no exception crosses
// extern "C".
#include <cstdlib>
#include <memory>
#include <new>
#include <span>
#include <string>

#include "balancing/ull/ull_calibrator.hpp"
#include "core/runtime.hpp"
#include "flexmpi/error.hpp"
#include "ull_calibrate.h"

namespace {

thread_local std::string last_error;

struct Library {
  flexmpi::Runtime* runtime = nullptr;  // the runtime the calibrator was started on
  std::unique_ptr<flexmpi::UllCalibrator> calibrator;
};
Library library;

template <class Body>
int guarded(Body&& body) noexcept {
  try {
    last_error.clear();
    return body();
  } catch (const flexmpi::Error& e) {
    last_error = e.what();
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return ULL_MPI_ERR_NOMEM;
  } catch (const std::exception& e) {
    last_error = e.what();
    return ULL_MPI_ERR_INTERNAL;
  } catch (...) {
    last_error = "unknown failure";
    return ULL_MPI_ERR_INTERNAL;
  }
}

flexmpi::UllCalibrator& calibrator() {
  if (!library.calibrator) {
    throw flexmpi::Error(flexmpi::Errc::bad_state,
                         "the ULL library is not started: call ULL_MPI_init_calibratelib first");
  }
  if (flexmpi::Runtime::instance() != library.runtime) {
    throw flexmpi::Error(flexmpi::Errc::bad_state,
                         "MPI was finalised since ULL_MPI_init_calibratelib");
  }
  return *library.calibrator;
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
    if (library.calibrator && library.runtime == &runtime) {
      throw flexmpi::Error(flexmpi::Errc::bad_state, "the ULL library is already started");
    }
    library.calibrator = std::make_unique<flexmpi::UllCalibrator>(runtime);
    library.runtime = &runtime;
    return ULL_MPI_SUCCESS;
  });
}

int ULL_MPI_shutdown_calibratelib(void) {
  return guarded([] {
    if (!library.calibrator) {
      throw flexmpi::Error(flexmpi::Errc::bad_state, "the ULL library is not started");
    }
    library.calibrator.reset();
    library.runtime = nullptr;
    return ULL_MPI_SUCCESS;
  });
}

int ULL_MPI_calibrate(ULL_MPI_Section section, int iteration, int** counts, int** displs,
                      int threshold, int size_object, int size_problem) {
  return guarded([&] {
    flexmpi::UllCalibrator& ull = calibrator();
    const auto nprocs = static_cast<std::size_t>(library.runtime->size());
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
      ull.begin(iteration);
      return ULL_MPI_SUCCESS;
    }
    if (section != ULL_MPI_END) {
      throw flexmpi::Error(flexmpi::Errc::invalid_argument,
                           "section=" + std::to_string(static_cast<int>(section)) +
                               ": expected ULL_MPI_INIT or ULL_MPI_END");
    }
    // END is collective: a NULL array on this process must not leave the
    // others waiting, so it goes to the calibrator as an empty span.
    std::span<int> c, d;
    if (counts != nullptr && displs != nullptr && *counts != nullptr && *displs != nullptr) {
      c = {*counts, nprocs};
      d = {*displs, nprocs};
    }
    ull.end(iteration, c, d, threshold, size_object, size_problem);
    return ULL_MPI_SUCCESS;
  });
}

const char* ULL_MPI_Last_error_message(void) { return last_error.c_str(); }

}  // extern "C"
