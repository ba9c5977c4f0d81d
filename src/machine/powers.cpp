#include "machine/powers.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace flexmpi::machine {
namespace {

double sum(std::span<const double> values) {
  return std::accumulate(values.begin(), values.end(), 0.0);
}

/// x / total, or an even share when the total is 0.
double share(double value, double total, std::size_t count) {
  return total > 0 ? value / total : 1.0 / static_cast<double>(count);
}

double weight_of(const NodeMeasures& node, CommunicationWeight weight) {
  switch (weight.mode) {
    case CommunicationWeightMode::ignored:
      return 0.0;
    case CommunicationWeightMode::fixed:
      return weight.fixed;
    case CommunicationWeightMode::from_caf:
      return caf_communication_weight(node.caf);
  }
  return 0.0;
}

/// Whether the communication term can be used among these siblings: every c_n
/// known and not all zero.
bool communication_known(const std::vector<NodeMeasures>& measures, const std::vector<int>& group) {
  double total = 0;
  for (int node : group) {
    if (!measures[node].communication) return false;
    total += *measures[node].communication;
  }
  return total > 0;
}

}  // namespace

double exploitable_idle_per_process(std::span<const double> utilizations,
                                    std::span<const double> cpu_idle) {
  const auto k = static_cast<double>(utilizations.size());
  if (k == 0) return 0.0;
  // k_n processes can use at most k_n CPUs at a time: k_n − Σ u of idle time is all they can take.
  return std::max(0.0, std::min(k - sum(utilizations), sum(cpu_idle))) / k;
}

double process_availability(std::span<const double> utilizations,
                            std::span<const double> cpu_idle) {
  if (utilizations.empty()) return 0.0;
  const double mean_utilization = sum(utilizations) / static_cast<double>(utilizations.size());
  return mean_utilization + exploitable_idle_per_process(utilizations, cpu_idle);
}

double process_processing_power(double mflops, std::span<const double> utilizations,
                                std::span<const double> cpu_idle) {
  if (utilizations.empty()) return 0.0;
  return mflops * process_availability(utilizations, cpu_idle);
}

double node_processing_power(double mflops, std::span<const double> utilizations,
                             std::span<const double> cpu_idle) {
  return static_cast<double>(utilizations.size()) *
         process_processing_power(mflops, utilizations, cpu_idle);
}

double early_processing_power(double dynamic_weight, double utilization, double idle,
                              double relative_rating) {
  return dynamic_weight * (utilization + idle) + (1.0 - dynamic_weight) * relative_rating;
}

double growing_dynamic_weight(double monitored_seconds, double seconds_to_bound, double bound) {
  if (seconds_to_bound <= 0) return bound;
  return std::clamp(bound * monitored_seconds / seconds_to_bound, 0.0, bound);
}

std::optional<double> communication_power(CommunicationPowerForm form,
                                          std::span<const InterfaceActivity> interfaces) {
  double total = 0;
  int counted = 0;
  for (const InterfaceActivity& interface : interfaces) {
    const bool uses_speed = form != CommunicationPowerForm::inverse_mean_caf;
    if (uses_speed ? interface.capacity <= 0 : interface.caf() <= 0) continue;
    ++counted;
    switch (form) {
      case CommunicationPowerForm::log_speed_over_caf:  // s_i in MB/s
        total += std::log(interface.capacity / 1e6) / (1.0 + interface.caf());
        break;
      case CommunicationPowerForm::inverse_mean_caf:
        total += interface.caf();
        break;
      case CommunicationPowerForm::available_bandwidth:  // A_i(T) = C_i − (λ_i + μ_i)
        total += std::max(0.0, interface.capacity - interface.caf());
        break;
    }
  }
  if (counted == 0) return std::nullopt;
  switch (form) {
    case CommunicationPowerForm::log_speed_over_caf:
      return total / counted;
    case CommunicationPowerForm::inverse_mean_caf:
      return counted / total;
    case CommunicationPowerForm::available_bandwidth:
      return total;
  }
  return std::nullopt;
}

double mean_caf(std::span<const InterfaceActivity> interfaces) {
  double total = 0;
  int active = 0;
  for (const InterfaceActivity& interface : interfaces) {
    if (interface.caf() <= 0) continue;
    total += interface.caf();
    ++active;
  }
  return active == 0 ? 0.0 : total / active;
}

double caf_communication_weight(double caf) { return 1.0 - 1.0 / (1.0 + caf); }

void sum_measures_up_the_tree(const MachineModel& model, std::vector<NodeMeasures>& measures) {
  // Postfix numbering: every child is numbered before its parent.
  for (int number = 0; number < static_cast<int>(model.nodes().size()); ++number) {
    const MachineNode& node = model.node(number);
    if (node.children.empty()) continue;
    NodeMeasures& parent = measures[number];
    parent = {.processing = 0, .communication = 0.0, .caf = 0};
    for (int child : node.children) {
      parent.processing += measures[child].processing;
      parent.caf += measures[child].caf;
      if (!measures[child].communication) parent.communication.reset();
      if (parent.communication) *parent.communication += *measures[child].communication;
    }
  }
}

std::vector<double> node_powers(const MachineModel& model,
                                const std::vector<NodeMeasures>& measures,
                                CommunicationWeight weight) {
  std::vector<double> power(model.nodes().size(), 0.0);
  power[model.root()] = 1.0;
  // Descending numbers visit every parent before its children.
  for (int parent = model.root(); parent >= 0; --parent) {
    const std::vector<int>& siblings = model.node(parent).children;
    if (siblings.empty()) continue;
    double processing_total = 0;
    double communication_total = 0;
    const bool with_communication = communication_known(measures, siblings);
    for (int child : siblings) {
      processing_total += measures[child].processing;
      if (with_communication) communication_total += *measures[child].communication;
    }
    for (int child : siblings) {
      const double processing =
          share(measures[child].processing, processing_total, siblings.size());
      const double communication =
          with_communication ? *measures[child].communication / communication_total : processing;
      const double w = weight_of(measures[child], weight);
      power[child] = power[parent] * (w * communication + (1.0 - w) * processing);
    }
  }
  return power;
}

}  // namespace flexmpi::machine
