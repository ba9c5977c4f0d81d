/*
 * ull_calibrate.h - the ULL calibrating library's API on flexmpi
 * (Galindo, Almeida and Badia-Contelles, "Dynamic Load Balancing on Dedicated
 * Heterogeneous Systems", EuroPVM/MPI 2008, sec. 3-4).
 *
 * Three calls balance an iterative SPMD program whose processes hold the
 * data they need (replicated data) and exchange their results with
 * MPI_Allgatherv(..., counts, displs, ...):
 *
 *   ULL_MPI_init_calibratelib();
 *   while (it < maxit) {
 *     ULL_MPI_calibrate(ULL_MPI_INIT, it, &counts, &displs, threshold, 1, n);
 *     ... compute rows displs[me] .. displs[me] + counts[me] - 1 ...
 *     ULL_MPI_calibrate(ULL_MPI_END, it, &counts, &displs, threshold, 1, n);
 *     MPI_Allgatherv(&x[displs[me]], counts[me], MPI_DOUBLE, x, counts, displs, ...);
 *     it++;
 *   }
 *   ULL_MPI_shutdown_calibratelib();
 *
 * At ULL_MPI_END every process shares the time T_i of its section; when
 * max(T) - min(T) > threshold (microseconds) all of them compute the same new
 * partition, RP_i = units_i / T_i and units_i = size_problem * RP_i / sum RP
 * (truncated, the last process taking the remainder), and update counts and
 * displs in place. The library is part of libflexmpi: MPI_Init starts it and
 * FLEXMPI_EMULATE_SPEED slows ranks down inside the section.
 * Every function returns ULL_MPI_SUCCESS (0) or a negative code (the values
 * of flexmpi.h's XMPI_ERR_*); nothing throws or aborts.
 */
#ifndef ULL_CALIBRATE_H
#define ULL_CALIBRATE_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Where ULL_MPI_calibrate is called: the beginning or the end of the section to balance. */
typedef enum { ULL_MPI_INIT = 0, ULL_MPI_END = 1 } ULL_MPI_Section;

/** Return codes (equal to XMPI_SUCCESS and XMPI_ERR_* of flexmpi.h). */
enum {
  ULL_MPI_SUCCESS = 0,
  ULL_MPI_ERR_ARG = -1,     /**< an argument is invalid or counts/displs are inconsistent */
  ULL_MPI_ERR_STATE = -2,   /**< not initialised, or INIT/END out of order */
  ULL_MPI_ERR_MPI = -5,     /**< an MPI call failed */
  ULL_MPI_ERR_NOMEM = -6,   /**< counts/displs could not be allocated */
  ULL_MPI_ERR_INTERNAL = -8 /**< a bug: please report it */
};

/** Starts the library. Call after MPI_Init, on every process. */
int ULL_MPI_init_calibratelib(void);

/** Stops the library (before MPI_Finalize). counts/displs stay the caller's. */
int ULL_MPI_shutdown_calibratelib(void);

/**
 * Balances the section of code between the ULL_MPI_INIT and the ULL_MPI_END
 * call of the same iteration. Every process calls it with the same arguments.
 *
 * section    ULL_MPI_INIT (start timing; repeated calls for the same
 *            iteration are ignored, as in the paper's Listing 1.3, which
 *            calls it for every row) or ULL_MPI_END (collective: stop
 *            timing, share the times, rebalance if needed).
 * iteration  the iteration of the loop, >= 0. Iteration 0 is treated
 *            specially: ULL_MPI_INIT restarts the calibration and, if
 *            *counts or *displs is NULL, allocates them (malloc, one int per
 *            process; the caller frees them) with the homogeneous partition.
 * counts     address of an array of one count per process: the elements each
 *            process computes and contributes to the MPI_Allgatherv.
 * displs     address of an array of one displacement per process (elements).
 * threshold  microseconds: balance when max(T) - min(T) > threshold.
 * size_object  elements of the communication per unit of work (1 for a
 *            vector of doubles sent as MPI_DOUBLE; n for rows of an n-column
 *            matrix): counts and displs stay multiples of it.
 * size_problem units of work of the whole problem (rows): the counts add up
 *            to size_problem * size_object.
 */
int ULL_MPI_calibrate(ULL_MPI_Section section, int iteration, int** counts, int** displs,
                      int threshold, int size_object, int size_problem);

/** Detail of the last failed call on this thread ("" if none). */
const char* ULL_MPI_Last_error_message(void);

#ifdef __cplusplus
}
#endif

#endif /* ULL_CALIBRATE_H */
