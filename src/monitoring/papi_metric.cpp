// PAPI hardware-counter metric (thesis 4.2.1). Built only when PAPI is found.
//
// Counters of the same event differ between processor types, so at start-up
// the backend runs a small microbenchmark with a known number of floating
// point operations and keeps the ratio known/counted as a calibration factor
// for FLOP events (thesis 4.2.1, "initial calibration of the counters").
#include <papi.h>

#include <algorithm>
#include <cmath>

#include "flexmpi/error.hpp"
#include "monitoring/metric.hpp"

namespace flexmpi {
namespace {

void check_papi(int code, const std::string& what) {
  if (code == PAPI_OK) return;
  const Errc errc = (code == PAPI_ENOEVNT || code == PAPI_ECNFLCT || code == PAPI_ENOCMP ||
                     code == PAPI_ECMP || code == PAPI_ENOSUPP || code == PAPI_EPERM)
                        ? Errc::event_unavailable
                        : Errc::unsupported;
  throw Error(errc, what + ": " + PAPI_strerror(code));
}

bool is_flop_event(const std::string& event) {
  return event == "PAPI_FP_OPS" || event == "PAPI_DP_OPS" || event == "PAPI_SP_OPS" ||
         event == "PAPI_FP_INS";
}

// Exactly 2 * iterations floating point operations (one multiply, one add);
// volatile keeps the compiler from folding or vectorising the loop.
constexpr long long kCalibrationIterations = 1'000'000;
double calibration_kernel() {
  volatile double x = 1.0;
  const double a = 0.999999;
  const double b = 1e-7;
  for (long long i = 0; i < kCalibrationIterations; ++i) x = x * a + b;
  return x;
}

class PapiMetric final : public MetricBackend {
 public:
  explicit PapiMetric(std::vector<std::string> events) : events_(std::move(events)) {
    const int version = PAPI_library_init(PAPI_VER_CURRENT);
    if (version != PAPI_VER_CURRENT) {
      throw Error(Errc::unsupported,
                  "PAPI_library_init failed (" +
                      std::string(version > 0 ? "version mismatch" : PAPI_strerror(version)) + ")");
    }
    if (PAPI_num_components() <= 0 || PAPI_num_hwctrs() <= 0) {
      throw Error(Errc::event_unavailable, "this machine exposes no hardware counters to PAPI");
    }
    build_event_set();
    calibrate();
  }

  ~PapiMetric() override {
    if (event_set_ != PAPI_NULL) {
      long long ignored[16];
      if (running_) PAPI_stop(event_set_, ignored);
      PAPI_cleanup_eventset(event_set_);
      PAPI_destroy_eventset(&event_set_);
    }
  }

  std::string_view name() const override { return "papi"; }
  const std::vector<std::string>& events() const override { return events_; }

  std::size_t require(const std::string& event) override {
    const auto found = std::find(events_.begin(), events_.end(), event);
    if (found != events_.end()) return static_cast<std::size_t>(found - events_.begin());
    events_.push_back(event);
    try {
      build_event_set();
    } catch (const Error&) {
      events_.pop_back();
      build_event_set();
      throw;
    }
    return events_.size() - 1;
  }

  void start() override {
    check_papi(PAPI_start(event_set_), "PAPI_start");
    running_ = true;
  }

  void stop(std::span<long long> counts) override {
    check_papi(PAPI_stop(event_set_, counts.data()), "PAPI_stop");
    running_ = false;
    if (!counts.empty() && is_flop_event(events_.front())) {
      counts[0] = std::llround(static_cast<double>(counts[0]) * flop_calibration_);
    }
  }

 private:
  void build_event_set() {
    if (event_set_ != PAPI_NULL) {
      PAPI_cleanup_eventset(event_set_);
      PAPI_destroy_eventset(&event_set_);
    }
    check_papi(PAPI_create_eventset(&event_set_), "PAPI_create_eventset");
    for (const std::string& event : events_) {
      check_papi(PAPI_add_named_event(event_set_, event.c_str()), "event '" + event + "'");
    }
  }

  void calibrate() {
    if (!is_flop_event(events_.front())) return;
    std::vector<long long> counts(events_.size());
    start();
    calibration_kernel();
    stop(counts);
    if (counts[0] > 0) {
      flop_calibration_ = 2.0 * kCalibrationIterations / static_cast<double>(counts[0]);
    }
  }

  std::vector<std::string> events_;
  int event_set_ = PAPI_NULL;
  bool running_ = false;
  double flop_calibration_ = 1.0;
};

}  // namespace

std::unique_ptr<MetricBackend> make_papi_metric(const MetricContext& context) {
  return std::make_unique<PapiMetric>(context.events);
}

}  // namespace flexmpi
