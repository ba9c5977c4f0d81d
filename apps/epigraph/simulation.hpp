// One time step of flexmpi-epigraph on a block of individuals (thesis Alg.
// 11, lines 4 and 6), without MPI: the block's rows, its place in the
// decomposition, and the infections it owes other blocks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "epidemic_model.hpp"

namespace epigraph {

/// The structures registered with flexmpi: it reallocates them when rows
/// move and updates these pointers (flexmpi.h), so they are malloc'ed and
/// only ever read through this struct.
struct Population {
  int* row_start = nullptr;               ///< CSR row pointers of the local rows, from 0
  int* contacts = nullptr;                ///< global indices of the contacts
  std::uint8_t* contact_kinds = nullptr;  ///< ContactKind of each contact
  std::uint8_t* state = nullptr;          ///< State of each individual
  int* minutes_left = nullptr;            ///< in the current state, if it is timed
  double* interval_work = nullptr;        ///< work since the last sampling interval, or null
};

/// The cost of updating an individual next to that of trying a contact:
/// the unit of the weight model's work. Measured on the 2-vCPU machine of
/// docs/results.md (class medium, one process): an update takes 1.9 ns,
/// a contact tried 9-17 ns (the transmission draw and the contact's state).
/// Counting both as 1 made the rows of the quiet districts look 5-9 times
/// heavier than they are, so the balancer's speeds (work per second) changed
/// with the mix of rows each process held.
inline constexpr double kUpdateCost = 0.15;

/// The operations of one step on a block: individuals updated and contacts tried.
struct StepWork {
  long long updates = 0;
  long long contacts = 0;
  StepWork& operator+=(const StepWork& other) {
    updates += other.updates;
    contacts += other.contacts;
    return *this;
  }
  /// Both counted alike: the work column of the epidemic curve (Fig. 6.1).
  [[nodiscard]] long long operations() const { return updates + contacts; }
  /// In kUpdateCost units: what XMPI_Set_work and the per-row weights are in.
  [[nodiscard]] double cost() const {
    return static_cast<double>(contacts) + kUpdateCost * static_cast<double>(updates);
  }
};

/// Frees every buffer of `people` (std::free).
void free_population(Population& people);

/// Alg. 11 line 4 (UpdateStatus): the timed states (latent, infectious,
/// hospitalized) of the `count` individuals from `displ` run out and move on.
void update_status(Population& people, int count, int displ, const EpidemicModel& model,
                   long long step);

/// Makes local individual `local` (global index `individual`) latent if it is susceptible.
void infect(Population& people, int local, int individual, const EpidemicModel& model,
            long long step);

/// Infects `individual`: at once if it is one of the `count` individuals
/// from `displ`, else by appending it to outgoing[owner], the owner found in
/// `displs` (every block's first row).
void deliver_infection(Population& people, int count, int displ, const std::vector<int>& displs,
                       const EpidemicModel& model, long long step, int individual,
                       std::vector<std::vector<int>>& outgoing);

/// Alg. 11 line 6 (ComputeSpread): every infectious individual tries each of
/// its contacts. Contacts in this block are infected at once (becoming latent
/// does not change who is infectious in this step); the others are appended
/// to outgoing[owner], the owner found in `displs` (every block's first row).
/// The work of an individual is its update plus, if it is infectious, its
/// degree in contacts tried: its cost is added to people.interval_work (if
/// not null) and the block's total is returned.
StepWork compute_spread(Population& people, int count, int displ, const std::vector<int>& displs,
                        const EpidemicModel& model, long long step,
                        std::vector<std::vector<int>>& outgoing);

/// The weight model's forecast (`--row-weight next`): each individual's mean
/// work per step over the next `horizon_minutes`, read from the timers of its
/// state, in StepWork::cost units. An infectious individual costs its update
/// and its degree while it stays infectious; a latent one from the minute it
/// becomes infectious (for the mean infectious period at most, its own is
/// drawn only then); everyone else costs the update. A susceptible individual infected within the
/// horizon stays latent for at least half the mean latent period (0.95 days), so over a horizon of
/// a day the forecast misses almost nothing; the work of the last interval
/// (`--row-weight last`) instead misses every latent individual that turns
/// infectious, which is where the epidemic grows (docs/results.md).
void forecast_work(const Population& people, int count, int horizon_minutes,
                   const EpidemicParameters& parameters, std::span<double> weight);

}  // namespace epigraph
