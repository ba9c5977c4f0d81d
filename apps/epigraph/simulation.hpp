// One time step of flexmpi-epigraph on a block of individuals (thesis Alg.
// 11, lines 4 and 6), without MPI: the block's rows, its place in the
// decomposition, and the infections it owes other blocks.
#pragma once

#include <cstdint>
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

/// Frees every buffer of `people` (std::free).
void free_population(Population& people);

/// Alg. 11 line 4 (UpdateStatus): the timed states (latent, infectious,
/// hospitalized) of the `count` individuals from `displ` run out and move on.
void update_status(Population& people, int count, int displ, const EpidemicModel& model,
                   long long step);

/// Makes local individual `local` (global index `individual`) latent if it is susceptible.
void infect(Population& people, int local, int individual, const EpidemicModel& model,
            long long step);

/// Alg. 11 line 6 (ComputeSpread): every infectious individual tries each of
/// its contacts. Contacts in this block are infected at once (becoming latent
/// does not change who is infectious in this step); the others are appended
/// to outgoing[owner], the owner found in `displs` (every block's first row).
/// The work of an individual is 1 (its update) plus, if it is infectious, its
/// degree: it is added to people.interval_work (if not null) and the block's
/// total is returned (the weight of XMPI_LB_WEIGHT).
long long compute_spread(Population& people, int count, int displ, const std::vector<int>& displs,
                         const EpidemicModel& model, long long step,
                         std::vector<std::vector<int>>& outgoing);

}  // namespace epigraph
