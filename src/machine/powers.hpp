// Node powers of DRUM (thesis 3.1.2): the share of the load each node of the
// machine model should get, from processing power (3.1.2.1), communication
// power (3.1.2.2) and a communication weight. Pure functions, one per formula.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "machine/machine_model.hpp"
#include "machine/proc_readers.hpp"

namespace flexmpi::machine {

// ---- processing power (3.1.2.1) -------------------------------------------------

/// ī_n = min(k_n − Σ_j u_{n,j}, Σ_t i_t) / k_n: the idle time each of the k_n
/// processes on a node can exploit; `utilizations` holds u_{n,j} of the node's
/// processes, `cpu_idle` the idle fraction i_t of each of its m CPUs.
double exploitable_idle_per_process(std::span<const double> utilizations,
                                    std::span<const double> cpu_idle);

/// ū_n + ī_n: the share of a CPU every process of node n can use (0 without
/// a process), the factor of the rating in process_processing_power.
double process_availability(std::span<const double> utilizations, std::span<const double> cpu_idle);

/// p_{n,j} = b_n (ū_n + ī_n), equal for every process j of node n (the thesis
/// assumes the scheduler shares the CPUs evenly); b_n is the MFLOPS rating.
double process_processing_power(double mflops, std::span<const double> utilizations,
                                std::span<const double> cpu_idle);

/// p_n = Σ_j p_{n,j} = k_n p_{n,1}.
double node_processing_power(double mflops, std::span<const double> utilizations,
                             std::span<const double> cpu_idle);

/// The early form: p_n = w_dyn (u_n + i_n) + (1 − w_dyn) b_n. `relative_rating`
/// is b_n divided by the largest rating of the model, so that both terms are
/// fractions (the thesis leaves the units of b_n against u + i open).
double early_processing_power(double dynamic_weight, double utilization, double idle,
                              double relative_rating);

/// w_dyn of the early form: 0 before any monitoring, growing linearly with the
/// monitored time and bounded by `bound` so that the benchmark keeps a
/// non-negligible share (3.1.2.1).
double growing_dynamic_weight(double monitored_seconds, double seconds_to_bound, double bound);

// ---- communication power (3.1.2.2) ----------------------------------------------

/// The three formulations of the thesis, in the order it gives them.
enum class CommunicationPowerForm {
  log_speed_over_caf,   ///< c_n = (1/k) Σ_i log(s_i) / (1 + CAF_i), s_i in MB/s
  inverse_mean_caf,     ///< c_n = 1 / ((1/s) Σ_i CAF_i)
  available_bandwidth,  ///< c_n = Σ_i (C_i − (λ_i + μ_i)), the most recent one
};

/// c_n of a node from its interfaces (loop-back already left out). The forms
/// with a speed (log s_i, C_i) use the interfaces of known speed, idle ones
/// included (an idle link is all available bandwidth); 1/mean CAF skips idle
/// interfaces (CAF = 0), as the thesis does in practice for it. nullopt when
/// no interface qualifies (for 1/mean CAF: no traffic at all, an infinite power).
std::optional<double> communication_power(CommunicationPowerForm form,
                                          std::span<const InterfaceActivity> interfaces);

/// CAF_n: the mean CAF over the node's interfaces that carried traffic (0 if none).
double mean_caf(std::span<const InterfaceActivity> interfaces);

/// w_n^comm = 1 − 1 / (1 + CAF_n): the communication weight of the first
/// formulation, growing with the traffic at the node.
double caf_communication_weight(double caf);

// ---- node power (3.1.2) -----------------------------------------------------------

/// What the power of one node is computed from. For a leaf: its measures;
/// internal nodes get the sums of their children's (3.1.2.1, 3.1.2.2).
struct NodeMeasures {
  double processing = 0;                ///< p_n
  std::optional<double> communication;  ///< c_n; nullopt when it could not be measured
  double caf = 0;                       ///< CAF_n (for the CAF-based weight)
};

/// USE_NETWORK_POWERS of Table A.1 / A.1: how w_n^comm is chosen.
enum class CommunicationWeightMode {
  ignored = 0,   ///< w^comm = 0: processing power only
  fixed = 1,     ///< the same fixed weight for every node
  from_caf = 2,  ///< w_n^comm = 1 − 1/(1 + CAF_n)
};

struct CommunicationWeight {
  CommunicationWeightMode mode = CommunicationWeightMode::fixed;
  double fixed = 0;  ///< the weight in mode `fixed`, in [0, 1]
};

/// Fills the measures of the internal nodes: each is the sum of its
/// children's. c_n is nullopt if any child's is (the thesis: "for
/// consistency", internal nodes get their children's sums when one cannot be probed).
void sum_measures_up_the_tree(const MachineModel& model, std::vector<NodeMeasures>& measures);

/// power_n = pp_n (w_n^comm c_n / Σ c_j + w_n^cpu p_n / Σ p_j), root power 1.
///
/// Reading of an ambiguity: the thesis writes the sums over the whole level
/// L_i, but with that the children of one parent do not add up to the
/// parent's power (a parent with few, slow children would lose share to the
/// rest of the level twice). The sums here run over the siblings (the
/// children of the same parent), so the children of every node split exactly
/// its power (with equal weights) and the powers of the leaves sum to 1. On a
/// flat model (one switch over every host) siblings and level coincide.
///
/// When a sibling's c_n is unknown or every c_n of the group is 0, the
/// communication term of that group falls back to the processing term; when
/// every p_n of a group is 0 the group splits its parent's power evenly.
/// `measures` is indexed by node number and must hold every node (see
/// sum_measures_up_the_tree); returns the power of every node by number.
std::vector<double> node_powers(const MachineModel& model,
                                const std::vector<NodeMeasures>& measures,
                                CommunicationWeight weight);

}  // namespace flexmpi::machine
