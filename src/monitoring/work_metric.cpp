// Work-unit metric (docs/reference/behaviour.md, Speed metric): where there are no hardware
// counters the work of an iteration is the work of the partition (rows, nonzeros or weight sum, in
// the units of the workload model), so speed = work / time.
#include <cmath>

#include "flexmpi/error.hpp"
#include "monitoring/metric.hpp"

namespace flexmpi {
namespace {

class WorkMetric final : public MetricBackend {
 public:
  explicit WorkMetric(std::function<double()> current_work)
      : current_work_(std::move(current_work)) {}

  std::string_view name() const override { return "work"; }
  const std::vector<std::string>& events() const override { return events_; }

  std::size_t require(const std::string& event) override {
    if (event != events_.front()) {
      throw Error(Errc::event_unavailable,
                  "event '" + event +
                      "' is not measured: the work metric counts only WORK (this build or "
                      "machine has no hardware counters for it; see FLEXMPI_METRIC)");
    }
    return 0;
  }

  void start() override {}

  void stop(std::span<long long> counts) override {
    last_work_ = current_work_();
    counts[0] = std::llround(last_work_);
  }

  double metric_value(std::span<const long long>) const override { return last_work_; }

 private:
  std::function<double()> current_work_;
  double last_work_ = 0.0;
  std::vector<std::string> events_{"WORK"};
};

}  // namespace

std::unique_ptr<MetricBackend> make_work_metric(const MetricContext& context) {
  return std::make_unique<WorkMetric>(context.current_work);
}

}  // namespace flexmpi
